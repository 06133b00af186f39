#pragma once
/// @file
/// @brief The Thrust backend's batched matrix product: cuBLAS's strided
/// batched GEMM for float and double under CUDA, the CPU backend's threaded
/// BLAS on Thrust's host systems (their memory is host memory), and a
/// reference kernel (one element of C per index) for other element types.

#include <array>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include <dimtensor/backends/cpu/gemm.hpp>  // the host systems' products
#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/strided_copy.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/blas_layout.hpp>

#if defined(__CUDACC__)
#include <cublas_v2.h>
#endif

namespace dimtensor {

namespace backends::thrust {

/// One element of C[b] = A[b] · B[b]: a dot product of length k.
template <class T>
struct gemm_element {
  /// Rows of C.
  index_t m;
  /// Columns of C.
  index_t n;
  /// The contracted extent.
  index_t k;
  /// The left operand.
  kernel::strided_matrix<T const> a;
  /// The right operand.
  kernel::strided_matrix<T const> b;
  /// The result.
  kernel::strided_matrix<T> c;

  /// Writes element @p i of C (batch-major, then row, then column).
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    index_t const bi = i / (m * n);
    index_t const r = (i / n) % m;
    index_t const col = i % n;
    T const* pa = a.data + bi * a.batch_stride + r * a.row_stride;
    T const* pb = b.data + bi * b.batch_stride + col * b.col_stride;
    T acc = T(0);
    for (index_t p = 0; p < k; ++p) acc += pa[p * a.col_stride] * pb[p * b.row_stride];
    c.data[bi * c.batch_stride + r * c.row_stride + col * c.col_stride] = acc;
  }
};

/// A contiguous [batch, rows, cols] copy of a strided operand, on Backend.
template <class Backend, class T>
struct packed_matrix {
  /// The packed copy, when one was needed.
  std::unique_ptr<typename Backend::template storage<T>> copy;
  /// What BLAS reads: the operand itself or its copy.
  kernel::strided_matrix<T const> view;

  /// Packs @p m when BLAS cannot read its strides.
  packed_matrix(index_t batch, index_t rows, index_t cols, kernel::strided_matrix<T const> m) : view(m) {
    if (kernel::blas_layout(rows, cols, m.row_stride, m.col_stride).ok) return;
    copy = std::make_unique<typename Backend::template storage<T>>(batch * rows * cols);
    backend_strided_copy(Backend{}, copy->data(), std::array<index_t, 3>{rows * cols, cols, 1}, m.data,
                         std::array<index_t, 3>{m.batch_stride, m.row_stride, m.col_stride},
                         std::array<index_t, 3>{batch, rows, cols});
    view = {copy->data(), rows * cols, cols, 1};
  }
};

#if defined(__CUDACC__)
/// Throws device_error naming @p call when @p status is not CUBLAS_STATUS_SUCCESS.
inline void check_cublas(cublasStatus_t status, char const* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw device_error(std::string("dimtensor: ") + call + " failed: cuBLAS status " +
                       std::to_string(static_cast<int>(status)));
  }
}

/// The calling thread's cuBLAS handle, created on first use.
inline cublasHandle_t cublas_handle() {
  struct owner {
    cublasHandle_t handle = nullptr;
    owner() { check_cublas(cublasCreate(&handle), "cublasCreate"); }
    owner(owner const&) = delete;
    owner& operator=(owner const&) = delete;
    ~owner() { cublasDestroy(handle); }
  };
  thread_local owner o;
  return o.handle;
}

/// C = A · B through cuBLAS's strided batched GEMM; false when a size does
/// not fit cuBLAS's int arguments (the caller falls back to the kernel).
/// cuBLAS is column-major: a row-major C is computed as Cᵀ = Bᵀ · Aᵀ.
template <class T>
bool cublas_gemm(index_t batch, index_t m, index_t n, index_t k, kernel::strided_matrix<T const> a,
                 kernel::strided_matrix<T const> b, kernel::strided_matrix<T> c) {
  kernel::blas_view const la = kernel::blas_layout(m, k, a.row_stride, a.col_stride);
  kernel::blas_view const lb = kernel::blas_layout(k, n, b.row_stride, b.col_stride);
  kernel::blas_view const lc = kernel::blas_layout(m, n, c.row_stride, c.col_stride);
  using kernel::fits_int;
  if (!(fits_int(m) && fits_int(n) && fits_int(k) && fits_int(batch) && fits_int(la.ld) && fits_int(lb.ld) &&
        fits_int(lc.ld))) {
    return false;
  }
  T const one = T(1);
  T const zero = T(0);
  auto const op = [](bool t) { return t ? CUBLAS_OP_T : CUBLAS_OP_N; };
  cublasHandle_t const h = cublas_handle();
  auto call = [&](cublasOperation_t op1, cublasOperation_t op2, index_t rows, index_t cols, T const* x, index_t ldx,
                  index_t sx, T const* y, index_t ldy, index_t sy) {
    if constexpr (std::is_same_v<T, float>) {
      return cublasSgemmStridedBatched(h, op1, op2, static_cast<int>(rows), static_cast<int>(cols),
                                       static_cast<int>(k), &one, x, static_cast<int>(ldx), sx, y,
                                       static_cast<int>(ldy), sy, &zero, c.data, static_cast<int>(lc.ld),
                                       c.batch_stride, static_cast<int>(batch));
    } else {
      return cublasDgemmStridedBatched(h, op1, op2, static_cast<int>(rows), static_cast<int>(cols),
                                       static_cast<int>(k), &one, x, static_cast<int>(ldx), sx, y,
                                       static_cast<int>(ldy), sy, &zero, c.data, static_cast<int>(lc.ld),
                                       c.batch_stride, static_cast<int>(batch));
    }
  };
  if (!lc.trans) {
    // C row-major: Cᵀ (n × m, column-major) = op(B) · op(A).
    check_cublas(call(op(lb.trans), op(la.trans), n, m, b.data, lb.ld, b.batch_stride, a.data, la.ld,
                      a.batch_stride),
                 "cublasGemmStridedBatched");
  } else {
    // C column-major: C (m × n) = op(A) · op(B).
    check_cublas(call(op(!la.trans), op(!lb.trans), m, n, a.data, la.ld, a.batch_stride, b.data, lb.ld,
                      b.batch_stride),
                 "cublasGemmStridedBatched");
  }
  return true;
}
#endif

}  // namespace backends::thrust

/// @brief The Thrust backend's batched matrix product: for every b in
/// [0, batch), C[b] (m × n) = A[b] (m × k) · B[b] (k × n), overwriting C.
///
/// Under CUDA, float and double go through cuBLAS's strided batched GEMM
/// (operands whose strides it cannot take are packed first); on Thrust's
/// host systems through the CPU backend's BLAS; other element types through
/// a reference kernel.
template <class System, class T>
void backend_gemm_batched(thrust_backend<System>, index_t batch, index_t m, index_t n, index_t k,
                          kernel::strided_matrix<T const> a, kernel::strided_matrix<T const> b,
                          kernel::strided_matrix<T> c) {
  using backend = thrust_backend<System>;
  if (batch * m * n == 0) return;
  if constexpr (System::host_accessible) {
    backend_gemm_batched(cpu{}, batch, m, n, k, a, b, c);
  } else {
#if defined(__CUDACC__)
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      backends::thrust::packed_matrix<backend, T> const pa(batch, m, k, a);
      backends::thrust::packed_matrix<backend, T> const pb(batch, k, n, b);
      if (kernel::blas_layout(m, n, c.row_stride, c.col_stride).ok) {
        if (backends::thrust::cublas_gemm<T>(batch, m, n, k, pa.view, pb.view, c)) return;
      } else {
        typename backend::template storage<T> tmp(batch * m * n);
        kernel::strided_matrix<T> const packed{tmp.data(), m * n, n, 1};
        if (backends::thrust::cublas_gemm<T>(batch, m, n, k, pa.view, pb.view, packed)) {
          backend_strided_copy(backend{}, c.data, std::array<index_t, 3>{c.batch_stride, c.row_stride, c.col_stride},
                               static_cast<T const*>(tmp.data()), std::array<index_t, 3>{m * n, n, 1},
                               std::array<index_t, 3>{batch, m, n});
          return;
        }
      }
    }
#endif
    backends::thrust::for_each_index<backend>(batch * m * n,
                                              backends::thrust::gemm_element<T>{m, n, k, a, b, c});
  }
}

}  // namespace dimtensor
