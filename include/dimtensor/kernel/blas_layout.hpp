#pragma once
/// @file
/// @brief The operand of a batched matrix product, as every backend's
/// `backend_gemm_batched` takes it, and how BLAS (CBLAS, cuBLAS) sees a
/// strided matrix.  Kernel-level: no dims, no tensor, no backend.

#include <algorithm>
#include <climits>

#include <dimtensor/config.hpp>

namespace dimtensor::kernel {

/// @brief One operand of a batched matrix product: element (b, r, c) is
/// `data[offset(b) + r * row_stride + c * col_stride]`, offset(b) =
/// `b * batch_stride`.  Strides are in elements and may be anything (a
/// transposed or sliced view as it is).
///
/// The CPU's product also takes a batch of two levels (`batch_inner` > 0):
/// offset(b) = `(b / batch_inner) * outer_stride + (b % batch_inner) *
/// batch_stride`, as [Batch, Steps, Heads, Feat] reads its (Batch, Heads)
/// matrices in place; other backends get one level only.
template <class T>
struct strided_matrix {
  /// Element (0, 0, 0).
  T* data;
  /// Distance between consecutive matrices of the batch (of its inner level).
  index_t batch_stride;
  /// Distance between consecutive rows.
  index_t row_stride;
  /// Distance between consecutive columns.
  index_t col_stride;
  /// The matrices of the batch's inner level (0: the batch has one level).
  index_t batch_inner = 0;
  /// Distance between consecutive entries of the batch's outer level.
  index_t outer_stride = 0;

  /// The first element of matrix @p b.
  constexpr index_t offset(index_t b) const noexcept {
    return batch_inner == 0 ? b * batch_stride : (b / batch_inner) * outer_stride + (b % batch_inner) * batch_stride;
  }
};

/// The same matrices, transposed (rows and columns swapped; no copy).
template <class T>
constexpr strided_matrix<T> transposed(strided_matrix<T> const& m) noexcept {
  return {m.data, m.batch_stride, m.col_stride, m.row_stride, m.batch_inner, m.outer_stride};
}

/// @brief How BLAS sees one row-major matrix of rows x cols: as it is
/// (NoTrans, leading dimension = row stride) or as the transpose of a
/// row-major one (Trans, leading dimension = column stride).
struct blas_view {
  /// False for layouts BLAS cannot take (both strides non-unit, overlapping
  /// or negative strides).
  bool ok;
  /// Whether BLAS reads it transposed.
  bool trans;
  /// The leading dimension.
  index_t ld;
};

/// The BLAS view of a rows x cols matrix with these strides.
inline blas_view blas_layout(index_t rows, index_t cols, index_t row_stride, index_t col_stride) {
  index_t const one = 1;
  if ((col_stride == 1 || cols == 1) && (rows == 1 || row_stride >= std::max(one, cols))) {
    return {true, false, rows == 1 ? std::max(one, cols) : row_stride};
  }
  if ((row_stride == 1 || rows == 1) && (cols == 1 || col_stride >= std::max(one, rows))) {
    return {true, true, cols == 1 ? std::max(one, rows) : col_stride};
  }
  return {false, false, 0};
}

/// Whether @p v can be passed to BLAS as an `int`.
inline bool fits_int(index_t v) { return v >= 0 && v <= INT_MAX; }

}  // namespace dimtensor::kernel
