// Tests of ops/creation.hpp: the factories.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <list>
#include <type_traits>
#include <vector>

#include <dimtensor/ops/creation.hpp>

namespace creation_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Points);
DIMTENSOR_DIM(Hidden);
}  // namespace creation_test

namespace dt = dimtensor;
using dt::index_t;
using namespace creation_test;

TEST_CASE("creation: zeros, ones, full, empty", "[ops][creation]") {
  auto z = dt::zeros<float>(Batch(2), Hidden(3));
  static_assert(std::is_same_v<decltype(z), dt::tensor<float, Batch, Hidden>>);
  REQUIRE(z.extents() == std::array<index_t, 2>{2, 3});
  for (index_t i = 0; i < z.size(); ++i) CHECK(z.data()[i] == 0.0f);

  auto o = dt::ones<std::int64_t>(Hidden::fixed<4>{}, Batch(2));
  static_assert(std::is_same_v<decltype(o), dt::tensor<std::int64_t, Hidden::fixed<4>, Batch>>);
  for (index_t i = 0; i < o.size(); ++i) CHECK(o.data()[i] == 1);

  auto f = dt::full(0.25, Batch(3));  // element type from the value
  static_assert(std::is_same_v<decltype(f), dt::tensor<double, Batch>>);
  CHECK(f(Batch(2)) == 0.25);
  auto fb = dt::full(true, Batch(2));
  CHECK(fb(Batch(1)) == true);

  auto s = dt::full<float>(7.0f);  // rank 0
  CHECK(s.item() == 7.0f);

  auto e = dt::empty<double>(Batch(4), Hidden(0));
  CHECK(e.size() == 0);
  auto e2 = dt::empty<float>(Batch(5));
  CHECK(e2.size() == 5);
  CHECK(e2.is_contiguous());

  REQUIRE_THROWS_AS(dt::zeros<float>(Batch(-1)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::ones<float>(Batch(2), Hidden(-3)), Catch::Contains("negative extent -3 for dimension Hidden"));
}

TEST_CASE("creation: arange(extent)", "[ops][creation]") {
  auto a = dt::arange<float>(Points(10));
  REQUIRE(a.size() == 10);
  for (index_t i = 0; i < 10; ++i) CHECK(a(Points(i)) == static_cast<float>(i));
  auto b = dt::arange<std::int32_t>(Hidden::fixed<3>{});
  static_assert(std::is_same_v<decltype(b), dt::tensor<std::int32_t, Hidden::fixed<3>>>);
  CHECK(b(Hidden(2)) == 2);
  CHECK(dt::arange<double>(Points(0)).size() == 0);
}

TEST_CASE("creation: arange(start, stop, step) counts like PyTorch", "[ops][creation]") {
  // d2l: torch.arange(0, 5, 0.1) has 50 elements.
  auto x = dt::arange<float, Points>(0, 5, 0.1);
  static_assert(std::is_same_v<decltype(x), dt::tensor<float, Points>>);
  REQUIRE(x.size() == 50);
  for (index_t i = 0; i < 50; ++i) CHECK(x(Points(i)) == static_cast<float>(0.1 * static_cast<double>(i)));
  CHECK(dt::arange<float, Points>(0, 1, 0.1).size() == 10);
  CHECK(dt::arange<double, Points>(1, 2.5, 0.5).size() == 3);
  CHECK(dt::arange<double, Points>(0, 5).size() == 5);
  auto down = dt::arange<std::int32_t, Points>(5, 0, -1);
  REQUIRE(down.size() == 5);
  CHECK(down(Points(0)) == 5);
  CHECK(down(Points(4)) == 1);
  auto neg = dt::arange<double, Points>(-1, 1, 0.5);
  REQUIRE(neg.size() == 4);
  CHECK(neg(Points(3)) == 0.5);
  CHECK(dt::arange<float, Points>(3, 3).size() == 0);
  CHECK(dt::arange<float, Points>(3, 1).size() == 0);  // wrong direction: empty

  REQUIRE_THROWS_AS((dt::arange<float, Points>(0, 1, 0)), dt::value_error);
  REQUIRE_THROWS_WITH((dt::arange<float, Points>(0, 1, 0)), Catch::StartsWith("arange:"));
  REQUIRE_THROWS_AS((dt::arange<float, Points>(0, std::numeric_limits<double>::infinity(), 1)), dt::value_error);
  REQUIRE_THROWS_AS((dt::arange<float, Points>(std::nan(""), 1, 1)), dt::value_error);
  REQUIRE_THROWS_AS((dt::arange<float, Points>(0, 1e30, 1e-30)), dt::value_error);
}

TEST_CASE("creation: arange's elements must be values of the element type", "[ops][creation]") {
  // int32 holds 0, 1e9 and 2e9 but not 3e9: no wrap to -2147483648.
  REQUIRE_THROWS_WITH((dt::arange<std::int32_t, Points>(0, 4e9, 1e9)),
                      "arange: the last element: 3000000000 is not representable in int32 (it is NaN, infinite or "
                      "out of range)");
  auto const fits = dt::arange<std::int32_t, Points>(0, 3e9, 1e9);  // 0, 1e9, 2e9
  REQUIRE(fits.size() == 3);
  CHECK(fits(Points(2)) == 2000000000);
  REQUIRE_THROWS_WITH((dt::arange<std::int32_t, Points>(-3e9, 0, 1e9)),
                      Catch::StartsWith("arange: the first element: -3000000000 is not representable in int32"));
  CHECK(dt::arange<std::int32_t, Points>(-2147483648.0, -2147483646.0)(Points(0)) ==
        std::numeric_limits<std::int32_t>::min());
  REQUIRE_THROWS_WITH((dt::arange<float, Points>(0, 1e300, 1e299)),
                      Catch::StartsWith("arange: the last element: 9e+299 is not representable in float32"));
  CHECK(dt::arange<double, Points>(0, 1e300, 1e299).size() == 10);
  // arange(extent): the last index must fit too (int32 up to 2^31 elements).
  CHECK(dt::arange<std::int32_t>(Points(3))(Points(2)) == 2);
}

TEST_CASE("creation: from_range checks every element against the element type", "[ops][creation]") {
  std::vector<double> const bad{1.0, 2.5, std::nan(""), 4.0};
  REQUIRE_THROWS_WITH(dt::from_range<std::int64_t>(bad, Points(4)),
                      Catch::StartsWith("from_range: element 2: nan is not representable in int64"));
  std::vector<std::int64_t> const wide{1, std::int64_t{1} << 40};
  REQUIRE_THROWS_WITH(dt::from_range<std::int32_t>(wide, Points(2)),
                      Catch::StartsWith("from_range: element 1: 1099511627776 is not representable in int32"));
  std::vector<double> const big{1e300};
  REQUIRE_THROWS_WITH(dt::from_range<float>(big, Points(1)),
                      Catch::StartsWith("from_range: element 0: 1e+300 is not representable in float32"));
  std::vector<double> const fine{-2.5, 7.9};
  auto const truncated = dt::from_range<std::int32_t>(fine, Points(2));  // toward zero, as static_cast
  CHECK(truncated(Points(0)) == -2);
  CHECK(truncated(Points(1)) == 7);
}

TEST_CASE("creation: from_buffer and from_range", "[ops][creation]") {
  float const buf[6] = {1, 2, 3, 4, 5, 6};
  auto t = dt::from_buffer(buf, 6, Batch(2), Hidden(3));
  static_assert(std::is_same_v<decltype(t), dt::tensor<float, Batch, Hidden>>);
  CHECK(t(Batch(1), Hidden(0)) == 4.0f);
  CHECK(t.data() != buf);  // a copy

  REQUIRE_THROWS_AS(dt::from_buffer(buf, 6, Batch(2), Hidden(2)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::from_buffer(buf, 6, Batch(2), Hidden(2)),
                      "from_buffer: the extents [Batch=2, Hidden=2] hold 4 elements but the buffer has 6");

  std::vector<int> v{1, 2, 3, 4, 5, 6};
  auto r = dt::from_range<double>(v, Hidden(3), Batch(2));
  static_assert(std::is_same_v<decltype(r), dt::tensor<double, Hidden, Batch>>);
  CHECK(r(Hidden(2), Batch(1)) == 6.0);
  CHECK(r(Hidden(1), Batch(0)) == 3.0);
  std::list<float> l{0.5f, 1.5f};
  auto rl = dt::from_range<float>(l, Hidden::fixed<2>{});
  CHECK(rl(Hidden(1)) == 1.5f);
  REQUIRE_THROWS_AS(dt::from_range<float>(v, Batch(5)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::from_range<float>(v, Batch(5)),
                      "from_range: the extents [Batch=5] hold 5 elements but the range has 6");
}
