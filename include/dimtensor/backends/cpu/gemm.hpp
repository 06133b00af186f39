#pragma once
/// @file
/// @brief The CPU backend's batched matrix product: C[b] = A[b] · B[b] for
/// strided operands, through CBLAS (the BLAS chosen at configure time,
/// blas.hpp) for float and double when `DIMTENSOR_HAS_CBLAS` is 1, else a
/// portable blocked loop.
///
/// Threads: one threading system, the backend's OpenMP threads.  A batch
/// of products is shared among them (batch entries, and blocks of columns
/// or rows when there are fewer entries than threads), each calling a
/// single-threaded BLAS.  OpenBLAS's own thread pool, running beside
/// OpenMP's, was measured 1.6–2.6× slower on multi-head attention (both
/// pools spin while they wait, on the same cores), so before its products
/// dimtensor sets the BLAS to one thread (`detail::single_threaded_blas`:
/// `openblas_set_num_threads(1)`, `bli_thread_set_num_threads(1)` or
/// `mkl_set_num_threads(1)`, guarded by a cheap getter).  A program that
/// also calls the BLAS itself sets the count it wants before its own calls.

#include <algorithm>
#include <climits>
#include <cstddef>
#include <type_traits>

#include <dimtensor/backends/cpu/allocator.hpp>
#include <dimtensor/backends/cpu/blas.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/blas_layout.hpp>

namespace dimtensor {

namespace backends::cpu {

// The operand type and the BLAS layout rules live in kernel/blas_layout.hpp,
// shared with the Thrust backend; the CPU backend's names for them:
using kernel::strided_matrix;
using kernel::transposed;
namespace detail {
using kernel::blas_layout;
using kernel::blas_view;
using kernel::fits_int;
}  // namespace detail

/// @brief The fewest rows (or columns) a product is cut into when there
/// are fewer products than threads: thinner slices would leave BLAS's
/// kernels too little to block over.
inline constexpr index_t gemm_min_block = 64;

namespace detail {

// A scratch buffer from the caching allocator (so repeated products reuse
// it); none at all for 0 elements.
template <class T>
class scratch {
 public:
  explicit scratch(index_t n)
      : bytes_(static_cast<std::size_t>(n > 0 ? n : 0) * sizeof(T)),
        data_(n > 0 ? static_cast<T*>(caching_allocator::instance().allocate(bytes_)) : nullptr) {}
  scratch(scratch const&) = delete;
  scratch& operator=(scratch const&) = delete;
  ~scratch() { caching_allocator::instance().deallocate(data_, bytes_); }
  T* data() const noexcept { return data_; }

 private:
  std::size_t bytes_;
  T* data_;
};

template <class T>
void fill_zero(index_t batch, index_t m, index_t n, strided_matrix<T> c) {
  for (index_t b = 0; b < batch; ++b) {
    for (index_t i = 0; i < m; ++i) {
      T* row = c.data + c.offset(b) + i * c.row_stride;
      for (index_t j = 0; j < n; ++j) row[j * c.col_stride] = T(0);
    }
  }
}

// Row blocks of the portable kernel: a block of C (rows x cols) is kept in a
// local accumulator while a panel of B (depth x cols) streams past it.
inline constexpr index_t ref_rows = 16;
inline constexpr index_t ref_cols = 256;
inline constexpr index_t ref_depth = 128;

}  // namespace detail

/// @brief The portable batched product C[b] = A[b] · B[b] (A: m x k,
/// B: k x n, C: m x n), correct for any strides and every element type;
/// with @p accumulate, C[b] += A[b] · B[b].
///
/// Loop order i-k-j on blocks, so the innermost loop runs along a row of B
/// and of an accumulator and vectorizes.  Threads split the batch and the
/// row blocks.  It is what integer types and builds without CBLAS use; it is
/// public so tests can check both paths.
template <class T>
void gemm_reference(index_t batch, index_t m, index_t n, index_t k, strided_matrix<T const> a,
                    strided_matrix<T const> b, strided_matrix<T> c, bool accumulate = false) {
  using detail::ref_cols;
  using detail::ref_depth;
  using detail::ref_rows;
  if (batch <= 0 || m <= 0 || n <= 0) return;
  index_t const row_blocks = (m + ref_rows - 1) / ref_rows;
  parallel_for(batch * row_blocks, ref_rows * n * std::max<index_t>(k, 1), [&](index_t begin, index_t end) {
    T acc[ref_rows * ref_cols];
    for (index_t task = begin; task < end; ++task) {
      index_t const bi = task / row_blocks;
      index_t const i0 = (task % row_blocks) * ref_rows;
      index_t const rows = std::min(ref_rows, m - i0);
      T const* const ab = a.data + a.offset(bi);
      T const* const bb = b.data + b.offset(bi);
      T* const cb = c.data + c.offset(bi);
      for (index_t j0 = 0; j0 < n; j0 += ref_cols) {
        index_t const cols = std::min(ref_cols, n - j0);
        for (index_t x = 0; x < rows * ref_cols; ++x) acc[x] = T(0);
        for (index_t p0 = 0; p0 < k; p0 += ref_depth) {
          index_t const depth = std::min(ref_depth, k - p0);
          for (index_t i = 0; i < rows; ++i) {
            T* const out = acc + i * ref_cols;
            T const* const arow = ab + (i0 + i) * a.row_stride;
            for (index_t p = p0; p < p0 + depth; ++p) {
              T const aip = arow[p * a.col_stride];
              T const* const brow = bb + p * b.row_stride + j0 * b.col_stride;
              if (b.col_stride == 1) {
                DIMTENSOR_SIMD
                for (index_t j = 0; j < cols; ++j) out[j] += aip * brow[j];
              } else {
                index_t const cs = b.col_stride;
                for (index_t j = 0; j < cols; ++j) out[j] += aip * brow[j * cs];
              }
            }
          }
        }
        for (index_t i = 0; i < rows; ++i) {
          T* const crow = cb + (i0 + i) * c.row_stride + j0 * c.col_stride;
          T const* const in = acc + i * ref_cols;
          if (accumulate) {
            for (index_t j = 0; j < cols; ++j) crow[j * c.col_stride] += in[j];
          } else if (c.col_stride == 1) {
            DIMTENSOR_SIMD
            for (index_t j = 0; j < cols; ++j) crow[j] = in[j];
          } else {
            for (index_t j = 0; j < cols; ++j) crow[j * c.col_stride] = in[j];
          }
        }
      }
    }
  });
}

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS

namespace detail {

// y = op(M)·x + beta·y through CBLAS's matrix-vector product (row-major M
// of rows x cols with leading dimension ld, transposed when @p t).
template <class T>
void blas_gemv(bool t, index_t rows, index_t cols, T const* mat, index_t ld, T const* x, index_t incx, T* y,
               index_t incy, T beta) {
  auto const t_ = t ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasRowMajor, t_, static_cast<int>(rows), static_cast<int>(cols), 1.0f, mat, static_cast<int>(ld), x,
                static_cast<int>(incx), beta, y, static_cast<int>(incy));
  } else {
    cblas_dgemv(CblasRowMajor, t_, static_cast<int>(rows), static_cast<int>(cols), 1.0, mat, static_cast<int>(ld), x,
                static_cast<int>(incx), beta, y, static_cast<int>(incy));
  }
}

/// C = A·B + beta·C through CBLAS (row-major; A and B transposed when
/// @p ta / @p tb), float or double.  A product with one row or one column
/// (a decoder's step: one token through a layer) goes through the
/// matrix-vector product, which streams the matrix once where the
/// matrix-matrix one first copies it into its blocks.
template <class T>
void blas_gemm(bool ta, bool tb, index_t m, index_t n, index_t k, T const* a, index_t lda, T const* b, index_t ldb,
               T* c, index_t ldc, T beta = T(0)) {
  if (m == 1 && k > 0) {  // C's row (n) = B^T · A's row; A(0, p) is a[p], or a[p·lda] when A is stored transposed
    if (tb) {
      blas_gemv<T>(false, n, k, b, ldb, a, ta ? lda : 1, c, 1, beta);  // B stored n x k
    } else {
      blas_gemv<T>(true, k, n, b, ldb, a, ta ? lda : 1, c, 1, beta);  // B stored k x n
    }
    return;
  }
  if (n == 1 && k > 0) {  // C's column (m, stride ldc) = A · B's column; B(p, 0) is b[p·ldb], or b[p] when transposed
    if (ta) {
      blas_gemv<T>(true, k, m, a, lda, b, tb ? 1 : ldb, c, ldc, beta);  // A stored k x m
    } else {
      blas_gemv<T>(false, m, k, a, lda, b, tb ? 1 : ldb, c, ldc, beta);  // A stored m x k
    }
    return;
  }
  auto const ta_ = ta ? CblasTrans : CblasNoTrans;
  auto const tb_ = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, ta_, tb_, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta_, tb_, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
  }
}

// Copies a batch of rows x cols matrices into a contiguous row-major buffer.
template <class T>
strided_matrix<T const> pack(index_t batch, index_t rows, index_t cols, strided_matrix<T const> src, T* dst) {
  parallel_for(batch * rows, cols, [&](index_t begin, index_t end) {
    for (index_t t = begin; t < end; ++t) {
      index_t const bi = t / rows;
      index_t const r = t % rows;
      T const* in = src.data + src.offset(bi) + r * src.row_stride;
      T* out = dst + t * cols;
      for (index_t j = 0; j < cols; ++j) out[j] = in[j * src.col_stride];
    }
  });
  return {dst, rows * cols, cols, 1};
}

}  // namespace detail

/// @brief The batched product through CBLAS (float and double), for
/// operands of any strides: a layout BLAS takes is passed as it is, with
/// Trans/NoTrans chosen from the strides (a transposed view is never
/// copied); any other is packed into a scratch buffer first.  C may be
/// row-major or column-major (then C^T = B^T · A^T is computed); any other
/// layout goes through a scratch buffer.
template <class T>
  requires(std::is_same_v<T, float> || std::is_same_v<T, double>)
void gemm_blas(index_t batch, index_t m, index_t n, index_t k, strided_matrix<T const> a, strided_matrix<T const> b,
               strided_matrix<T> c, bool accumulate = false) {
  if (batch <= 0 || m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate) detail::fill_zero(batch, m, n, c);
    return;
  }
  // An output BLAS cannot write: compute into a row-major scratch, then scatter.
  auto const cv = detail::blas_layout(m, n, c.row_stride, c.col_stride);
  if (!cv.ok) {
    detail::scratch<T> tmp(batch * m * n);
    gemm_blas<T>(batch, m, n, k, a, b, {tmp.data(), m * n, n, 1});
    parallel_for(batch * m, n, [&](index_t begin, index_t end) {
      for (index_t t = begin; t < end; ++t) {
        T* out = c.data + c.offset(t / m) + (t % m) * c.row_stride;
        T const* in = tmp.data() + t * n;
        if (accumulate) {
          for (index_t j = 0; j < n; ++j) out[j * c.col_stride] += in[j];
        } else {
          for (index_t j = 0; j < n; ++j) out[j * c.col_stride] = in[j];
        }
      }
    });
    return;
  }
  if (cv.trans) {  // C is column-major: write C^T (n x m, row-major) = B^T · A^T
    gemm_blas<T>(batch, n, m, k, transposed(b), transposed(a), transposed(c), accumulate);
    return;
  }
  auto av = detail::blas_layout(m, k, a.row_stride, a.col_stride);
  auto bv = detail::blas_layout(k, n, b.row_stride, b.col_stride);
  if (!detail::fits_int(m) || !detail::fits_int(n) || !detail::fits_int(k) || !detail::fits_int(cv.ld) ||
      (av.ok && !detail::fits_int(av.ld)) || (bv.ok && !detail::fits_int(bv.ld))) {
    gemm_reference<T>(batch, m, n, k, a, b, c, accumulate);  // too large for CBLAS's int arguments
    return;
  }
  index_t const a_count = av.ok ? 0 : batch * m * k;
  index_t const b_count = bv.ok ? 0 : batch * k * n;
  detail::scratch<T> packed(a_count + b_count);
  if (!av.ok) {
    a = detail::pack(batch, m, k, a, packed.data());
    av = detail::blas_layout(m, k, a.row_stride, a.col_stride);
  }
  if (!bv.ok) {
    b = detail::pack(batch, k, n, b, packed.data() + a_count);
    bv = detail::blas_layout(k, n, b.row_stride, b.col_stride);
  }
  detail::single_threaded_blas();
  // With fewer products than threads, each is cut into `blocks` pieces:
  // of columns when they are wide enough (every piece then packs the whole
  // of A and its own part of B, measured as fast as OpenBLAS's own threads),
  // else of rows; no piece thinner than gemm_min_block.
  index_t const threads = get_num_threads();
  index_t const wanted = batch < threads ? (threads + batch - 1) / batch : 1;
  bool const by_rows = n / wanted < gemm_min_block && m > n;
  index_t const side = by_rows ? m : n;
  index_t const blocks = std::min(wanted, std::max<index_t>(1, side / gemm_min_block));
  index_t const block = (side + blocks - 1) / blocks;
  parallel_for(batch * blocks, block * (by_rows ? n : m) * k, [&](index_t begin, index_t end) {
    for (index_t task = begin; task < end; ++task) {
      index_t const bi = task / blocks;
      index_t const first = (task % blocks) * block;
      index_t const count = std::min(block, side - first);
      if (count <= 0) continue;
      T const* pa = a.data + a.offset(bi) + (by_rows ? first * a.row_stride : 0);
      T const* pb = b.data + b.offset(bi) + (by_rows ? 0 : first * b.col_stride);
      T* pc = c.data + c.offset(bi) + (by_rows ? first * c.row_stride : first * c.col_stride);
      detail::blas_gemm<T>(av.trans, bv.trans, by_rows ? count : m, by_rows ? n : count, k, pa, av.ld, pb, bv.ld, pc,
                           cv.ld, accumulate ? T(1) : T(0));
    }
  });
}

#endif  // DIMTENSOR_HAS_CBLAS

}  // namespace backends::cpu

/// @brief The CPU backend's batched matrix product: for every b in
/// [0, batch), C[b] (m x n) = A[b] (m x k) · B[b] (k x n), overwriting C,
/// or with @p accumulate added to C (BLAS's beta = 1: a bias C was filled
/// with costs no pass of its own).
///
/// Operands are strided (`backends::cpu::strided_matrix`), so transposed
/// and sliced views are read in place.  float and double go through CBLAS
/// when `DIMTENSOR_HAS_CBLAS` is 1; everything else through
/// `backends::cpu::gemm_reference`.
template <class T>
void backend_gemm_batched(cpu, index_t batch, index_t m, index_t n, index_t k,
                          backends::cpu::strided_matrix<T const> a, backends::cpu::strided_matrix<T const> b,
                          backends::cpu::strided_matrix<T> c, bool accumulate = false) {
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    backends::cpu::gemm_blas<T>(batch, m, n, k, a, b, c, accumulate);
    return;
  }
#endif
  backends::cpu::gemm_reference<T>(batch, m, n, k, a, b, c, accumulate);
}

}  // namespace dimtensor
