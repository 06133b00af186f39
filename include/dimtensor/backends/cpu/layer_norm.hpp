#pragma once
/// @file
/// @brief Layer normalization over the last dim of row-major [rows, n],
/// forward and backward, each one pass per row (nn::layer_norm runs them
/// on the CPU): the runtime compiles them per instruction set
/// (backends/cpu/dispatch.hpp), like softmax.hpp.
///
/// Forward, as torch.nn.functional.layer_norm: per row the mean μ and the
/// reciprocal standard deviation ρ = 1/√(var + eps) (biased variance,
/// two passes), y = (x - μ) ρ w + b; μ and ρ are kept for the backward
/// pass.  Backward, with x̂ = (x - μ) ρ and ĝ = g w:
/// dx = ρ (ĝ - mean(ĝ) - x̂ mean(ĝ x̂)), dw = Σ_rows g x̂, db = Σ_rows g; the
/// column sums are taken over fixed blocks of rows and then in block order,
/// so they are the same whatever the thread count.
///
/// Only the runtime includes this header (src/cpu/kernels.inl); programs
/// call its kernels through `kernels<T>()`.

/// Defined once the header is included (src/cpu/kernels.inl checks the order).
#define DIMTENSOR_BACKENDS_CPU_LAYER_NORM_HPP 1

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {
namespace layer_norm_detail {

/// Σ p[i] over n elements, in 16 running sums (a loop that vectorizes).
template <class T>
T row_sum(T const* p, index_t n) {
  constexpr index_t lanes = 16;
  T acc[lanes] = {};
  index_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (index_t l = 0; l < lanes; ++l) acc[l] += p[i + l];
  }
  T s = 0;
  for (index_t l = 0; l < lanes; ++l) s += acc[l];
  for (; i < n; ++i) s += p[i];
  return s;
}

/// Σ (p[i] - c)² over n elements.
template <class T>
T row_square_sum(T const* p, T c, index_t n) {
  constexpr index_t lanes = 16;
  T acc[lanes] = {};
  index_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (index_t l = 0; l < lanes; ++l) {
      T const d = p[i + l] - c;
      acc[l] += d * d;
    }
  }
  T s = 0;
  for (index_t l = 0; l < lanes; ++l) s += acc[l];
  for (; i < n; ++i) s += (p[i] - c) * (p[i] - c);
  return s;
}

/// Σ a[i] b[i] over n elements.
template <class T>
T row_dot(T const* a, T const* b, index_t n) {
  constexpr index_t lanes = 16;
  T acc[lanes] = {};
  index_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    for (index_t l = 0; l < lanes; ++l) acc[l] += a[i + l] * b[i + l];
  }
  T s = 0;
  for (index_t l = 0; l < lanes; ++l) s += acc[l];
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// The rows summed together into one partial row of dw and db.
inline index_t rows_per_block(index_t rows) { return std::max<index_t>(32, (rows + 127) / 128); }

}  // namespace layer_norm_detail

/// @brief y = (x - μ) ρ w + b per row of [rows, n]; writes μ and ρ per row.
template <class T>
void layer_norm_rows(T const* x, T const* w, T const* b, T* y, T* mean, T* rstd, index_t rows, index_t n, T eps) {
  using namespace layer_norm_detail;
  parallel_for(rows, 4 * n, [=](index_t first, index_t last) {
    for (index_t r = first; r < last; ++r) {
      T const* const xr = x + r * n;
      T* const yr = y + r * n;
      T const mu = row_sum(xr, n) / static_cast<T>(n);
      T const rho = T(1) / std::sqrt(row_square_sum(xr, mu, n) / static_cast<T>(n) + eps);
      mean[r] = mu;
      rstd[r] = rho;
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) yr[i] = (xr[i] - mu) * rho * w[i] + b[i];
    }
  });
}

/// @brief The backward pass of layer_norm_rows from the result's gradient
/// g: dx (unless null), and dw and db (unless null), each written.
template <class T>
void layer_norm_backward_rows(T const* x, T const* w, T const* mean, T const* rstd, T const* g, T* dx, T* dw, T* db,
                              index_t rows, index_t n) {
  using namespace layer_norm_detail;
  if (dx != nullptr) {
    parallel_for(rows, 6 * n, [=](index_t first, index_t last) {
      std::vector<T> scratch(2 * static_cast<std::size_t>(n));
      T* const gw = scratch.data();
      T* const xh = gw + n;
      for (index_t r = first; r < last; ++r) {
        T const* const xr = x + r * n;
        T const* const gr = g + r * n;
        T* const dr = dx + r * n;
        T const mu = mean[r];
        T const rho = rstd[r];
        DIMTENSOR_SIMD
        for (index_t i = 0; i < n; ++i) {
          gw[i] = gr[i] * w[i];
          xh[i] = (xr[i] - mu) * rho;
        }
        T const inv_n = T(1) / static_cast<T>(n);
        T const m1 = row_sum(gw, n) * inv_n;
        T const m2 = row_dot(gw, xh, n) * inv_n;
        DIMTENSOR_SIMD
        for (index_t i = 0; i < n; ++i) dr[i] = rho * (gw[i] - m1 - xh[i] * m2);
      }
    });
  }
  if (dw == nullptr && db == nullptr) return;
  index_t const per = rows_per_block(rows);
  index_t const blocks = (rows + per - 1) / per;
  std::vector<T> partial(2 * static_cast<std::size_t>(blocks) * static_cast<std::size_t>(n), T(0));
  T* const pw = partial.data();
  T* const pb = pw + blocks * n;
  parallel_for(blocks, per * n * 2, [=](index_t first, index_t last) {
    for (index_t k = first; k < last; ++k) {
      T* const sw = pw + k * n;
      T* const sb = pb + k * n;
      for (index_t r = k * per; r < std::min(rows, (k + 1) * per); ++r) {
        T const* const xr = x + r * n;
        T const* const gr = g + r * n;
        T const mu = mean[r];
        T const rho = rstd[r];
        DIMTENSOR_SIMD
        for (index_t i = 0; i < n; ++i) {
          sw[i] += gr[i] * ((xr[i] - mu) * rho);
          sb[i] += gr[i];
        }
      }
    }
  });
  if (dw != nullptr) std::fill(dw, dw + n, T(0));
  if (db != nullptr) std::fill(db, db + n, T(0));
  for (index_t k = 0; k < blocks; ++k) {
    if (dw != nullptr) {
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) dw[i] += pw[k * n + i];
    }
    if (db != nullptr) {
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) db[i] += pb[k * n + i];
    }
  }
}

}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
