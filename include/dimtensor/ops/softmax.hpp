#pragma once
/// @file
/// @brief `softmax<D>(x)` and `log_softmax<D>(x)` along any named dim.
///
/// Both are numerically stable: they subtract the maximum along D before
/// exponentiating, and `log_softmax` is computed as
/// `x - max - log(sum(exp(x - max)))`, never as `log(softmax(x))`, so large
/// logits give neither overflow nor NaN.  They are evaluation boundaries:
/// they accept any expression of float or double elements, evaluate it, and
/// return a new tensor of the same dims.  A D that is not a dim of x is a
/// compile error (`not_a_dimension_of<call::softmax, D, dims<...>>`), and so
/// is an integer tensor (`needs_floating_point<call::softmax, int>`).
///
/// Both are differentiable: the gradient is computed from the result alone
/// (softmax: `y * (g - sum_D(g * y))`; log_softmax: `g - exp(y) * sum_D(g)`),
/// by the backend's fused backward kernels.

#include <cstddef>
#include <type_traits>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/autograd/rules/line.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// The rule of a softmax along D of x: D is a dim of x, the elements are
/// floating point (the diagnosis that names @p Call, `ill_formed` for a
/// rejected operand, or void).
template <class Call, class D, class X>
constexpr auto softmax_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!contains_v<D, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<Call, D, typename X::specs>>{};
  } else if constexpr (!std::is_floating_point_v<typename X::value_type>) {
    return std::type_identity<diagnostic::needs_floating_point<Call, typename X::value_type>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// softmax (or log_softmax when Log) of @p x along D; checks done.
template <bool Log, class D, class E>
auto softmax_unchecked(E const& x) {
  auto const in = eval(x).contiguous();
  using out_t = std::remove_cvref_t<decltype(in)>;
  out_t out(uninitialized, in.extents());
  kernel::lines const s = kernel::lines_along<index_of_v<D, typename E::specs>>(in.extents());
  if constexpr (Log) {
    backend_log_softmax(typename E::backend{}, in.data(), out.data(), s.outer, s.n, s.inner);
  } else {
    backend_softmax(typename E::backend{}, in.data(), out.data(), s.outer, s.n, s.inner);
  }
  // Recorded on the evaluated operand: a lazy operand's own node carries the
  // gradient on to its tensors.
  if (autograd::should_record(in)) {
    // The rule reads the result only; of `in`, only its place in the graph is kept.
    typename autograd::line_node<typename E::backend, typename E::value_type>::saved keep;
    keep.keep = out.storage();
    keep.data = out.data();
    autograd::record_lines(Log ? "log_softmax" : "softmax", out, in,
                           Log ? autograd::line_rule::log_softmax : autograd::line_rule::softmax, s, std::move(keep));
  }
  return out;
}

template <class Call, bool Log, class D, class E>
auto softmax_along(E const& x) {
  if constexpr (rejects(softmax_diagnosis<Call, D, E>())) {
    return ill_formed{};
  } else {
    return checked<Call>([&](auto const& x) { return softmax_unchecked<Log, D>(x); }, x);
  }
}

}  // namespace detail

/// @brief Softmax along D: `exp(x - max) / sum(exp(x - max))`, the sums
/// taken along D.  `softmax<KVPairs>(scores)` normalizes each row of
/// attention scores; D may be any dim, not only the last.
template <class D, detail::Operand E>
auto softmax(E const& x) {
  return detail::softmax_along<call::softmax, false, D>(x);
}

/// @brief log_softmax along D: `x - max - log(sum(exp(x - max)))`.
template <class D, detail::Operand E>
auto log_softmax(E const& x) {
  return detail::softmax_along<call::log_softmax, true, D>(x);
}

}  // namespace dimtensor
