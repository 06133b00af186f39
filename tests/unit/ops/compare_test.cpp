#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/compare.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace compare_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

using f2 = dt::tensor<float, Batch, Queries>;

float const nan_f = std::numeric_limits<float>::quiet_NaN();
float const inf_f = std::numeric_limits<float>::infinity();

template <class A, class B>
concept can_compare = requires(A const& a, B const& b) { dt::equal(a, b); };

}  // namespace

TEST_CASE("equal: same extents and the same elements", "[ops][compare]") {
  f2 const a{{1, 2, 3}, {4, 5, 6}};
  CHECK(dt::equal(a, a));
  CHECK(dt::equal(a, a.clone()));
  CHECK(dt::equal(a, f2{{1, 2, 3}, {4, 5, 6}}));
  CHECK_FALSE(dt::equal(a, f2{{1, 2, 3}, {4, 5, 7}}));
  CHECK_FALSE(dt::equal(a, f2{{1, 2}, {4, 5}}));  // extents differ: false, not an error
  CHECK_FALSE(dt::equal(a, f2{{1, 2, 3}}));
  CHECK(dt::equal(f2{{0.0f}}, f2{{-0.0f}}));
  CHECK_FALSE(dt::equal(f2{{nan_f}}, f2{{nan_f}}));
  CHECK(dt::equal(f2{{inf_f, -inf_f}}, f2{{inf_f, -inf_f}}));
  CHECK(dt::equal(dt::zeros<float>(Batch(0), Queries(2)), dt::zeros<float>(Batch(0), Queries(2))));
  CHECK_FALSE(dt::equal(dt::zeros<float>(Batch(0), Queries(2)), dt::zeros<float>(Batch(0), Queries(3))));

  SECTION("expressions and views") {
    CHECK(dt::equal(a * 2.0f, a + a));
    CHECK(dt::equal(a + 1.0f, f2{{2, 3, 4}, {5, 6, 7}}));
    dt::tensor<float, Queries, Batch> const at(a.storage(), a.data(), {3, 2}, {1, 3});  // a viewed transposed
    CHECK(dt::equal(at, dt::tensor<float, Queries, Batch>{{1, 4}, {2, 5}, {3, 6}}));
  }
  SECTION("integers and bools") {
    using i1 = dt::tensor<std::int64_t, Batch>;
    CHECK(dt::equal(i1{9007199254740993, 1}, i1{9007199254740993, 1}));
    CHECK_FALSE(dt::equal(i1{9007199254740993, 1}, i1{9007199254740992, 1}));  // equal as doubles, not as int64
    using b1 = dt::tensor<bool, Batch>;
    CHECK(dt::equal(b1{true, false}, b1{true, false}));
    CHECK_FALSE(dt::equal(b1{true, false}, b1{true, true}));
    CHECK(dt::equal(a > 2.5f, dt::tensor<bool, Batch, Queries>{{false, false, true}, {true, true, true}}));
  }
  SECTION("static and dynamic extents of the same dims compare") {
    dt::tensor<float, Batch, Hidden::fixed<2>> const s{{1, 2}};
    dt::tensor<float, Batch, Hidden> const d{{1, 2}};
    CHECK(dt::equal(s, d));
    CHECK(dt::allclose(d, s));
    CHECK(dt::max_abs_diff(s, d) == 0.0);
  }
}

TEST_CASE("equal, allclose and max_abs_diff need the same dims and element type", "[ops][compare]") {
  STATIC_REQUIRE(can_compare<f2, f2>);
  STATIC_REQUIRE(can_compare<f2, dt::tensor<float, Batch, Queries>>);
  // The mismatches are compile errors (tests/compile_fail/compare_*.cpp); here
  // only that the calls are still viable overloads, so the diagnostic is what fires.
  STATIC_REQUIRE(can_compare<f2, dt::ill_formed>);
  CHECK_FALSE(dt::equal(f2{{1}}, dt::ill_formed{}));
  CHECK_FALSE(dt::allclose(dt::ill_formed{}, f2{{1}}));
  CHECK(std::isnan(dt::max_abs_diff(dt::ill_formed{}, dt::ill_formed{})));
}

TEST_CASE("allclose: |a - b| <= atol + rtol * |b|, NaN never close", "[ops][compare]") {
  using d1 = dt::tensor<double, Batch>;
  CHECK(dt::allclose(d1{1.0, 2.0}, d1{1.0, 2.0}));
  // Default rtol 1e-5, atol 1e-8: the bound for b = 1 is 1.001e-5.
  CHECK(dt::allclose(d1{1.0 + 1.0e-5}, d1{1.0}));
  CHECK_FALSE(dt::allclose(d1{1.0 + 1.02e-5}, d1{1.0}));
  // Not symmetric: |b| scales the bound, as in torch.
  CHECK(dt::allclose(d1{100.0}, d1{101.0}, 0.00995, 0.0));
  CHECK_FALSE(dt::allclose(d1{101.0}, d1{100.0}, 0.00995, 0.0));
  CHECK(dt::allclose(d1{0.0}, d1{1e-9}));
  CHECK_FALSE(dt::allclose(d1{0.0}, d1{1e-7}));
  CHECK(dt::allclose(d1{0.0}, d1{1e-7}, 0.0, 1e-6));
  double const nan = std::numeric_limits<double>::quiet_NaN();
  double const inf = std::numeric_limits<double>::infinity();
  CHECK_FALSE(dt::allclose(d1{nan}, d1{nan}));
  CHECK_FALSE(dt::allclose(d1{nan}, d1{1.0}, 1e9, 1e9));
  CHECK(dt::allclose(d1{inf, -inf}, d1{inf, -inf}));
  CHECK_FALSE(dt::allclose(d1{inf}, d1{-inf}));
  CHECK_FALSE(dt::allclose(d1{inf}, d1{1e300}, 1.0, 1.0));
  CHECK(dt::allclose(dt::tensor<std::int32_t, Batch>{5, 7}, dt::tensor<std::int32_t, Batch>{5, 7}));
  CHECK(dt::allclose(dt::tensor<std::int32_t, Batch>{100}, dt::tensor<std::int32_t, Batch>{101}, 0.01, 0.0));
  CHECK(dt::allclose(dt::zeros<float>(Batch(0)), dt::zeros<float>(Batch(0))));

  SECTION("float tensors against a naive reference") {
    auto a = dt::empty<float>(Batch(7), Queries(13));
    auto b = dt::empty<float>(Batch(7), Queries(13));
    double worst = 0;
    for (dt::index_t i = 0; i < a.size(); ++i) {
      a.data()[i] = std::sin(static_cast<float>(i));
      b.data()[i] = a.data()[i] + static_cast<float>(i % 5) * 1e-6f;
      worst = std::max(worst, std::abs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i])));
    }
    CHECK(dt::max_abs_diff(a, b) == worst);
    CHECK(dt::allclose(a, b, 0.0, worst));
    CHECK_FALSE(dt::allclose(a, b, 0.0, worst * 0.99));
  }
  SECTION("errors") {
    REQUIRE_THROWS_AS(dt::allclose(f2{{1, 2, 3}}, f2{{1, 2}}), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::allclose(f2{{1, 2, 3}}, f2{{1, 2}}),
                        Catch::Contains("allclose: extent mismatch for dimension Queries: 3 (left) vs 2 (right)"));
    REQUIRE_THROWS_WITH(dt::allclose(f2{{1, 2}, {3, 4}}, f2{{1, 2}}),
                        Catch::Contains("allclose: extent mismatch for dimension Batch: 2 (left) vs 1 (right)"));
    REQUIRE_THROWS_AS(dt::allclose(d1{1.0}, d1{1.0}, -1e-5), dt::value_error);
    REQUIRE_THROWS_WITH(dt::allclose(d1{1.0}, d1{1.0}, 1e-5, -0.5),
                        Catch::Contains("allclose: rtol and atol must be >= 0, got rtol 1e-05 and atol -0.5"));
    REQUIRE_THROWS_AS(dt::allclose(d1{1.0}, d1{1.0}, nan), dt::value_error);
  }
}

TEST_CASE("max_abs_diff: the largest |a - b|", "[ops][compare]") {
  using d1 = dt::tensor<double, Batch>;
  CHECK(dt::max_abs_diff(d1{1.0, -2.0, 3.0}, d1{1.5, 2.0, 3.0}) == 4.0);
  CHECK(dt::max_abs_diff(d1{}, d1{}) == 0.0);
  double const nan = std::numeric_limits<double>::quiet_NaN();
  double const inf = std::numeric_limits<double>::infinity();
  CHECK(std::isnan(dt::max_abs_diff(d1{1.0, nan, 5.0}, d1{1.0, 0.0, 100.0})));
  CHECK(std::isnan(dt::max_abs_diff(d1{0.0}, d1{nan})));
  CHECK(dt::max_abs_diff(d1{-inf, 2.0}, d1{-inf, 2.5}) == 0.5);  // equal infinities differ by 0
  CHECK(dt::max_abs_diff(d1{inf}, d1{0.0}) == inf);
  CHECK(dt::max_abs_diff(dt::tensor<std::int64_t, Batch>{-3, 10}, dt::tensor<std::int64_t, Batch>{4, 10}) == 7.0);
  f2 const a{{1, 2, 3}, {4, 5, 6}};
  CHECK(dt::max_abs_diff(a * 2.0f, a) == 6.0);
  REQUIRE_THROWS_AS(dt::max_abs_diff(f2{{1, 2, 3}}, f2{{1, 2}}), dt::shape_error);
  REQUIRE_THROWS_WITH(dt::max_abs_diff(f2{{1, 2, 3}}, f2{{1, 2}}),
                      Catch::Contains("max_abs_diff: extent mismatch for dimension Queries: 3 (left) vs 2 (right)"));
}

}  // namespace compare_test
