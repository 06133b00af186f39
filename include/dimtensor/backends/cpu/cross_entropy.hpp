#pragma once
/// @file
/// @brief The CPU backend's cross-entropy along one dim: the fused forward
/// pass (log-sum-exp, then the label's logit picked out of it) and its
/// backward pass, over row-major logits viewed as [outer, n, inner] with the
/// class dim in the middle and one label per (outer, inner) position.
///
/// The forward pass keeps each row's maximum and log-sum of exponentials,
/// so the backward pass forms softmax − one-hot from the logits without a
/// second reduction and without a stored softmax of the logits' size.

#include <cmath>
#include <cstddef>
#include <type_traits>
#include <vector>

#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dimtensor {

namespace backends::cpu {

/// e^x: float's branch-free exp (kernel/math.hpp, within 2 ulp), which
/// vectorizes; double's std::exp.
template <class T>
DIMTENSOR_ALWAYS_INLINE inline T cross_entropy_exp(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return math::exp(x);
  } else {
    return static_cast<T>(std::exp(static_cast<double>(x)));
  }
}

/// @brief Rows [begin, end) of the outer index of backend_cross_entropy.
///
/// Sums accumulate in double: the loss is an average of many rows and is
/// compared against PyTorch's to 1e-5 relative to it.  The exponentials of
/// a row are formed first, in one loop that vectorizes (float), then added
/// in four running sums.
template <class T, class L>
void cross_entropy_chunk(index_t begin, index_t end, T const* in, L const* labels, T* loss, T* shift, T* logs,
                         index_t n, index_t inner) {
  if (inner == 1) {
    std::vector<T> e(static_cast<std::size_t>(n));
    for (index_t o = begin; o < end; ++o) {
      T const* x = in + o * n;
      T m = x[0];
      for (index_t j = 1; j < n; ++j) m = x[j] > m ? x[j] : m;
      T* const ev = e.data();
      DIMTENSOR_SIMD
      for (index_t j = 0; j < n; ++j) ev[j] = cross_entropy_exp(x[j] - m);
      double part[4] = {0, 0, 0, 0};
      index_t j = 0;
      for (; j + 4 <= n; j += 4) {
        for (index_t l = 0; l < 4; ++l) part[l] += static_cast<double>(ev[j + l]);
      }
      for (; j < n; ++j) part[0] += static_cast<double>(ev[j]);
      double const s = (part[0] + part[1]) + (part[2] + part[3]);
      T const log_sum = static_cast<T>(std::log(s));
      shift[o] = m;
      logs[o] = log_sum;
      loss[o] = (m - x[static_cast<index_t>(labels[o])]) + log_sum;
    }
    return;
  }
  // inner > 1: the class dim is strided; sweep it with inner contiguous.
  std::vector<T> m(static_cast<std::size_t>(inner));
  std::vector<double> s(static_cast<std::size_t>(inner));
  for (index_t o = begin; o < end; ++o) {
    T const* x = in + o * n * inner;
    for (index_t i = 0; i < inner; ++i) m[i] = x[i];
    for (index_t j = 1; j < n; ++j) {
      T const* row = x + j * inner;
      for (index_t i = 0; i < inner; ++i) m[i] = row[i] > m[i] ? row[i] : m[i];
    }
    for (index_t i = 0; i < inner; ++i) s[i] = 0;
    for (index_t j = 0; j < n; ++j) {
      T const* row = x + j * inner;
      for (index_t i = 0; i < inner; ++i) s[i] += std::exp(static_cast<double>(row[i] - m[i]));
    }
    for (index_t i = 0; i < inner; ++i) {
      index_t const k = o * inner + i;
      T const log_sum = static_cast<T>(std::log(s[i]));
      shift[k] = m[i];
      logs[k] = log_sum;
      loss[k] = (m[i] - x[static_cast<index_t>(labels[k]) * inner + i]) + log_sum;
    }
  }
}

}  // namespace backends::cpu

/// @brief Cross-entropy of logits @p in ([outer, n, inner]) against
/// @p labels (one class index in [0, n) per (outer, inner) position, checked
/// by the caller): with m the row's maximum and l = log Σ exp(x − m),
/// `loss[k] = (m − x[k, labels[k]]) + l`, m in @p shift and l in @p logs
/// (all [outer * inner]).  As PyTorch's log_softmax, m − x is formed before
/// l is added, so large logits lose no digits to a rounded log-sum-exp.
template <class T, class L>
void backend_cross_entropy(cpu, T const* in, L const* labels, T* loss, T* shift, T* logs, index_t outer, index_t n,
                           index_t inner) {
  if (outer == 0 || n == 0 || inner == 0) return;
  backends::cpu::parallel_for(outer, n * inner, [&](index_t b, index_t e) {
    backends::cpu::cross_entropy_chunk(b, e, in, labels, loss, shift, logs, n, inner);
  });
}

/// @brief The gradient of backend_cross_entropy's losses for the logits:
/// `out[o, j, i] = (exp((x[o, j, i] − shift[k]) − logs[k]) − [j == labels[k]]) · g[k · g_step] · scale`
/// with k = o · inner + i.  A per-position gradient has @p g_step 1; one
/// gradient shared by every position (a mean or a sum) has g_step 0.
template <class T, class L>
void backend_cross_entropy_backward(cpu, T const* in, L const* labels, T const* shift, T const* logs, T const* g,
                                    index_t g_step, T scale, T* out, index_t outer, index_t n, index_t inner) {
  if (outer == 0 || n == 0 || inner == 0) return;
  backends::cpu::parallel_for(outer, n * inner, [&](index_t begin, index_t end) {
    for (index_t o = begin; o < end; ++o) {
      if (inner == 1) {  // one loop along the row, which vectorizes; the label's entry set after it
        T const* const x = in + o * n;
        T* const row = out + o * n;
        T const sh = shift[o];
        T const lg = logs[o];
        T const gs = g[o * g_step] * scale;
        DIMTENSOR_SIMD
        for (index_t j = 0; j < n; ++j) row[j] = backends::cpu::cross_entropy_exp((x[j] - sh) - lg) * gs;
        auto const label = static_cast<index_t>(labels[o]);
        row[label] = (backends::cpu::cross_entropy_exp((x[label] - sh) - lg) - T(1)) * gs;
        continue;
      }
      for (index_t j = 0; j < n; ++j) {
        index_t const base = (o * n + j) * inner;
        for (index_t i = 0; i < inner; ++i) {
          index_t const k = o * inner + i;
          T const p = backends::cpu::cross_entropy_exp((in[base + i] - shift[k]) - logs[k]);
          T const hot = static_cast<index_t>(labels[k]) == j ? T(1) : T(0);
          out[base + i] = (p - hot) * (g[k * g_step] * scale);
        }
      }
    }
  });
}

}  // namespace dimtensor
