#pragma once
/// @file
/// @brief How an operation's gradient reaches tensors: recording a node,
/// handing a gradient to an operand, gradients of broadcast operands summed
/// back to their shape.
///
/// An operation records itself with `autograd::record(name, result, rule,
/// operands...)` when `autograd::should_record(operands...)`; its rule is a
/// closure called with the result's gradient (a tensor of the result's type)
/// that calls `autograd::propagate(operand, gradient_expression)` for each
/// operand.  An operand is a tensor (its gradient accumulates) or a
/// constant.  A gradient expression may have more dims than the operand
/// (the operand was broadcast: the gradient is summed over those positions)
/// or extent 1 where the operand has more (it is expanded).
///
/// Evaluating a lazy expression records a program instead
/// (tensor/expression.hpp, autograd/program.hpp).

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/broadcast.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/kernel/math.hpp>
#include <dimtensor/tensor/expression.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace autograd {

/// @brief A node named @p name whose backward calls @p rule with the
/// result's gradient, a tensor of type @p Out and extents @p ext.  Its
/// operands' states go to `inputs` (collect_states); `record` does both.
template <class Out, class Rule>
std::shared_ptr<node> make_rule_node(std::string_view name, typename Out::extents_type const& ext, Rule rule) {
  auto typed = [rule = std::move(rule), ext](tensor_state const& s) {
    if (s.grad_type != &type_tag<typename Out::storage_type>) {
      throw value_error("backward: a gradient of another type than the result (a backward rule is wrong)");
    }
    Out const g(std::static_pointer_cast<typename Out::storage_type>(s.grad),
                static_cast<typename Out::value_type*>(s.grad_data), ext, dimtensor::detail::row_major_strides(ext));
    rule(g);
  };
  return std::make_shared<rule_node<decltype(typed)>>(name, std::move(typed));
}

/// @brief Records @p result as made by the operation @p name from
/// @p operands; @p rule is called, during backward, with the result's
/// gradient (a tensor of the result's type).  Call only when
/// `should_record(operands...)`.  The rule must not keep @p result itself
/// (that would be a cycle): keep `result.detach()`.
template <class Out, class Rule, class... X>
void record(std::string_view name, Out& result, Rule rule, X const&... operands) {
  std::shared_ptr<node> n = make_rule_node<Out>(name, result.extents(), std::move(rule));
  (detail::collect_states(n->inputs, operands), ...);
  result.attach_grad_fn(std::move(n));
}

/// @brief Records @p out as a view of @p in: element i of @p out is
/// element `offset + Σ i_k strides[k]` of @p in laid out densely (row-major
/// in its extents), so the gradient is written back there.  Call only when
/// `should_record(in)`.
template <class Out, class In>
void record_view(std::string_view name, Out& out, In const& in, std::array<index_t, Out::rank> const& strides,
                 index_t offset = 0) {
  if constexpr (Out::rank > kernel::max_rank) {
    throw_rank_not_recorded("a view", Out::rank);
  } else {
    out.attach_grad_fn(make_view_node<typename Out::backend, typename Out::value_type>(
        name, in.grad_state(), in.size(), detail::padded(out.extents(), index_t{1}),
        detail::padded(strides, index_t{0}), offset));
  }
}

namespace detail {

template <std::size_t R>
constexpr bool any_of(std::array<bool, R> const& a) {
  for (bool b : a) {
    if (b) return true;
  }
  return false;
}

/// Adds the evaluator @p ev (bound to the extents of @p x) into x's gradient.
template <class X, class Ev>
void accumulate_evaluator(X const& x, Ev const& ev) {
  using T = typename X::value_type;
  using B = typename X::backend;
  using storage_t = typename X::storage_type;
  constexpr std::size_t r = X::rank;
  tensor_state& s = *x.grad_state();
  auto const& ext = x.extents();
  if (!s.grad) {
    auto out = std::make_shared<storage_t>(dimtensor::detail::element_count(ext));
    backend_assign(B{}, out->data(), ext, ev);
    s.grad_data = out->data();
    s.grad_type = &type_tag<storage_t>;
    s.grad = std::move(out);
  } else {
    // The gradient is dense and its own: each element reads itself only.
    T* const acc = static_cast<T*>(s.grad_data);
    using sum_ev = dimtensor::detail::map_evaluator<call::plus, dimtensor::detail::strided_evaluator<T, r>, Ev>;
    auto const self = dimtensor::detail::bind_strided<T, r, r>(acc, ext, dimtensor::detail::row_major_strides(ext), ext);
    backend_assign(B{}, acc, ext, sum_ev{call::plus{}, {self, ev}});
  }
}

template <class X, std::size_t N>
void check_gradient_fits(X const& x, std::array<index_t, N> const& g) {
  static_assert(N <= X::rank);
  auto const& xe = x.extents();
  for (std::size_t i = 0; i < N; ++i) {
    index_t const want = xe[i + X::rank - N];
    if (g[i] != want && g[i] != 1) {
      throw shape_error("backward: a gradient of extent " + std::to_string(g[i]) + " for dimension " +
                        std::string(dimtensor::detail::names_of<typename X::specs>::value[i + X::rank - N]) +
                        " of extent " + std::to_string(want) + " in " +
                        dimtensor::detail::shape_string<typename X::specs>(xe) + " (a backward rule is wrong)");
    }
  }
}

}  // namespace detail

/// @brief Adds the gradient @p g (an expression of dims that @p x
/// broadcasts to, or that broadcast to x's) into the gradient of the tensor
/// @p x, summing over the positions x was broadcast over.
template <class X, class G>
void accumulate(X const& x, G const& g) {
  using T = typename X::value_type;
  using B = typename X::backend;
  using XS = typename X::specs;
  using GS = typename G::specs;
  static_assert(std::is_same_v<typename G::value_type, T>, "dimtensor internal: a gradient of another element type");
  static_assert(dimtensor::detail::broadcast<XS, GS>::ok, "dimtensor internal: a gradient that does not fit its tensor");
  constexpr std::size_t rx = X::rank;
  constexpr std::size_t rg = G::rank;
  constexpr auto positions = detail::broadcast_positions<XS, GS>();
  if constexpr (!detail::any_of(positions)) {
    detail::check_gradient_fits(x, g.extents());
    detail::accumulate_evaluator(x, g.template evaluator<rx>(x.extents()));
  } else if constexpr (rg > kernel::max_rank) {
    throw_rank_not_recorded("a broadcast gradient", rg);
  } else {
    auto const dense = tensor_for<G>(g).contiguous();
    padded_extents ext = detail::padded(dense.extents(), index_t{1});
    auto const summed = sum_broadcast<B, T>(dense.data(), ext, detail::padded(positions, false));
    T const* const in = summed.second;
    // The reduced gradient, without the leading positions x lacks.
    std::array<index_t, rx> tail{};
    for (std::size_t i = 0; i < rx; ++i) tail[i] = ext[i + kernel::max_rank - rx];
    detail::check_gradient_fits(x, tail);
    auto const strides = dimtensor::detail::row_major_strides(tail);
    detail::accumulate_evaluator(x, dimtensor::detail::bind_strided<T, rx, rx>(in, tail, strides, x.extents()));
  }
}

/// @brief Hands the gradient @p g to the operand @p x: a tensor accumulates
/// it (summed over what x was broadcast over), a constant drops it.
template <class X, class G>
void propagate(X const& x, G const& g) {
  static_assert(!is_map_expr_v<X>, "dimtensor internal: a rule's operand is evaluated before it is recorded");
  if constexpr (is_tensor_v<X>) {
    if (x.requires_grad()) accumulate(x, g);
  }
}

namespace detail {

}  // namespace detail
}  // namespace autograd
}  // namespace dimtensor
