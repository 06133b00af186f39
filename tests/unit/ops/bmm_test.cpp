// bmm(a, b): values against naive loops (float, double, int), views read in
// place (transposed, sliced, both strides non-unit), lazy operands, extents
// 0 and 1, static extents in the result type, and the run-time shape errors.

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace bmm_test {

namespace dt = dimtensor;
using dt::index_t;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Extra);

template <class Tensor>
void fill_random(Tensor& t, unsigned seed) {
  std::mt19937 rng(seed);
  using T = typename Tensor::value_type;
  REQUIRE(t.is_contiguous());
  for (index_t i = 0; i < t.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      t.data()[i] = static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
    } else {
      t.data()[i] = static_cast<T>(std::uniform_int_distribution<int>(-9, 9)(rng));
    }
  }
}

// Checks r [Batch, Queries, ValueFeat] against the naive product of
// a [Batch, Queries, Hidden] and b [Batch, Hidden, ValueFeat], read through
// element access (whatever their strides).
template <class R, class A, class B>
void check_product(R const& r, A const& a, B const& b) {
  index_t const nb = a.template extent<Batch>();
  index_t const ni = a.template extent<Queries>();
  index_t const nk = a.template extent<Hidden>();
  index_t const nj = b.template extent<ValueFeat>();
  REQUIRE(r.extents() == std::array<index_t, 3>{nb, ni, nj});
  REQUIRE(r.is_contiguous());
  using T = typename R::value_type;
  for (index_t x = 0; x < nb; ++x) {
    for (index_t i = 0; i < ni; ++i) {
      for (index_t j = 0; j < nj; ++j) {
        long double want = 0;
        for (index_t q = 0; q < nk; ++q) {
          want += static_cast<long double>(a(Batch(x), Queries(i), Hidden(q))) *
                  static_cast<long double>(b(Batch(x), Hidden(q), ValueFeat(j)));
        }
        T const got = r(Batch(x), Queries(i), ValueFeat(j));
        if constexpr (std::is_floating_point_v<T>) {
          REQUIRE(static_cast<double>(got) == Approx(static_cast<double>(want)).margin(1e-5));
        } else {
          REQUIRE(got == static_cast<T>(want));
        }
      }
    }
  }
}

}  // namespace bmm_test

using namespace bmm_test;

TEST_CASE("bmm of ones, as in d2l", "[bmm]") {
  auto const x = dt::ones<float>(Batch(2), Queries(1), Hidden(4));
  auto const y = dt::ones<float>(Batch(2), Hidden(4), ValueFeat(6));
  auto const r = dt::bmm(x, y);
  STATIC_REQUIRE(std::is_same_v<decltype(r), dt::tensor<float, Batch, Queries, ValueFeat> const>);
  REQUIRE(r.extents() == std::array<index_t, 3>{2, 1, 6});
  for (index_t i = 0; i < r.size(); ++i) REQUIRE(r.data()[i] == 4.0f);
}

TEST_CASE("bmm of attention weights and values, as in d2l", "[bmm]") {
  // weights.unsqueeze(1) [2, 1, 10] x values.unsqueeze(-1) [2, 10, 1] = [[[4.5]], [[14.5]]]
  dt::tensor<float, Batch, Queries, Hidden> weights(Batch(2), Queries(1), Hidden(10));
  dt::tensor<float, Batch, Hidden, ValueFeat> values(Batch(2), Hidden(10), ValueFeat(1));
  for (index_t i = 0; i < 20; ++i) {
    weights.data()[i] = 0.1f;
    values.data()[i] = static_cast<float>(i);
  }
  auto const r = dt::bmm(weights, values);
  REQUIRE(r.extents() == std::array<index_t, 3>{2, 1, 1});
  CHECK(r(Batch(0), Queries(0), ValueFeat(0)) == Approx(4.5f));
  CHECK(r(Batch(1), Queries(0), ValueFeat(0)) == Approx(14.5f));
}

TEMPLATE_TEST_CASE("bmm matches a naive loop", "[bmm]", float, double, std::int32_t, std::int64_t) {
  auto a = dt::empty<TestType>(Batch(3), Queries(7), Hidden(5));
  auto b = dt::empty<TestType>(Batch(3), Hidden(5), ValueFeat(9));
  fill_random(a, 1);
  fill_random(b, 2);
  SECTION("contiguous operands") { check_product(dt::bmm(a, b), a, b); }
  SECTION("odd sizes past the kernel's blocks") {
    auto a2 = dt::empty<TestType>(Batch(2), Queries(37), Hidden(133));
    auto b2 = dt::empty<TestType>(Batch(2), Hidden(133), ValueFeat(259));
    fill_random(a2, 3);
    fill_random(b2, 4);
    check_product(dt::bmm(a2, b2), a2, b2);
  }
  SECTION("batch 1") {
    auto a1 = dt::empty<TestType>(Batch(1), Queries(4), Hidden(3));
    auto b1 = dt::empty<TestType>(Batch(1), Hidden(3), ValueFeat(2));
    fill_random(a1, 5);
    fill_random(b1, 6);
    check_product(dt::bmm(a1, b1), a1, b1);
  }
  SECTION("a transposed right operand (queries · keysᵀ)") {
    auto keys = dt::empty<TestType>(Batch(3), ValueFeat(9), Hidden(5));
    fill_random(keys, 7);
    auto const kt = dt::transpose<ValueFeat, Hidden>(keys);
    REQUIRE_FALSE(kt.is_contiguous());
    check_product(dt::bmm(a, kt), a, kt);
  }
  SECTION("a transposed left operand") {
    auto at = dt::empty<TestType>(Batch(3), Hidden(5), Queries(7));
    fill_random(at, 8);
    auto const av = dt::transpose<Hidden, Queries>(at);
    check_product(dt::bmm(av, b), av, b);
  }
  SECTION("a batch-innermost operand (batch stride 1)") {
    auto store = dt::empty<TestType>(Queries(7), Hidden(5), Batch(3));
    fill_random(store, 9);
    auto const av = dt::permute<Batch, Queries, Hidden>(store);
    STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(av)>::specs, dt::dims<Batch, Queries, Hidden>>);
    check_product(dt::bmm(av, b), av, b);
  }
  SECTION("sliced operands (rows longer than the matrix)") {
    auto wide = dt::empty<TestType>(Batch(3), Queries(7), Hidden(11));
    fill_random(wide, 10);
    auto const av = dt::slice<Hidden>(wide, 2, 7);
    auto const bv = dt::slice<Batch>(dt::slice<ValueFeat>(b, 1, 8), 1, 3);
    auto const a2 = dt::slice<Batch>(av, 1, 3);
    check_product(dt::bmm(a2, bv), a2, bv);
  }
  SECTION("an operand whose strides are both non-unit") {
    // every other element of every other row of a [Batch, Queries, Extra, Hidden] buffer
    auto store = dt::empty<TestType>(Batch(3), Queries(7), Extra(2), Hidden(10));
    fill_random(store, 11);
    dt::tensor<TestType, Batch, Queries, Hidden> const av(store.storage(), store.data(), {3, 7, 5}, {140, 20, 2});
    check_product(dt::bmm(av, b), av, b);
    auto const bt = dt::transpose<Hidden, ValueFeat>(dt::tensor<TestType, Batch, ValueFeat, Hidden>(
        store.storage(), store.data() + 1, {3, 7, 5}, {140, 20, 2}));
    check_product(dt::bmm(a, bt), a, bt);
  }
}

TEST_CASE("bmm evaluates lazy operands", "[bmm]") {
  auto a = dt::empty<double>(Batch(2), Queries(3), Hidden(4));
  auto b = dt::empty<double>(Batch(2), Hidden(4), ValueFeat(5));
  fill_random(a, 12);
  fill_random(b, 13);
  auto const twice = dt::eval(a * 2.0);
  auto const r = dt::bmm(a * 2.0, dt::tanh(b));
  check_product(r, twice, dt::eval(dt::tanh(b)));
}

TEST_CASE("bmm with an extent 0", "[bmm]") {
  SECTION("no rows: an empty result") {
    auto const r = dt::bmm(dt::ones<float>(Batch(2), Queries(0), Hidden(3)),
                           dt::ones<float>(Batch(2), Hidden(3), ValueFeat(4)));
    REQUIRE(r.extents() == std::array<index_t, 3>{2, 0, 4});
    REQUIRE(r.size() == 0);
  }
  SECTION("no batch") {
    auto const r = dt::bmm(dt::ones<float>(Batch(0), Queries(2), Hidden(3)),
                           dt::ones<float>(Batch(0), Hidden(3), ValueFeat(4)));
    REQUIRE(r.extents() == std::array<index_t, 3>{0, 2, 4});
  }
  SECTION("nothing to sum over: zeros") {
    auto const r = dt::bmm(dt::ones<double>(Batch(2), Queries(3), Hidden(0)),
                           dt::ones<double>(Batch(2), Hidden(0), ValueFeat(4)));
    REQUIRE(r.extents() == std::array<index_t, 3>{2, 3, 4});
    for (index_t i = 0; i < r.size(); ++i) REQUIRE(r.data()[i] == 0.0);
  }
}

TEST_CASE("bmm keeps static extents", "[bmm]") {
  auto const a = dt::ones<float>(Batch(2), Queries::fixed<3>{}, Hidden::fixed<4>{});
  auto const b = dt::ones<float>(Batch::fixed<2>{}, Hidden(4), ValueFeat::fixed<5>{});
  auto const r = dt::bmm(a, b);
  STATIC_REQUIRE(std::is_same_v<decltype(r),
                                dt::tensor<float, Batch::fixed<2>, Queries::fixed<3>, ValueFeat::fixed<5>> const>);
  CHECK(r(Batch(1), Queries(2), ValueFeat(4)) == 4.0f);
}

TEST_CASE("bmm rejects dynamic extents that disagree", "[bmm]") {
  auto const a = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
  SECTION("batch") {
    auto const b = dt::ones<float>(Batch(3), Hidden(4), ValueFeat(5));
    REQUIRE_THROWS_AS(dt::bmm(a, b), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::bmm(a, b), Catch::Contains("bmm") && Catch::Contains("dimension Batch: 2") &&
                                           Catch::Contains("vs 3"));
  }
  SECTION("contracted dim") {
    auto const b = dt::ones<float>(Batch(2), Hidden(6), ValueFeat(5));
    REQUIRE_THROWS_AS(dt::bmm(a, b), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::bmm(a, b), Catch::Contains("bmm") && Catch::Contains("dimension Hidden: 4") &&
                                           Catch::Contains("vs 6"));
  }
  SECTION("against a static extent") {
    auto const b = dt::ones<float>(Batch(2), Hidden::fixed<5>{}, ValueFeat(5));
    REQUIRE_THROWS_WITH(dt::bmm(a, b), Catch::Contains("bmm") && Catch::Contains("dimension Hidden: 4") &&
                                           Catch::Contains("vs 5"));
  }
}

TEST_CASE("bmm passes ill_formed on silently", "[bmm]") {
  auto const a = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
  STATIC_REQUIRE(dt::is_ill_formed_v<decltype(dt::bmm(dt::ill_formed{}, a))>);
  STATIC_REQUIRE(dt::is_ill_formed_v<decltype(dt::bmm(a, dt::ill_formed{}))>);
}

#ifndef DIMTENSOR_NO_CACHING_ALLOCATOR
TEST_CASE("repeated bmm calls reuse the result's memory", "[bmm]") {
  auto const a = dt::ones<float>(Batch(4), Queries(32), Hidden(16));
  auto const b = dt::ones<float>(Batch(4), Hidden(16), ValueFeat(32));
  float const* first = nullptr;
  {
    auto const r = dt::bmm(a, b);
    first = r.data();
  }
  auto const again = dt::bmm(a, b);
  CHECK(again.data() == first);
}

TEST_CASE("bmm reads a transposed operand in place, without a copy", "[bmm]") {
  // Every buffer bmm takes goes back to the cache when dropped: after a call
  // whose result is dropped, the cache holds the result's block and nothing
  // else unless an operand was copied.
  // The count reads the CPU backend's cache: other backends allocate elsewhere.
  if constexpr (!std::is_same_v<dt::default_backend, dt::cpu>) return;
  auto& cache = dt::backends::cpu::caching_allocator::instance();
  auto a = dt::empty<float>(Batch(2), Queries(3), Hidden(4));
  auto keys = dt::empty<float>(Batch(2), ValueFeat(5), Hidden(4));
  fill_random(a, 14);
  fill_random(keys, 15);
  std::size_t const result_block = 128;  // 2 * 3 * 5 floats = 120 bytes, in the 128-byte size class
  SECTION("a transposed view: passed to the kernel as it is") {
    cache.release_cached();
    { auto const r = dt::bmm(a, dt::transpose<ValueFeat, Hidden>(keys)); }
    CHECK(cache.cached_bytes() == result_block);
  }
  SECTION("both strides non-unit: copied (the check above can see a copy)") {
    dt::tensor<float, Batch, Hidden, ValueFeat> const odd(keys.storage(), keys.data(), {2, 2, 5}, {20, 2, 4});
    cache.release_cached();
    { auto const r = dt::bmm(dt::slice<Hidden>(a, 0, 2), odd); }
    CHECK(cache.cached_bytes() > result_block);
  }
}
#endif
