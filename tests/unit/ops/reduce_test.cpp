#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/reduce.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

namespace dt = dimtensor;

namespace reduce_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

// Deterministic values in [-3, 3), not all equal, with few ties.
inline float draw(std::uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 6.0f - 3.0f;
}

template <class T>
void fill_random(T& t, std::uint32_t seed) {
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = draw(seed);
}

// x[a][b][c] of a contiguous [A, B, C] tensor.
template <class T>
double at3(T const& x, dt::index_t a, dt::index_t b, dt::index_t c) {
  auto const& e = x.extents();
  return static_cast<double>(x.data()[(a * e[1] + b) * e[2] + c]);
}

enum class op { sum, mean, max, min, argmax };

// Naive double-precision reduction of a contiguous [A, B, C] tensor over axis `axis`,
// returned row-major over the two remaining axes.
template <class T>
std::vector<double> reference(T const& x, int axis, op kind) {
  auto const& e = x.extents();
  dt::index_t const n = e[static_cast<std::size_t>(axis)];
  dt::index_t const r0 = axis == 0 ? e[1] : e[0];
  dt::index_t const r1 = axis == 2 ? e[1] : e[2];
  std::vector<double> out;
  for (dt::index_t i = 0; i < r0; ++i) {
    for (dt::index_t k = 0; k < r1; ++k) {
      double acc = kind == op::max || kind == op::argmax ? -INFINITY : kind == op::min ? INFINITY : 0.0;
      dt::index_t best = 0;
      for (dt::index_t j = 0; j < n; ++j) {
        double const v = axis == 0 ? at3(x, j, i, k) : axis == 1 ? at3(x, i, j, k) : at3(x, i, k, j);
        if (kind == op::sum || kind == op::mean) acc += v;
        if ((kind == op::max || kind == op::argmax) && v > acc) {
          acc = v;
          best = j;
        }
        if (kind == op::min && v < acc) acc = v;
      }
      if (kind == op::mean) acc /= static_cast<double>(n);
      out.push_back(kind == op::argmax ? static_cast<double>(best) : acc);
    }
  }
  return out;
}

template <class T>
void check_against(T const& got, std::vector<double> const& want, double tol) {
  REQUIRE(got.size() == static_cast<dt::index_t>(want.size()));
  REQUIRE(got.is_contiguous());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(static_cast<double>(got.data()[i]) == Approx(want[i]).margin(tol));
  }
}

using x3_t = dt::tensor<float, Batch, Queries, KVPairs>;

x3_t random3(dt::index_t a, dt::index_t b, dt::index_t c, std::uint32_t seed) {
  auto x = dt::empty<float>(Batch(a), Queries(b), KVPairs(c));
  fill_random(x, seed);
  return x;
}

TEST_CASE("reductions over the first, a middle and the last dim match naive loops", "[reduce]") {
  auto const x = random3(3, 5, 7, 11);

  SECTION("over Batch (the first dim)") {
    auto s = dt::sum<Batch>(x);
    static_assert(std::is_same_v<decltype(s), dt::tensor<float, Queries, KVPairs>>);
    check_against(s, reference(x, 0, op::sum), 1e-5);
    check_against(dt::mean<Batch>(x), reference(x, 0, op::mean), 1e-6);
    check_against(dt::max<Batch>(x), reference(x, 0, op::max), 0);
    check_against(dt::min<Batch>(x), reference(x, 0, op::min), 0);
    auto a = dt::argmax<Batch>(x);
    static_assert(std::is_same_v<decltype(a), dt::tensor<std::int64_t, Queries, KVPairs>>);
    check_against(a, reference(x, 0, op::argmax), 0);
  }
  SECTION("over Queries (a middle dim)") {
    auto s = dt::sum<Queries>(x);
    static_assert(std::is_same_v<decltype(s), dt::tensor<float, Batch, KVPairs>>);
    check_against(s, reference(x, 1, op::sum), 1e-5);
    check_against(dt::mean<Queries>(x), reference(x, 1, op::mean), 1e-6);
    check_against(dt::max<Queries>(x), reference(x, 1, op::max), 0);
    check_against(dt::min<Queries>(x), reference(x, 1, op::min), 0);
    check_against(dt::argmax<Queries>(x), reference(x, 1, op::argmax), 0);
  }
  SECTION("over KVPairs (the last dim)") {
    auto s = dt::sum<KVPairs>(x);
    static_assert(std::is_same_v<decltype(s), dt::tensor<float, Batch, Queries>>);
    check_against(s, reference(x, 2, op::sum), 1e-5);
    check_against(dt::mean<KVPairs>(x), reference(x, 2, op::mean), 1e-6);
    check_against(dt::max<KVPairs>(x), reference(x, 2, op::max), 0);
    check_against(dt::min<KVPairs>(x), reference(x, 2, op::min), 0);
    check_against(dt::argmax<KVPairs>(x), reference(x, 2, op::argmax), 0);
  }
  SECTION("rows longer than the kernel's 16 lanes, and large enough for threads") {
    auto const big = random3(7, 300, 37, 12);
    check_against(dt::sum<Queries>(big), reference(big, 1, op::sum), 1e-4);
    check_against(dt::max<Queries>(big), reference(big, 1, op::max), 0);
    check_against(dt::argmax<Queries>(big), reference(big, 1, op::argmax), 0);
    auto const wide = random3(40, 3, 1000, 13);
    check_against(dt::sum<KVPairs>(wide), reference(wide, 2, op::sum), 1e-4);
    check_against(dt::mean<KVPairs>(wide), reference(wide, 2, op::mean), 1e-6);
    check_against(dt::min<KVPairs>(wide), reference(wide, 2, op::min), 0);
    check_against(dt::argmax<KVPairs>(wide), reference(wide, 2, op::argmax), 0);
  }
}

TEST_CASE("keep_dim keeps the reduced dim as D::fixed<1>", "[reduce]") {
  auto const x = random3(2, 3, 4, 21);

  auto s = dt::sum<Queries>(x, dt::keep_dim);
  static_assert(std::is_same_v<decltype(s), dt::tensor<float, Batch, Queries::fixed<1>, KVPairs>>);
  CHECK(s.extents() == std::array<dt::index_t, 3>{2, 1, 4});
  check_against(s, reference(x, 1, op::sum), 1e-5);

  auto m = dt::mean<KVPairs>(x, dt::keep_dim);
  static_assert(std::is_same_v<decltype(m), dt::tensor<float, Batch, Queries, KVPairs::fixed<1>>>);
  CHECK(m.extents() == std::array<dt::index_t, 3>{2, 3, 1});
  check_against(m, reference(x, 2, op::mean), 1e-6);

  auto mx = dt::max<Batch>(x, dt::keep_dim);
  static_assert(std::is_same_v<decltype(mx), dt::tensor<float, Batch::fixed<1>, Queries, KVPairs>>);
  check_against(mx, reference(x, 0, op::max), 0);

  auto mn = dt::min<Batch>(x, dt::keep_dim);
  static_assert(std::is_same_v<decltype(mn), dt::tensor<float, Batch::fixed<1>, Queries, KVPairs>>);
  check_against(mn, reference(x, 0, op::min), 0);

  auto a = dt::argmax<KVPairs>(x, dt::keep_dim);
  static_assert(std::is_same_v<decltype(a), dt::tensor<std::int64_t, Batch, Queries, KVPairs::fixed<1>>>);
  check_against(a, reference(x, 2, op::argmax), 0);

  SECTION("the kept dim broadcasts back against the input: x - max is <= 0 with a 0 per row") {
    dt::tensor<float, Batch, Queries, KVPairs> d = x - dt::max<KVPairs>(x, dt::keep_dim);
    for (dt::index_t b = 0; b < 2; ++b) {
      for (dt::index_t q = 0; q < 3; ++q) {
        int zeros = 0;
        for (dt::index_t k = 0; k < 4; ++k) {
          float const v = d(Batch(b), Queries(q), KVPairs(k));
          CHECK(v <= 0.0f);
          zeros += v == 0.0f;
        }
        CHECK(zeros >= 1);
      }
    }
  }
}

TEST_CASE("static extents: the other dims keep them", "[reduce]") {
  dt::tensor<float, Batch, Hidden::fixed<4>> x{{1, 2, 3, 4}, {5, 6, 7, 8}};
  auto s = dt::sum<Batch>(x);
  static_assert(std::is_same_v<decltype(s), dt::tensor<float, Hidden::fixed<4>>>);
  CHECK(s(Hidden(0)) == 6.0f);
  CHECK(s(Hidden(3)) == 12.0f);
  auto m = dt::mean<Hidden>(x);
  static_assert(std::is_same_v<decltype(m), dt::tensor<float, Batch>>);
  CHECK(m(Batch(0)) == 2.5f);
  CHECK(m(Batch(1)) == 6.5f);
  auto k = dt::max<Hidden>(x, dt::keep_dim);
  static_assert(std::is_same_v<decltype(k), dt::tensor<float, Batch, Hidden::fixed<1>>>);
  CHECK(k(Batch(1), Hidden(0)) == 8.0f);
}

TEST_CASE("full reductions give rank-0 tensors", "[reduce]") {
  dt::tensor<float, Batch, Queries> x{{1, -5, 3}, {4, 2, 6}};
  auto s = dt::sum(x);
  static_assert(std::is_same_v<decltype(s), dt::tensor<float>>);
  static_assert(decltype(s)::rank == 0);
  CHECK(s.item() == 11.0f);
  CHECK(dt::mean(x).item() == Approx(11.0 / 6.0));
  CHECK(dt::max(x).item() == 6.0f);
  CHECK(dt::min(x).item() == -5.0f);

  dt::tensor<double, Batch> d{0.5, 0.25};
  auto sd = dt::sum(d);
  static_assert(std::is_same_v<decltype(sd), dt::tensor<double>>);
  CHECK(sd.item() == 0.75);

  SECTION("of an expression, evaluated first") {
    CHECK(dt::sum(x * 2.0f).item() == 22.0f);
    CHECK(dt::max(-x).item() == 5.0f);
  }
}

TEST_CASE("element types of integer and bool reductions follow PyTorch", "[reduce]") {
  dt::tensor<std::int32_t, Batch, Queries> x{{2000000000, 2000000000, 1}, {-3, 7, 7}};
  auto s = dt::sum<Queries>(x);
  static_assert(std::is_same_v<decltype(s), dt::tensor<std::int64_t, Batch>>);
  CHECK(s(Batch(0)) == 4000000001LL);  // would overflow in int32
  CHECK(s(Batch(1)) == 11);
  auto m = dt::max<Queries>(x);
  static_assert(std::is_same_v<decltype(m), dt::tensor<std::int32_t, Batch>>);
  CHECK(m(Batch(1)) == 7);
  CHECK(dt::min(x).item() == -3);
  CHECK(dt::argmax<Queries>(x)(Batch(1)) == 1);  // first of the tied 7s

  dt::tensor<bool, Batch, Queries> b{{true, false, true}, {false, false, false}};
  auto count = dt::sum<Queries>(b);
  static_assert(std::is_same_v<decltype(count), dt::tensor<std::int64_t, Batch>>);
  CHECK(count(Batch(0)) == 2);
  CHECK(count(Batch(1)) == 0);
  CHECK(dt::sum(b).item() == 2);
  CHECK(dt::max<Queries>(b)(Batch(0)) == true);
  CHECK(dt::max<Queries>(b)(Batch(1)) == false);
}

TEST_CASE("argmax returns the first maximum on ties, like torch", "[reduce]") {
  dt::tensor<float, Batch, KVPairs> x{{1, 3, 3, 2}, {5, 5, 5, 5}, {0, -1, 0, 4}};
  auto a = dt::argmax<KVPairs>(x);
  CHECK(a(Batch(0)) == 1);
  CHECK(a(Batch(1)) == 0);
  CHECK(a(Batch(2)) == 3);

  SECTION("along a dim that is not the last") {
    auto b = dt::argmax<Batch>(x);  // columns: (1,5,0) (3,5,-1) (3,5,0) (2,5,4)
    CHECK(b(KVPairs(0)) == 1);
    CHECK(b(KVPairs(1)) == 1);
    CHECK(b(KVPairs(2)) == 1);
    CHECK(b(KVPairs(3)) == 1);
    dt::tensor<float, Batch, KVPairs> t{{7, 1}, {7, 2}, {6, 2}};
    auto c = dt::argmax<Batch>(t);
    CHECK(c(KVPairs(0)) == 0);
    CHECK(c(KVPairs(1)) == 1);
  }
}

TEST_CASE("NaN propagates through max, min and argmax", "[reduce]") {
  float const nan = std::numeric_limits<float>::quiet_NaN();
  dt::tensor<float, Batch, KVPairs> x{{1, nan, 3, nan}, {1, 2, 3, 4}};
  auto m = dt::max<KVPairs>(x);
  CHECK(std::isnan(m(Batch(0))));
  CHECK(m(Batch(1)) == 4.0f);
  CHECK(std::isnan(dt::min<KVPairs>(x)(Batch(0))));
  CHECK(dt::argmax<KVPairs>(x)(Batch(0)) == 1);
  CHECK(std::isnan(dt::max<Batch>(x)(KVPairs(1))));
  CHECK(dt::max<Batch>(x)(KVPairs(2)) == 3.0f);
  CHECK(dt::argmax<Batch>(x)(KVPairs(3)) == 0);
}

TEST_CASE("float sums accumulate in double: 10^6 floats sum accurately", "[reduce]") {
  // A float accumulator drifts by ~1% here (0.1f added 10^6 times gives ~100958).
  dt::index_t const n = 1000000;
  double const want = static_cast<double>(0.1f) * static_cast<double>(n);

  auto const ones = dt::full(0.1f, KVPairs(n));
  CHECK(static_cast<double>(dt::sum<KVPairs>(ones).item()) == Approx(want).epsilon(1e-7));
  CHECK(static_cast<double>(dt::sum(ones).item()) == Approx(want).epsilon(1e-7));
  CHECK(static_cast<double>(dt::mean(ones).item()) == Approx(0.1).epsilon(1e-7));

  SECTION("also along a dim that is not the last") {
    auto const cols = dt::full(0.1f, Batch(n / 4), Hidden(4));
    auto const s = dt::sum<Batch>(cols);
    for (dt::index_t h = 0; h < 4; ++h) {
      CHECK(static_cast<double>(s(Hidden(h))) == Approx(want / 4).epsilon(1e-7));
    }
  }
  SECTION("large and small magnitudes") {
    std::vector<float> v(static_cast<std::size_t>(n), 1.0f);
    v[0] = 1e8f;  // each 1.0f added to a float 1e8 would be lost
    auto const t = dt::from_range<float>(v, KVPairs(n));
    CHECK(static_cast<double>(dt::sum(t).item()) == Approx(1e8 + 999999.0).epsilon(1e-7));
  }
}

TEST_CASE("empty reductions", "[reduce]") {
  auto const empty = dt::zeros<float>(Batch(2), KVPairs(0));

  SECTION("sum is 0 and mean is NaN over no elements") {
    auto s = dt::sum<KVPairs>(empty);
    CHECK(s(Batch(0)) == 0.0f);
    CHECK(std::isnan(dt::mean<KVPairs>(empty)(Batch(1))));
    CHECK(dt::sum(empty).item() == 0.0f);
    // over Batch the result itself is empty: nothing to compute, nothing thrown
    CHECK(dt::max<Batch>(empty).size() == 0);
  }
  SECTION("max, min and argmax over extent 0 throw value_error naming the call, dim and extents") {
    REQUIRE_THROWS_AS(dt::max<KVPairs>(empty), dt::value_error);
    REQUIRE_THROWS_WITH(dt::max<KVPairs>(empty),
                        Catch::Contains("max: cannot reduce over dimension KVPairs of extent 0") &&
                            Catch::Contains("[Batch=2, KVPairs=0]"));
    REQUIRE_THROWS_WITH(dt::min<KVPairs>(empty, dt::keep_dim), Catch::Contains("min: cannot reduce over dimension KVPairs"));
    REQUIRE_THROWS_AS(dt::argmax<KVPairs>(empty), dt::value_error);
    REQUIRE_THROWS_WITH(dt::argmax<KVPairs>(empty), Catch::Contains("argmax") && Catch::Contains("extent 0"));
    REQUIRE_THROWS_AS(dt::max(empty), dt::value_error);
    REQUIRE_THROWS_WITH(dt::min(empty), Catch::Contains("min: the tensor [Batch=2, KVPairs=0] has no elements"));
  }
}

TEST_CASE("reductions read strided views correctly", "[reduce]") {
  // A [Queries=4, Batch=3] view of a row-major [Batch=3, Queries=4] buffer (a transpose).
  dt::tensor<float, Batch, Queries> base{{0, 1, 2, 3}, {10, 11, 12, 13}, {20, 21, 22, 23}};
  dt::tensor<float, Queries, Batch> view(base.storage(), base.data(), {4, 3}, {1, 4});
  REQUIRE_FALSE(view.is_contiguous());
  auto s = dt::sum<Batch>(view);
  static_assert(std::is_same_v<decltype(s), dt::tensor<float, Queries>>);
  for (dt::index_t q = 0; q < 4; ++q) CHECK(s(Queries(q)) == static_cast<float>(30 + 3 * q));
  auto m = dt::max<Queries>(view);
  CHECK(m(Batch(0)) == 3.0f);
  CHECK(m(Batch(2)) == 23.0f);
  CHECK(dt::argmax<Queries>(view)(Batch(1)) == 3);
}

TEST_CASE("reductions return new tensors and leave the input alone", "[reduce]") {
  auto const x = random3(2, 3, 4, 31);
  auto const copy = x.clone();
  auto s = dt::sum<Queries>(x);
  s.fill(0.0f);
  for (dt::index_t i = 0; i < x.size(); ++i) CHECK(x.data()[i] == copy.data()[i]);
}

}  // namespace reduce_test
