// Backend conformance, the loops that write elements (assign.hpp,
// strided_copy.hpp): backend_assign of an elementwise evaluator (the flat
// path and the row path, strided and broadcast leaves, rank 0, empty
// extents, a conversion of the element type), backend_fill, backend_copy,
// backend_strided_copy (permutations, a repeated source, a strided
// destination), backend_copy_from_host / backend_copy_to_host and
// backend_for_each.  Every case runs on every backend (cpu, thrust_cpp,
// thrust_omp), on sizes below and above the CPU's parallel grain, and
// compares the result with plain loops exactly, including the elements a
// kernel must leave alone.
#include "unit/backends/conformance/conformance.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/evaluator.hpp>

namespace conformance {
namespace {

namespace d = dimtensor::detail;

/// a * 2 + b: the elementwise function the assign cases evaluate.
struct twice_plus {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const {
    return a * T(2) + b;
  }
};

/// Adds `i % 7 + 1` to element i: after one pass every element tells how
/// often it was visited.
struct count_visits {
  std::int32_t* hits;
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const { hits[i] += static_cast<std::int32_t>(i % 7) + 1; }
};

/// The row-major position of each multi-index of @p ext, in row-major order,
/// through the strides @p str: what a strided copy reads or writes.
template <std::size_t R>
std::vector<std::size_t> offsets(std::array<index_t, R> const& ext, std::array<index_t, R> const& str) {
  std::vector<std::size_t> out;
  index_t const count = d::element_count(ext);
  for (index_t flat = 0; flat < count; ++flat) {
    index_t rem = flat;
    index_t off = 0;
    for (std::size_t k = R; k-- > 0;) {
      off += (rem % ext[k]) * str[k];
      rem /= ext[k];
    }
    out.push_back(static_cast<std::size_t>(off));
  }
  return out;
}

/// @p count values 0.5, 1.5, 2.5, …, as T.
template <class T>
std::vector<T> ramp(index_t count) {
  std::vector<T> v(static_cast<std::size_t>(count));
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<T>(static_cast<double>(k % 1000) + 0.5);
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------
// assign.hpp: backend_assign
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_assign on the flat path and the row path", "[backends][conformance][assign]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;

  SECTION("flat: a contiguous leaf and a scalar, every element at its flat index") {
    std::array<index_t, 3> const ext{2, 3, 4};
    auto const src = ramp<float>(24);
    buffer<B, float> const sb(src);
    auto const leaf = d::bind_strided<float, 3, 3>(sb.data(), ext, d::row_major_strides(ext), ext);
    d::map_evaluator<twice_plus, d::strided_evaluator<float, 3>, d::scalar_evaluator<float>> const ev{
        {}, {leaf, {0.25f}}};
    REQUIRE(ev.flat());
    buffer<B, float> dst(poisoned<float>(24));
    dt::backend_assign(B{}, dst.data(), ext, ev);
    std::vector<float> want(24);
    for (std::size_t k = 0; k < 24; ++k) want[k] = twice_plus{}(src[k], 0.25f);
    CHECK(first_difference(dst.host(), want) == "");
  }

  SECTION("rows: a transposed leaf plus a broadcast row and a broadcast column") {
    // m is [4, 3], read as [3, 4] through strides {1, 3}; row is [4]; column is [3, 1].
    auto const m = ramp<double>(12);
    std::vector<double> const row = {100, 200, 300, 400};
    std::vector<double> const column = {-1, -2, -3};
    buffer<B, double> const mb(m);
    buffer<B, double> const rb(row);
    buffer<B, double> const cb(column);
    std::array<index_t, 2> const out{3, 4};
    auto const a = d::bind_strided<double, 2, 2>(mb.data(), out, {1, 3}, out);
    auto const r = d::bind_strided<double, 2, 1>(rb.data(), std::array<index_t, 1>{4}, {1}, out);
    auto const c = d::bind_strided<double, 2, 2>(cb.data(), std::array<index_t, 2>{3, 1}, {1, 1}, out);
    using inner_t = d::map_evaluator<twice_plus, d::strided_evaluator<double, 2>, d::strided_evaluator<double, 2>>;
    d::map_evaluator<twice_plus, inner_t, d::strided_evaluator<double, 2>> const ev{{}, {inner_t{{}, {a, r}}, c}};
    REQUIRE_FALSE(ev.flat());
    buffer<B, double> dst(poisoned<double>(12));
    dt::backend_assign(B{}, dst.data(), out, ev);
    std::vector<double> want(12);
    for (std::size_t i = 0; i < 3; ++i) {
      for (std::size_t j = 0; j < 4; ++j) want[i * 4 + j] = (m[j * 3 + i] * 2 + row[j]) * 2 + column[i];
    }
    CHECK(first_difference(dst.host(), want) == "");
  }

  SECTION("rank 1 by rows: one element broadcast along the whole output") {
    buffer<B, std::int64_t> const one({7});
    std::array<index_t, 1> const out{6};
    auto const leaf = d::bind_strided<std::int64_t, 1, 1>(one.data(), std::array<index_t, 1>{1}, {1}, out);
    REQUIRE_FALSE(leaf.flat());
    buffer<B, std::int64_t> dst(poisoned<std::int64_t>(6));
    dt::backend_assign(B{}, dst.data(), out, leaf);
    CHECK(dst.host() == std::vector<std::int64_t>(6, 7));
  }

  SECTION("rank 0, empty extents, and a conversion of the element type") {
    buffer<B, float> one(poisoned<float>(1));
    dt::backend_assign(B{}, one.data(), std::array<index_t, 0>{}, d::scalar_evaluator<double>{2.75});
    CHECK(one.host() == std::vector<float>{2.75f});

    buffer<B, std::int32_t> none(poisoned<std::int32_t>(1));
    dt::backend_assign(B{}, none.data(), std::array<index_t, 2>{0, 5}, d::scalar_evaluator<double>{1.0});
    dt::backend_assign(B{}, none.data(), std::array<index_t, 2>{5, 0}, d::scalar_evaluator<double>{1.0});
    CHECK(none.host() == poisoned<std::int32_t>(1));

    // double into int32 truncates toward zero, as static_cast does.
    std::vector<double> const src = {2.7, -2.7, 0.5, -0.5, 1e9};
    buffer<B, double> const sb(src);
    std::array<index_t, 1> const ext{5};
    buffer<B, std::int32_t> ints(poisoned<std::int32_t>(5));
    dt::backend_assign(B{}, ints.data(), ext, d::bind_strided<double, 1, 1>(sb.data(), ext, {1}, ext));
    CHECK(ints.host() == std::vector<std::int32_t>{2, -2, 0, 0, 1000000000});
  }

  SECTION("above the parallel grain, both paths") {
    constexpr index_t nb = 3, nq = 130, nh = 257;  // 100230 elements
    std::array<index_t, 3> const ext{nb, nq, nh};
    auto const x = ramp<float>(nb * nq * nh);
    auto const bias = ramp<float>(nh);
    auto const column = ramp<float>(nq);
    buffer<B, float> const xb(x);
    buffer<B, float> const bb(bias);
    buffer<B, float> const cb(column);
    auto const leaf = d::bind_strided<float, 3, 3>(xb.data(), ext, d::row_major_strides(ext), ext);

    d::map_evaluator<twice_plus, d::strided_evaluator<float, 3>, d::scalar_evaluator<float>> const flat{
        {}, {leaf, {1.0f}}};
    REQUIRE(flat.flat());
    buffer<B, float> dst(poisoned<float>(nb * nq * nh));
    dt::backend_assign(B{}, dst.data(), ext, flat);
    std::vector<float> want(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) want[k] = x[k] * 2.0f + 1.0f;
    CHECK(first_difference(dst.host(), want) == "");

    // x * 2 + bias[h], then * 2 + column[q]: the bias broadcasts over Batch and
    // Queries, the column ([nq, 1]) over Batch and Hidden.
    auto const b = d::bind_strided<float, 3, 1>(bb.data(), std::array<index_t, 1>{nh}, {1}, ext);
    auto const c = d::bind_strided<float, 3, 2>(cb.data(), std::array<index_t, 2>{nq, 1}, {1, 1}, ext);
    using inner_t = d::map_evaluator<twice_plus, d::strided_evaluator<float, 3>, d::strided_evaluator<float, 3>>;
    d::map_evaluator<twice_plus, inner_t, d::strided_evaluator<float, 3>> const rows{{}, {inner_t{{}, {leaf, b}}, c}};
    REQUIRE_FALSE(rows.flat());
    dt::backend_assign(B{}, dst.data(), ext, rows);
    for (index_t i = 0; i < nb; ++i) {
      for (index_t q = 0; q < nq; ++q) {
        for (index_t h = 0; h < nh; ++h) {
          auto const k = static_cast<std::size_t>((i * nq + q) * nh + h);
          want[k] = (x[k] * 2.0f + bias[static_cast<std::size_t>(h)]) * 2.0f + column[static_cast<std::size_t>(q)];
        }
      }
    }
    CHECK(first_difference(dst.host(), want) == "");
  }
}

// ---------------------------------------------------------------------------
// assign.hpp: backend_fill, backend_copy, the host copies, backend_for_each
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_fill and backend_copy write n elements and no more",
                   "[backends][conformance][assign]", CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  for (index_t n : {index_t{0}, index_t{1}, index_t{17}, index_t{70001}}) {
    INFO(n << " elements");
    buffer<B, double> filled(poisoned<double>(n + 1));
    dt::backend_fill(B{}, filled.data(), n, 3.5);
    std::vector<double> want(static_cast<std::size_t>(n + 1), 3.5);
    want.back() = -12345;
    CHECK(first_difference(filled.host(), want) == "");

    buffer<B, std::int64_t> ints(poisoned<std::int64_t>(n + 1));
    dt::backend_fill(B{}, ints.data(), n, std::int64_t{-9});
    std::vector<std::int64_t> want_ints(static_cast<std::size_t>(n + 1), -9);
    want_ints.back() = -12345;
    CHECK(first_difference(ints.host(), want_ints) == "");

    std::vector<std::int64_t> src(static_cast<std::size_t>(n + 1));
    std::iota(src.begin(), src.end(), std::int64_t{-5});
    buffer<B, std::int64_t> const sb(src);
    buffer<B, std::int64_t> copied(poisoned<std::int64_t>(n + 1));
    dt::backend_copy(B{}, copied.data(), sb.data(), n);
    std::vector<std::int64_t> want_copy = src;
    want_copy.back() = -12345;
    CHECK(first_difference(copied.host(), want_copy) == "");
  }
}

TEMPLATE_TEST_CASE("conformance: backend_copy_from_host and backend_copy_to_host", "[backends][conformance][assign]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  for (index_t n : {index_t{0}, index_t{1}, index_t{1000}}) {
    INFO(n << " elements");
    auto const host = ramp<float>(n + 1);
    typename B::template storage<float> on_backend(n + 1);
    dt::backend_copy_from_host(B{}, on_backend.data(), poisoned<float>(n + 1).data(), n + 1);
    dt::backend_copy_from_host(B{}, on_backend.data(), host.data(), n);

    std::vector<float> back = poisoned<float>(n + 2);
    dt::backend_copy_to_host(B{}, back.data(), on_backend.data(), n + 1);
    std::vector<float> want = host;
    want[static_cast<std::size_t>(n)] = -12345;  // past the n copied from the host
    want.push_back(-12345);                      // past the n + 1 copied back
    CHECK(first_difference(back, want) == "");

    std::vector<float> part = poisoned<float>(n + 1);
    dt::backend_copy_to_host(B{}, part.data(), on_backend.data(), n);
    CHECK(first_difference(part, std::vector<float>(want.begin(), want.end() - 1)) == "");
  }
}

TEMPLATE_TEST_CASE("conformance: backend_for_each visits every index once", "[backends][conformance][assign]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  for (index_t n : {index_t{0}, index_t{1}, index_t{5}, index_t{100003}}) {
    INFO(n << " indices");
    buffer<B, std::int32_t> hits(std::vector<std::int32_t>(static_cast<std::size_t>(n + 1), 0));
    dt::backend_for_each(B{}, n, count_visits{hits.data()});
    std::vector<std::int32_t> want(static_cast<std::size_t>(n + 1), 0);
    for (index_t i = 0; i < n; ++i) want[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i % 7) + 1;
    CHECK(first_difference(hits.host(), want) == "");
  }
}

// ---------------------------------------------------------------------------
// strided_copy.hpp
// ---------------------------------------------------------------------------

TEMPLATE_TEST_CASE("conformance: backend_strided_copy", "[backends][conformance][strided_copy]",
                   CONFORMANCE_TEST_BACKENDS) {
  using B = TestType;
  // Copies ext from src (strides src_str) into a poisoned destination of
  // dst_size elements (strides dst_str), and compares the whole destination
  // with plain loops: the copied positions and the untouched ones.
  auto check = [&](auto zero, index_t src_size, index_t dst_size, auto const& ext, auto const& dst_str,
                   auto const& src_str) {
    using T = decltype(zero);
    auto const src = ramp<T>(src_size);
    buffer<B, T> const sb(src);
    buffer<B, T> dst(poisoned<T>(dst_size));
    dt::backend_strided_copy(B{}, dst.data(), dst_str, sb.data(), src_str, ext);
    std::vector<T> want = poisoned<T>(dst_size);
    auto const to = offsets(ext, dst_str);
    auto const from = offsets(ext, src_str);
    for (std::size_t k = 0; k < to.size(); ++k) want[to[k]] = src[from[k]];
    CHECK(first_difference(dst.host(), want) == "");
  };
  using a0 = std::array<index_t, 0>;
  using a1 = std::array<index_t, 1>;
  using a2 = std::array<index_t, 2>;
  using a3 = std::array<index_t, 3>;

  SECTION("rank 0 copies one element") { check(double{}, 1, 1, a0{}, a0{}, a0{}); }

  SECTION("a permutation: [2, 3, 4] copied as its [4, 3, 2] transpose") {
    check(float{}, 24, 24, a3{4, 3, 2}, a3{6, 2, 1}, a3{1, 4, 12});
    check(std::int64_t{}, 24, 24, a3{4, 3, 2}, a3{6, 2, 1}, a3{1, 4, 12});
  }

  SECTION("a source stride of 0 repeats its element") {
    check(std::int32_t{}, 3, 12, a2{3, 4}, a2{4, 1}, a2{1, 0});
    check(double{}, 4, 12, a2{3, 4}, a2{4, 1}, a2{0, 1});
  }

  SECTION("a strided destination leaves the elements between alone") {
    check(float{}, 5, 10, a1{5}, a1{2}, a1{1});
    check(double{}, 12, 30, a2{3, 4}, a2{10, 2}, a2{4, 1});
  }

  SECTION("an inner extent of 1 with strides other than 1") { check(double{}, 30, 4, a2{4, 1}, a2{1, 1}, a2{7, 3}); }

  SECTION("empty extents copy nothing") {
    check(float{}, 6, 6, a3{3, 0, 2}, a3{0, 2, 1}, a3{0, 2, 1});
    check(float{}, 6, 6, a2{3, 0}, a2{1, 1}, a2{1, 1});
  }

  SECTION("above the parallel grain: a [40, 33, 30] permutation and a transpose into a padded destination") {
    check(float{}, 40 * 33 * 30, 40 * 33 * 30, a3{30, 33, 40}, a3{33 * 40, 40, 1}, a3{1, 30, 33 * 30});
    check(std::int64_t{}, 300 * 130, 131 * 300, a2{130, 300}, a2{301, 1}, a2{1, 130});
  }
}

}  // namespace conformance
