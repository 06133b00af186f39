#pragma once
/// @file
/// @brief How gradients reach tensors: recording a node, handing a gradient
/// to an operand, gradients of broadcast operands summed back to their
/// shape, and the recording of evaluated elementwise expressions as
/// programs (autograd/program.hpp).
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
/// Evaluating a lazy expression records one `program_node`: the tree as
/// data (function codes, operand slots, leaves bound to the result's
/// extents), whose backward needs no code of the expression's type.
///
/// Included at the end of core/tensor.hpp; the expression types are
/// declared here and complete wherever a recording is instantiated.

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
#include <dimtensor/core/evaluator.hpp>
#include <dimtensor/core/math.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>

namespace dimtensor {

template <class Backend, class T>
class scalar_expr;
template <class Op, class... Args>
class map_expr;

namespace autograd {

/// Whether X is a lazy elementwise node.
template <class X>
inline constexpr bool is_map_expr_v = false;
/// A map_expr is one.
template <class Op, class... A>
inline constexpr bool is_map_expr_v<map_expr<Op, A...>> = true;

/// Whether a tensor of @p x (a tensor or a lazy expression) requires gradients;
/// anything else (constants, index tensors of integers) does not.
template <class X>
bool any_requires_grad(X const& x) {
  if constexpr (is_tensor_v<X>) {
    return x.requires_grad();
  } else if constexpr (is_map_expr_v<X>) {
    return std::apply([](auto const&... a) { return (any_requires_grad(a) || ...); }, x.operands());
  } else {
    return false;
  }
}

/// Whether an operation on @p operands records a node: grad mode is on and
/// one of them requires gradients.
template <class... X>
bool should_record(X const&... operands) {
  return is_grad_enabled() && (any_requires_grad(operands) || ...);
}

namespace detail {

template <class X>
void collect_states(std::vector<std::shared_ptr<tensor_state>>& out, X const& x) {
  if constexpr (is_tensor_v<X>) {
    if (x.requires_grad()) out.push_back(x.grad_state());
  } else if constexpr (is_map_expr_v<X>) {
    std::apply([&](auto const&... a) { (collect_states(out, a), ...); }, x.operands());
  }
}

}  // namespace detail

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

namespace detail {

/// The positions of a gradient of dims GS that a tensor of dims XS was
/// broadcast over: GS's leading positions XS lacks, and those where XS has
/// the static extent 1 and GS another.
template <class XS, class GS>
constexpr std::array<bool, dimtensor::detail::rank_v<GS>> broadcast_positions() {
  constexpr std::size_t rg = dimtensor::detail::rank_v<GS>;
  constexpr std::size_t rx = dimtensor::detail::rank_v<XS>;
  std::array<bool, rg> out{};
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (
        [&] {
          if constexpr (I + rx < rg) {
            out[I] = true;
          } else {
            using xs = dimtensor::detail::spec_at<XS, I + rx - rg>;
            using gs = dimtensor::detail::spec_at<GS, I>;
            out[I] = static_extent_v<xs> == 1 && static_extent_v<gs> != 1;
          }
        }(),
        ...);
  }(std::make_index_sequence<rg>{});
  return out;
}

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
    using sum_ev = dimtensor::detail::map_evaluator<fn::plus, dimtensor::detail::strided_evaluator<T, r>, Ev>;
    auto const self = dimtensor::detail::bind_strided<T, r, r>(acc, ext, dimtensor::detail::row_major_strides(ext), ext);
    backend_assign(B{}, acc, ext, sum_ev{fn::plus{}, {self, ev}});
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
  } else {
    auto const dense = tensor_for<G>(g).contiguous();
    std::array<index_t, rg> ext = dense.extents();
    using storage_t = typename B::template storage<T>;
    std::shared_ptr<storage_t> current;
    T const* in = dense.data();
    // Sum each run of consecutive broadcast positions in one pass.
    for (std::size_t p = 0; p < rg;) {
      if (!positions[p]) {
        ++p;
        continue;
      }
      std::size_t q = p;
      index_t outer = 1, n = 1, inner = 1;
      while (q < rg && positions[q]) n *= ext[q++];
      for (std::size_t d = 0; d < p; ++d) outer *= ext[d];
      for (std::size_t d = q; d < rg; ++d) inner *= ext[d];
      auto next = std::make_shared<storage_t>(outer * inner);
      backend_sum(B{}, in, next->data(), outer, n, inner);
      for (std::size_t d = p; d < q; ++d) ext[d] = 1;
      current = std::move(next);
      in = current->data();
      p = q;
    }
    // The reduced gradient, without the leading positions x lacks.
    std::array<index_t, rx> tail{};
    for (std::size_t i = 0; i < rx; ++i) tail[i] = ext[i + rg - rx];
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

/// Whether X is a scalar operand.
template <class X>
inline constexpr bool is_scalar_expr_v = false;
/// A scalar_expr is one.
template <class B, class T>
inline constexpr bool is_scalar_expr_v<scalar_expr<B, T>> = true;

/// Pads the rank-R array @p a to max_program_rank with leading @p fill.
template <class V, std::size_t R>
std::array<V, max_program_rank> padded(std::array<V, R> const& a, V fill) {
  std::array<V, max_program_rank> out{};
  for (std::size_t i = 0; i < max_program_rank; ++i) out[i] = fill;
  for (std::size_t i = 0; i < R; ++i) out[max_program_rank - R + i] = a[i];
  return out;
}

/// Adds @p x (a tensor, a scalar, an expression) to the program @p p of a
/// result of dims RootSpecs and extents @p root; returns its step.  An
/// operand of another element type than T is evaluated (and recorded on
/// its own) and read through a conversion.
template <class RootSpecs, class B, class T, std::size_t R, class X>
std::uint32_t flatten(program_node<B, T>& p, std::array<index_t, R> const& root, X const& x) {
  using U = typename X::value_type;
  if constexpr (is_tensor_v<X>) {
    program_leaf<T> l;
    auto const ev = x.template evaluator<R>(root);
    l.keep = x.storage();
    l.data = x.data();
    l.strides = padded(ev.strides, index_t{0});
    l.flat = ev.is_flat;
    l.broadcast = padded(broadcast_positions<typename X::specs, RootSpecs>(), false);
    l.read = &read_leaf<B, T, U>;
    if constexpr (std::is_floating_point_v<U>) {
      if (x.requires_grad()) {
        l.state = x.grad_state();
        l.accumulate = &accumulate_leaf<B, T, U>;
      }
    }
    return p.add_leaf(std::move(l));
  } else if constexpr (is_scalar_expr_v<X> && std::is_same_v<U, T>) {
    program_leaf<T> l;
    l.scalar = true;
    l.value = x.value();
    return p.add_leaf(std::move(l));
  } else if constexpr (!std::is_same_v<U, T>) {
    return flatten<RootSpecs>(p, root, tensor_for<X>(x));
  } else {
    static_assert(is_map_expr_v<X>, "dimtensor internal: an elementwise operand of an unknown kind");
    using Op = std::remove_cvref_t<decltype(x.op())>;
    std::array<std::uint32_t, 3> args{};
    std::size_t i = 0;
    std::apply([&](auto const&... a) { ((args[i++] = flatten<RootSpecs>(p, root, a)), ...); }, x.operands());
    return p.add_step(code_of<Op>, static_cast<std::uint8_t>(i), args);
  }
}

/// Records the evaluation of @p e (a lazy expression, or a tensor copied)
/// into @p result as a program.
template <class Out, class E>
void record_program(std::string_view name, Out& result, E const& e) {
  using B = typename Out::backend;
  using T = typename Out::value_type;
  static_assert(Out::rank <= max_program_rank,
                "dimtensor: gradients through elementwise expressions of rank above 8 are not supported");
  auto n = std::make_shared<program_node<B, T>>(name, padded(result.extents(), index_t{1}));
  (void)flatten<typename Out::specs>(*n, result.extents(), e);
  result.attach_grad_fn(std::move(n));
}

/// Records the evaluation of a lazy expression @p e into @p result (called
/// by the tensor constructor that evaluates expressions).
template <class Out, class E>
void record_evaluation(Out& result, E const& e) {
  if constexpr (is_map_expr_v<E> && std::is_floating_point_v<typename Out::value_type>) {
    if (should_record(e)) record_program("elementwise", result, e);
  }
}

/// Records @p result as a copy of @p x (clone, contiguous).
template <class Out>
void record_copy(std::string_view name, Out& result, Out const& x) {
  if constexpr (std::is_floating_point_v<typename Out::value_type>) {
    if (should_record(x)) record_program(name, result, x);
  }
}

}  // namespace detail
}  // namespace autograd
}  // namespace dimtensor
