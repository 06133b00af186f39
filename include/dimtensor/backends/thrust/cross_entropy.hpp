#pragma once
/// @file
/// @brief The Thrust backend's cross-entropy along one dim: the fused forward
/// pass (log-sum-exp, then the label's logit picked out of it) and its
/// backward pass, over row-major logits viewed as [outer, n, inner] with the
/// class dim in the middle and one label per (outer, inner) position.
///
/// The forward pass runs one thread per (outer, inner) line and keeps each
/// line's maximum and log-sum of exponentials (summed in double, as the CPU
/// backend's), so the backward pass, one thread per element, forms
/// softmax − one-hot from the logits without a second reduction.

#include <cmath>

#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor {

namespace backends::thrust {

/// One line of backend_cross_entropy: its maximum, log-sum-exp and loss.
template <class T, class L>
struct cross_entropy_line {
  T const* in;      ///< The [outer, n, inner] logits.
  L const* labels;  ///< One class index per line.
  T* loss;          ///< The loss per line.
  T* shift;         ///< The maximum per line.
  T* logs;          ///< log Σ exp(x − max) per line.
  index_t n;        ///< The number of classes.
  index_t inner;    ///< The product of the extents after the class dim.

  /// Computes line @p line (= o * inner + i).
  DIMTENSOR_HOST_DEVICE void operator()(index_t line) const {
    index_t const o = line / inner;
    index_t const i = line - o * inner;
    T const* x = in + o * n * inner + i;
    T m = x[0];
    for (index_t j = 1; j < n; ++j) m = x[j * inner] > m ? x[j * inner] : m;
    double s = 0;
    for (index_t j = 0; j < n; ++j) s += std::exp(static_cast<double>(x[j * inner] - m));
    T const log_sum = static_cast<T>(std::log(s));
    shift[line] = m;
    logs[line] = log_sum;
    loss[line] = (m - x[static_cast<index_t>(labels[line]) * inner]) + log_sum;
  }
};

/// One element of backend_cross_entropy_backward.
template <class T, class L>
struct cross_entropy_backward_element {
  T const* in;      ///< The [outer, n, inner] logits.
  L const* labels;  ///< One class index per line.
  T const* shift;   ///< The maximum per line.
  T const* logs;    ///< log Σ exp(x − max) per line.
  T const* g;       ///< The gradient of the losses.
  index_t g_step;   ///< 1: one gradient per line; 0: one for all.
  T scale;          ///< A factor on every gradient.
  T* out;           ///< The [outer, n, inner] gradient of the logits.
  index_t n;        ///< The number of classes.
  index_t inner;    ///< The product of the extents after the class dim.

  /// Writes flat element @p e of the gradient.
  DIMTENSOR_HOST_DEVICE void operator()(index_t e) const {
    index_t const i = e % inner;
    index_t const r = e / inner;  // o * n + j
    index_t const o = r / n;
    index_t const j = r - o * n;
    index_t const k = o * inner + i;
    T const p = std::exp((in[e] - shift[k]) - logs[k]);
    T const hot = static_cast<index_t>(labels[k]) == j ? T(1) : T(0);
    out[e] = (p - hot) * (g[k * g_step] * scale);
  }
};

}  // namespace backends::thrust

/// @brief Cross-entropy of logits @p in ([outer, n, inner]) against
/// @p labels (one class index in [0, n) per (outer, inner) position, checked
/// by the caller): with m the row's maximum and l = log Σ exp(x − m),
/// `loss[k] = (m − x[k, labels[k]]) + l`, m in @p shift and l in @p logs
/// (all [outer * inner]).  As PyTorch's log_softmax, m − x is formed before
/// l is added, so large logits lose no digits to a rounded log-sum-exp.
template <class System, class T, class L>
void backend_cross_entropy(thrust_backend<System>, T const* in, L const* labels, T* loss, T* shift, T* logs,
                           index_t outer, index_t n, index_t inner) {
  if (outer == 0 || n == 0 || inner == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      outer * inner, backends::thrust::cross_entropy_line<T, L>{in, labels, loss, shift, logs, n, inner});
}

/// @brief The gradient of backend_cross_entropy's losses for the logits:
/// `out[o, j, i] = (exp((x[o, j, i] − shift[k]) − logs[k]) − [j == labels[k]]) · g[k · g_step] · scale`
/// with k = o · inner + i.  A per-position gradient has @p g_step 1; one
/// gradient shared by every position (a mean or a sum) has g_step 0.
template <class System, class T, class L>
void backend_cross_entropy_backward(thrust_backend<System>, T const* in, L const* labels, T const* shift,
                                    T const* logs, T const* g, index_t g_step, T scale, T* out, index_t outer,
                                    index_t n, index_t inner) {
  if (outer == 0 || n == 0 || inner == 0) return;
  backends::thrust::for_each_index<thrust_backend<System>>(
      outer * n * inner, backends::thrust::cross_entropy_backward_element<T, L>{in, labels, shift, logs, g, g_step,
                                                                                 scale, out, n, inner});
}

}  // namespace dimtensor
