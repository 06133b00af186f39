// The batched matrix product kernels of backends/cpu/gemm.hpp, both paths
// (the portable gemm_reference and, when built with CBLAS, gemm_blas and the
// dispatching backend_gemm_batched), against a naive triple loop, for
// operands of every layout the kernels distinguish.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/backends/cpu/gemm.hpp>

namespace gemm_test {

using dimtensor::index_t;
using dimtensor::backends::cpu::strided_matrix;

// How one operand's batch of rows x cols matrices lies in its buffer.
enum class layout {
  row_major,     // BLAS NoTrans
  col_major,     // a transposed view: BLAS Trans
  padded_rows,   // a slice of wider rows: NoTrans with a larger leading dimension
  both_strided,  // neither stride is 1: BLAS cannot take it as it is
  batch_inner,   // [rows, cols, batch] storage: batch stride 1
};

std::string name(layout l) {
  switch (l) {
    case layout::row_major: return "row_major";
    case layout::col_major: return "col_major";
    case layout::padded_rows: return "padded_rows";
    case layout::both_strided: return "both_strided";
    case layout::batch_inner: return "batch_inner";
  }
  return "?";
}

struct strides {
  index_t batch, row, col, size;
};

strides make_strides(layout l, index_t batch, index_t rows, index_t cols) {
  strides s{};
  switch (l) {
    case layout::row_major: s = {rows * cols, cols, 1, 0}; break;
    case layout::col_major: s = {rows * cols, 1, rows, 0}; break;
    case layout::padded_rows: s = {rows * (cols + 3) + 5, cols + 3, 1, 0}; break;
    case layout::both_strided: s = {rows * (2 * cols + 1) + 7, 2 * cols + 1, 2, 0}; break;
    case layout::batch_inner: s = {1, cols * batch, batch, 0}; break;
  }
  s.size = (batch == 0 || rows == 0 || cols == 0)
               ? 1
               : (batch - 1) * s.batch + (rows - 1) * s.row + (cols - 1) * s.col + 1;
  return s;
}

template <class T>
struct operand {
  std::vector<T> buffer;
  strides st;
  strided_matrix<T> view() { return {buffer.data(), st.batch, st.row, st.col}; }
  strided_matrix<T const> cview() const { return {buffer.data(), st.batch, st.row, st.col}; }
  T at(index_t b, index_t r, index_t c) const { return buffer[b * st.batch + r * st.row + c * st.col]; }
};

template <class T>
operand<T> random_operand(layout l, index_t batch, index_t rows, index_t cols, std::mt19937& rng) {
  operand<T> o;
  o.st = make_strides(l, batch, rows, cols);
  o.buffer.resize(static_cast<std::size_t>(o.st.size));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (auto& x : o.buffer) x = static_cast<T>(dist(rng));
  } else {
    std::uniform_int_distribution<int> dist(-9, 9);
    for (auto& x : o.buffer) x = static_cast<T>(dist(rng));
  }
  return o;
}

// A sentinel that a kernel must overwrite (beta = 0) or leave alone (gaps).
template <class T>
T sentinel() {
  return static_cast<T>(42);
}

enum class path { reference, dispatch, blas };

template <class T>
void run(path p, index_t batch, index_t m, index_t n, index_t k, operand<T> const& a, operand<T> const& b,
         operand<T>& c, bool accumulate) {
  switch (p) {
    case path::reference:
      dimtensor::backends::cpu::gemm_reference<T>(batch, m, n, k, a.cview(), b.cview(), c.view(), accumulate);
      break;
    case path::dispatch:
      dimtensor::backend_gemm_batched<T>(dimtensor::cpu{}, batch, m, n, k, a.cview(), b.cview(), c.view(),
                                         accumulate);
      break;
    case path::blas:
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
      if constexpr (std::is_floating_point_v<T>) {
        dimtensor::backends::cpu::gemm_blas<T>(batch, m, n, k, a.cview(), b.cview(), c.view(), accumulate);
      }
#endif
      break;
  }
}

// Checks C against a naive triple loop (accumulated in long double), and
// that the elements of C's buffer outside the matrices were not touched.
// With @p accumulate, C starts as the sentinel everywhere and the product
// is added to it.
template <class T>
void check(path p, layout la, layout lb, layout lc, index_t batch, index_t m, index_t n, index_t k,
           bool accumulate = false) {
  INFO("A " << name(la) << ", B " << name(lb) << ", C " << name(lc) << ", batch " << batch << ", m " << m << ", n "
            << n << ", k " << k << ", accumulate " << accumulate);
  std::mt19937 rng(static_cast<unsigned>(batch * 1000003 + m * 10007 + n * 101 + k));
  auto const a = random_operand<T>(la, batch, m, k, rng);
  auto const b = random_operand<T>(lb, batch, k, n, rng);
  operand<T> c;
  c.st = make_strides(lc, batch, m, n);
  c.buffer.assign(static_cast<std::size_t>(c.st.size), sentinel<T>());
  run(p, batch, m, n, k, a, b, c, accumulate);

  std::vector<char> written(c.buffer.size(), 0);
  for (index_t bi = 0; bi < batch; ++bi) {
    for (index_t i = 0; i < m; ++i) {
      for (index_t j = 0; j < n; ++j) {
        long double want = accumulate ? static_cast<long double>(sentinel<T>()) : 0;
        for (index_t q = 0; q < k; ++q) {
          want += static_cast<long double>(a.at(bi, i, q)) * static_cast<long double>(b.at(bi, q, j));
        }
        T const got = c.at(bi, i, j);
        written[static_cast<std::size_t>(bi * c.st.batch + i * c.st.row + j * c.st.col)] = 1;
        if constexpr (std::is_floating_point_v<T>) {
          // |error| <= k * eps * sum |a||b|, and |a|, |b| <= 1; plus the rounding of C's first value
          double const start = accumulate ? static_cast<double>(sentinel<T>()) : 0.0;
          double const tol = (static_cast<double>(k + 1) + start) * std::numeric_limits<T>::epsilon() * 4;
          if (std::abs(static_cast<double>(got) - static_cast<double>(want)) > tol) {
            FAIL_CHECK("C(" << bi << ", " << i << ", " << j << ") = " << got << ", want "
                            << static_cast<double>(want));
            return;
          }
        } else {
          if (got != static_cast<T>(want)) {
            FAIL_CHECK("C(" << bi << ", " << i << ", " << j << ") = " << got << ", want "
                            << static_cast<long long>(want));
            return;
          }
        }
      }
    }
  }
  for (std::size_t x = 0; x < c.buffer.size(); ++x) {
    if (!written[x] && c.buffer[x] != sentinel<T>()) {
      FAIL_CHECK("element " << x << " of C's buffer lies outside the matrices but was written");
      return;
    }
  }
  SUCCEED();
}

constexpr layout all_layouts[] = {layout::row_major, layout::col_major, layout::padded_rows, layout::both_strided,
                                  layout::batch_inner};

template <class T>
void check_all_layouts(path p, index_t batch, index_t m, index_t n, index_t k) {
  for (layout la : all_layouts) {
    for (layout lb : all_layouts) {
      for (layout lc : all_layouts) {
        check<T>(p, la, lb, lc, batch, m, n, k);
      }
    }
  }
}

}  // namespace gemm_test

using namespace gemm_test;

TEMPLATE_TEST_CASE("gemm_reference matches a naive loop for every operand layout", "[gemm]", float, double,
                   std::int32_t, std::int64_t) {
  SECTION("odd sizes, batch 3") { check_all_layouts<TestType>(path::reference, 3, 5, 7, 3); }
  SECTION("batch 1") { check_all_layouts<TestType>(path::reference, 1, 4, 3, 6); }
  SECTION("vectors and scalars") {
    check_all_layouts<TestType>(path::reference, 2, 1, 9, 5);
    check_all_layouts<TestType>(path::reference, 2, 6, 1, 5);
    check_all_layouts<TestType>(path::reference, 2, 1, 1, 1);
  }
  SECTION("sizes past the block boundaries (16 rows, 256 columns, depth 128)") {
    for (layout la : {layout::row_major, layout::col_major}) {
      for (layout lb : {layout::row_major, layout::both_strided}) {
        check<TestType>(path::reference, la, lb, layout::row_major, 2, 33, 261, 131);
      }
    }
    check<TestType>(path::reference, layout::row_major, layout::row_major, layout::col_major, 1, 17, 257, 129);
  }
}

TEMPLATE_TEST_CASE("backend_gemm_batched matches a naive loop for every operand layout", "[gemm]", float, double,
                   std::int32_t, std::int64_t) {
  SECTION("odd sizes, batch 3") { check_all_layouts<TestType>(path::dispatch, 3, 5, 7, 3); }
  SECTION("batch 1") { check_all_layouts<TestType>(path::dispatch, 1, 4, 3, 6); }
  SECTION("vectors") {
    check_all_layouts<TestType>(path::dispatch, 2, 1, 9, 5);
    check_all_layouts<TestType>(path::dispatch, 2, 6, 1, 5);
  }
  SECTION("a batch of many small products (one per thread)") {
    check<TestType>(path::dispatch, layout::row_major, layout::col_major, layout::row_major, 97, 9, 11, 7);
  }
  SECTION("large products cut into blocks of rows or columns across the threads") {
    constexpr dimtensor::index_t tall = 3 * dimtensor::backends::cpu::gemm_min_block + 5;
    check<TestType>(path::dispatch, layout::row_major, layout::row_major, layout::row_major, 1, tall, 80, 60);
    check<TestType>(path::dispatch, layout::col_major, layout::both_strided, layout::col_major, 1, tall, 80, 60);
    check<TestType>(path::dispatch, layout::row_major, layout::col_major, layout::row_major, 1, 70, tall, 60);
    check<TestType>(path::dispatch, layout::col_major, layout::row_major, layout::col_major, 1, 70, tall, 60);
    check<TestType>(path::dispatch, layout::row_major, layout::row_major, layout::row_major, 3, 70, 80, 60);
  }
}

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
TEMPLATE_TEST_CASE("gemm_blas matches a naive loop for every operand layout", "[gemm][cblas]", float, double) {
  SECTION("odd sizes, batch 3") { check_all_layouts<TestType>(path::blas, 3, 5, 7, 3); }
  SECTION("batch 1") { check_all_layouts<TestType>(path::blas, 1, 4, 3, 6); }
  SECTION("vectors and scalars") {
    check_all_layouts<TestType>(path::blas, 2, 1, 9, 5);
    check_all_layouts<TestType>(path::blas, 2, 6, 1, 5);
    check_all_layouts<TestType>(path::blas, 2, 1, 1, 1);
  }
  SECTION("large") {
    check<TestType>(path::blas, layout::col_major, layout::padded_rows, layout::row_major, 2, 65, 129, 70);
  }
  // One row or one column goes through BLAS's matrix-vector product (a
  // decoder's step), with each operand's strides as its vector increment.
  SECTION("one row or one column, added into C, and a long row cut across the threads") {
    for (layout la : all_layouts) {
      for (layout lb : all_layouts) {
        for (layout lc : all_layouts) {
          check<TestType>(path::blas, la, lb, lc, 2, 1, 9, 5, true);
          check<TestType>(path::blas, la, lb, lc, 2, 6, 1, 5, true);
        }
      }
    }
    constexpr dimtensor::index_t wide = 3 * dimtensor::backends::cpu::gemm_min_block + 5;
    for (layout lb : {layout::row_major, layout::col_major, layout::padded_rows}) {
      check<TestType>(path::blas, layout::row_major, lb, layout::row_major, 1, 1, wide, 70);
      check<TestType>(path::blas, layout::col_major, lb, layout::row_major, 1, 1, wide, 70, true);
      check<TestType>(path::blas, lb, layout::col_major, layout::col_major, 1, wide, 1, 70);
    }
  }
}
#endif

// accumulate (BLAS's beta = 1) is how nn::linear's bias, filled into C
// first, costs no pass of its own.
TEMPLATE_TEST_CASE("with accumulate, every path adds the product into C", "[gemm]", float, double, std::int32_t) {
  std::vector<path> paths{path::reference, path::dispatch};
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  if constexpr (std::is_floating_point_v<TestType>) paths.push_back(path::blas);
#endif
  constexpr dimtensor::index_t tall = 3 * dimtensor::backends::cpu::gemm_min_block + 5;
  for (path p : paths) {
    for (layout lc : all_layouts) check<TestType>(p, layout::row_major, layout::col_major, lc, 2, 5, 7, 3, true);
    check<TestType>(p, layout::row_major, layout::row_major, layout::row_major, 1, tall, 80, 60, true);
    check<TestType>(p, layout::col_major, layout::row_major, layout::row_major, 1, 70, tall, 60, true);
    check<TestType>(p, layout::row_major, layout::row_major, layout::row_major, 2, 4, 3, 0, true);  // C stays
  }
}

TEMPLATE_TEST_CASE("batched products with an extent 0", "[gemm]", float, double, std::int32_t) {
  std::vector<path> paths{path::reference, path::dispatch};
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  if (std::is_floating_point_v<TestType>) paths.push_back(path::blas);
#endif
  SECTION("k = 0 gives zeros") {
    for (path p : paths) {
      for (layout lc : {layout::row_major, layout::col_major, layout::both_strided}) {
        check<TestType>(p, layout::row_major, layout::row_major, lc, 2, 3, 4, 0);
      }
    }
  }
  SECTION("m, n or batch 0 writes nothing") {
    for (path p : paths) {
      check<TestType>(p, layout::row_major, layout::col_major, layout::row_major, 2, 0, 4, 3);
      check<TestType>(p, layout::row_major, layout::col_major, layout::row_major, 2, 3, 0, 3);
      check<TestType>(p, layout::row_major, layout::col_major, layout::row_major, 0, 3, 4, 3);
    }
  }
}
