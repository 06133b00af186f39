#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/softmax.hpp>

#include <catch2/catch.hpp>

#include "unit/support/softmax_reference.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace dt = dimtensor;

namespace softmax_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

using test_support::check_against;
using test_support::draw;

template <class T>
T random3(dt::index_t a, dt::index_t b, dt::index_t c, std::uint32_t seed, double scale = 1.0) {
  T x(dt::uninitialized, {a, b, c});
  for (dt::index_t i = 0; i < x.size(); ++i) {
    x.data()[i] = static_cast<typename T::value_type>(draw(seed) * scale);
  }
  return x;
}

// Naive double-precision (log_)softmax of a contiguous [A, B, C] tensor along `axis`.
template <class T>
std::vector<double> reference(T const& x, int axis, bool log) {
  dt::index_t const n = x.extents()[static_cast<std::size_t>(axis)];
  return test_support::softmax_reference(x, axis, log, [n](dt::index_t, dt::index_t) { return n; });
}

using x3_t = dt::tensor<float, Batch, Queries, KVPairs>;

TEST_CASE("softmax along any dim matches a double-precision reference", "[softmax]") {
  auto const x = random3<x3_t>(3, 5, 7, 1);

  SECTION("the last dim") {
    auto y = dt::softmax<KVPairs>(x);
    static_assert(std::is_same_v<decltype(y), x3_t>);
    check_against(y, reference(x, 2, false), 1e-6);
  }
  SECTION("a middle dim") {
    check_against(dt::softmax<Queries>(x), reference(x, 1, false), 1e-6);
  }
  SECTION("the first dim") {
    check_against(dt::softmax<Batch>(x), reference(x, 0, false), 1e-6);
  }
  SECTION("each softmax row sums to 1 along its dim only") {
    auto const y = dt::softmax<Queries>(x);
    for (dt::index_t b = 0; b < 3; ++b) {
      for (dt::index_t k = 0; k < 7; ++k) {
        double s = 0;
        for (dt::index_t q = 0; q < 5; ++q) s += y(Batch(b), Queries(q), KVPairs(k));
        CHECK(s == Approx(1.0).margin(1e-6));
      }
    }
  }
}

TEST_CASE("log_softmax along any dim matches x - max - log(sum(exp(x - max)))", "[softmax]") {
  auto const x = random3<x3_t>(3, 5, 7, 2);
  auto y = dt::log_softmax<KVPairs>(x);
  static_assert(std::is_same_v<decltype(y), x3_t>);
  check_against(y, reference(x, 2, true), 2e-6);
  check_against(dt::log_softmax<Queries>(x), reference(x, 1, true), 2e-6);
  check_against(dt::log_softmax<Batch>(x), reference(x, 0, true), 2e-6);
}

TEST_CASE("large logits: no overflow, no NaN", "[softmax]") {
  auto const x = random3<x3_t>(2, 4, 9, 3, 1000.0);  // |x| up to 3000: exp(x) overflows float
  check_against(dt::softmax<KVPairs>(x), reference(x, 2, false), 1e-6);
  check_against(dt::softmax<Queries>(x), reference(x, 1, false), 1e-6);
  // log_softmax values reach -6000, where float spacing is ~5e-4: compare relatively
  auto const ls = dt::log_softmax<KVPairs>(x);
  auto const want = reference(x, 2, true);
  for (std::size_t i = 0; i < want.size(); ++i) {
    REQUIRE(std::isfinite(ls.data()[i]));
    CHECK(static_cast<double>(ls.data()[i]) == Approx(want[i]).epsilon(1e-6).margin(1e-5));
  }
  SECTION("one huge logit takes all the weight") {
    dt::tensor<float, Batch, KVPairs> t{{1e30f, 0.0f, -1e30f}, {88.0f, 89.0f, 90.0f}};
    auto const y = dt::softmax<KVPairs>(t);
    CHECK(y(Batch(0), KVPairs(0)) == 1.0f);
    CHECK(y(Batch(0), KVPairs(1)) == 0.0f);
    CHECK(y(Batch(0), KVPairs(2)) == 0.0f);
    CHECK(y(Batch(1), KVPairs(2)) == Approx(1.0 / (1.0 + std::exp(-1.0) + std::exp(-2.0))));
  }
}

TEST_CASE("double tensors, static extents and expressions", "[softmax]") {
  SECTION("double") {
    using d3_t = dt::tensor<double, Batch, Queries, KVPairs>;
    auto const x = random3<d3_t>(2, 3, 4, 4);
    auto y = dt::softmax<Queries>(x);
    static_assert(std::is_same_v<decltype(y), d3_t>);
    check_against(y, reference(x, 1, false), 1e-14);
    check_against(dt::log_softmax<KVPairs>(x), reference(x, 2, true), 1e-14);
  }
  SECTION("static extents are kept") {
    dt::tensor<float, Batch, Hidden::fixed<3>> x{{0, 0, 0}, {1, 2, 3}};
    auto y = dt::softmax<Hidden>(x);
    static_assert(std::is_same_v<decltype(y), dt::tensor<float, Batch, Hidden::fixed<3>>>);
    CHECK(y(Batch(0), Hidden(1)) == Approx(1.0 / 3.0));
    auto z = dt::softmax<Batch>(x);
    CHECK(z(Batch(1), Hidden(0)) == Approx(std::exp(1.0) / (1.0 + std::exp(1.0))));
  }
  SECTION("a lazy expression is evaluated first") {
    auto const x = random3<x3_t>(2, 3, 4, 5);
    x3_t const doubled = x * 2.0f;
    auto y = dt::softmax<KVPairs>(x * 2.0f);
    static_assert(std::is_same_v<decltype(y), x3_t>);
    check_against(y, reference(doubled, 2, false), 1e-6);
  }
  SECTION("the input is left alone") {
    auto const x = random3<x3_t>(2, 3, 4, 6);
    auto const copy = x.clone();
    (void)dt::softmax<Queries>(x);
    (void)dt::log_softmax<Queries>(x);
    for (dt::index_t i = 0; i < x.size(); ++i) CHECK(x.data()[i] == copy.data()[i]);
  }
}

TEST_CASE("softmax of a strided view", "[softmax]") {
  // [KVPairs=3, Batch=2] view of a row-major [Batch=2, KVPairs=3] buffer.
  dt::tensor<float, Batch, KVPairs> base{{1, 2, 3}, {0, 0, 5}};
  dt::tensor<float, KVPairs, Batch> view(base.storage(), base.data(), {3, 2}, {1, 3});
  auto y = dt::softmax<KVPairs>(view);
  auto want = dt::softmax<KVPairs>(base);
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t k = 0; k < 3; ++k) CHECK(y(KVPairs(k), Batch(b)) == Approx(want(Batch(b), KVPairs(k))));
  }
}

TEST_CASE("large tensors: vectorized rows and threads", "[softmax]") {
  auto const last = random3<x3_t>(16, 64, 100, 7, 3.0);
  check_against(dt::softmax<KVPairs>(last), reference(last, 2, false), 1e-6);
  check_against(dt::log_softmax<KVPairs>(last), reference(last, 2, true), 1e-5);
  auto const mid = random3<x3_t>(33, 40, 31, 8, 3.0);
  check_against(dt::softmax<Queries>(mid), reference(mid, 1, false), 1e-6);
  check_against(dt::log_softmax<Queries>(mid), reference(mid, 1, true), 1e-5);
}

TEST_CASE("edge cases: extent 1, extent 0, NaN", "[softmax]") {
  SECTION("a dim of extent 1 gives 1 (log: 0)") {
    auto const x = random3<x3_t>(2, 1, 3, 9);
    auto const y = dt::softmax<Queries>(x);
    auto const l = dt::log_softmax<Queries>(x);
    for (dt::index_t i = 0; i < y.size(); ++i) {
      CHECK(y.data()[i] == 1.0f);
      CHECK(l.data()[i] == 0.0f);
    }
  }
  SECTION("extent 0 gives an empty result") {
    auto const x = dt::zeros<float>(Batch(2), KVPairs(0));
    CHECK(dt::softmax<KVPairs>(x).size() == 0);
    CHECK(dt::log_softmax<Batch>(x).size() == 0);
  }
  SECTION("a NaN poisons its row only, as in PyTorch") {
    float const nan = std::numeric_limits<float>::quiet_NaN();
    dt::tensor<float, Batch, KVPairs> x{{1, nan, 2}, {1, 2, 3}};
    auto const y = dt::softmax<KVPairs>(x);
    for (dt::index_t k = 0; k < 3; ++k) {
      CHECK(std::isnan(y(Batch(0), KVPairs(k))));
      CHECK_FALSE(std::isnan(y(Batch(1), KVPairs(k))));
    }
  }
}

}  // namespace softmax_test
