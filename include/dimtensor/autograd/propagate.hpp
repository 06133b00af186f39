#pragma once
/// @file
/// @brief How gradients reach tensors: recording a node, handing a gradient
/// to an operand expression, the rules of the elementwise functions, and
/// gradients of broadcast operands summed back to their shape.
///
/// An operation records itself with `autograd::record(name, result, rule,
/// operands...)` when `autograd::should_record(operands...)`; its rule is a
/// closure called with the result's gradient (a tensor of the result's type)
/// that calls `autograd::propagate(operand, gradient_expression)` for each
/// operand.  An operand may be a tensor (its gradient accumulates), a lazy
/// elementwise expression (the gradient is carried through its functions to
/// its tensors, lazily, so the forward pass stays fused) or a constant.
/// A gradient expression may have more dims than the operand (the operand
/// was broadcast: the gradient is summed over those positions) or extent 1
/// where the operand has more (it is expanded).
///
/// Included at the end of core/tensor.hpp; the expression types are
/// declared here and complete wherever a rule is instantiated.

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
#include <dimtensor/backends/cpu/assign.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
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

/// @brief Records @p result as made by the operation @p name from
/// @p operands; @p rule is called, during backward, with the result's
/// gradient (a tensor of the result's type).  Call only when
/// `should_record(operands...)`.  The rule must not keep @p result itself
/// (that would be a cycle): keep `result.detach()`.
template <class Out, class Rule, class... X>
void record(std::string_view name, Out& result, Rule rule, X const&... operands) {
  auto n = std::make_shared<rule_node<Out, Rule>>(name, std::move(rule));
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
  constexpr std::size_t r = X::rank;
  tensor_state& s = *x.grad_state();
  auto const& ext = x.extents();
  if (!s.grad) {
    auto out = std::make_shared<X>(uninitialized, ext);
    backend_assign(B{}, out->data(), ext, ev);
    s.grad = std::move(out);
    s.grad_type = &type_tag<X>;
  } else {
    auto& acc = *static_cast<X*>(s.grad.get());
    // acc is contiguous and its own: each element reads itself only.
    using sum_ev = dimtensor::detail::map_evaluator<fn::plus, dimtensor::detail::strided_evaluator<T, r>, Ev>;
    backend_assign(B{}, acc.data(), ext, sum_ev{fn::plus{}, {acc.template evaluator<r>(ext), ev}});
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

/// @name The rules of the elementwise functions
/// Each function object's rule gives, for operand I, the gradient of the
/// operand from the result's gradient g, as PyTorch's derivatives do.
/// @{

namespace fn_grad {

/// -g a / (b b): the quotient's gradient for its divisor.
struct divisor {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a, T b) const { return -g * a / (b * b); }
};
/// g (1 - tanh(a)^2).
struct tanh {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const {
    T const t = fn::tanh{}(a);
    return g * (T(1) - t * t);
  }
};
/// g (1 - s) s with s = sigmoid(a).
struct sigmoid {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const {
    T const s = fn::sigmoid{}(a);
    return g * (T(1) - s) * s;
  }
};
/// g e^a.
struct exp {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const { return g * fn::exp{}(a); }
};
/// g / (2 sqrt(a)).
struct sqrt {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const { return g / (T(2) * fn::sqrt{}(a)); }
};
/// g cos(a).
struct sin {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const { return g * fn::cos{}(a); }
};
/// g (-sin(a)).
struct cos {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const { return g * -fn::sin{}(a); }
};
/// g sgn(a).
struct abs {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const {
    return g * static_cast<T>((T(0) < a) - (a < T(0)));
  }
};
/// g where a > 0, else 0.
struct relu {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const { return a > T(0) ? g : T(0); }
};
/// g 2 a.
struct square {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a) const { return g * (T(2) * a); }
};
/// g b a^(b-1) (0 where b is 0).
struct pow_base {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a, T b) const {
    return b == T(0) ? T(0) : g * (b * fn::pow{}(a, static_cast<T>(b - T(1))));
  }
};
/// g a^b log(a) (0 where a is 0 and b >= 0).
struct pow_exponent {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a, T b) const {
    return (a == T(0) && b >= T(0)) ? T(0) : g * (fn::pow{}(a, b) * fn::log{}(a));
  }
};
/// The gradient of max(a, b) for a (Which 0) or b: g where that operand is
/// the larger, g/2 on ties (PyTorch's rule).
template <int Which, bool Max>
struct extremum {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a, T b) const {
    T const mine = Which == 0 ? a : b;
    T const other = Which == 0 ? b : a;
    if (mine == other) return g / T(2);
    return (Max ? other < mine : mine < other) ? g : T(0);
  }
};
/// g where c (Which 1) or where not c (Which 2).
template <int Which>
struct select {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, bool c) const { return (Which == 1) == c ? g : T(0); }
};

}  // namespace fn_grad

/// The rule of an elementwise function object; `defined` false for those
/// without one (comparisons, which are not differentiable).
template <class Op>
struct elementwise_rule {
  /// Whether Op has a rule.
  static constexpr bool defined = false;
};

namespace detail {
template <class Op, class... A>
auto node(A const&... a) {
  return map_expr<Op, A...>("backward", Op{}, a...);
}
template <class G>
using negated = map_expr<fn::negate, G>;
}  // namespace detail

/// The rule of a + b: g to both.
template <>
struct elementwise_rule<fn::plus> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static G const& grad(G const& g, A const&, B const&) { return g; }
};
/// The rule of a - b: g and -g.
template <>
struct elementwise_rule<fn::minus> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static auto grad(G const& g, A const&, B const&) {
    if constexpr (I == 0) {
      return g;
    } else {
      return detail::node<fn::negate>(g);
    }
  }
};
/// The rule of a b: g b and g a.
template <>
struct elementwise_rule<fn::multiplies> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static auto grad(G const& g, A const& a, B const& b) {
    if constexpr (I == 0) {
      return detail::node<fn::multiplies>(g, b);
    } else {
      return detail::node<fn::multiplies>(g, a);
    }
  }
};
/// The rule of a / b: g / b and -g a / b².
template <>
struct elementwise_rule<fn::divides> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static auto grad(G const& g, A const& a, B const& b) {
    if constexpr (I == 0) {
      return detail::node<fn::divides>(g, b);
    } else {
      return detail::node<fn_grad::divisor>(g, a, b);
    }
  }
};
/// The rule of -a: -g.
template <>
struct elementwise_rule<fn::negate> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A>
  static auto grad(G const& g, A const&) { return detail::node<fn::negate>(g); }
};
/// The rule of log a: g / a.
template <>
struct elementwise_rule<fn::log> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A>
  static auto grad(G const& g, A const& a) { return detail::node<fn::divides>(g, a); }
};

/// Rules of the form g ⊙ f'(a), one function object each.
template <class Grad>
struct unary_rule {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of the operand: Grad(g, a).
  template <std::size_t I, class G, class A>
  static auto grad(G const& g, A const& a) { return detail::node<Grad>(g, a); }
};
/// The rule of exp.
template <>
struct elementwise_rule<fn::exp> : unary_rule<fn_grad::exp> {};
/// The rule of tanh.
template <>
struct elementwise_rule<fn::tanh> : unary_rule<fn_grad::tanh> {};
/// The rule of sigmoid.
template <>
struct elementwise_rule<fn::sigmoid> : unary_rule<fn_grad::sigmoid> {};
/// The rule of sqrt.
template <>
struct elementwise_rule<fn::sqrt> : unary_rule<fn_grad::sqrt> {};
/// The rule of sin.
template <>
struct elementwise_rule<fn::sin> : unary_rule<fn_grad::sin> {};
/// The rule of cos.
template <>
struct elementwise_rule<fn::cos> : unary_rule<fn_grad::cos> {};
/// The rule of abs.
template <>
struct elementwise_rule<fn::abs> : unary_rule<fn_grad::abs> {};
/// The rule of relu.
template <>
struct elementwise_rule<fn::relu> : unary_rule<fn_grad::relu> {};
/// The rule of square.
template <>
struct elementwise_rule<fn::square> : unary_rule<fn_grad::square> {};

/// The rule of a^b: g b a^(b-1) and g a^b log a.
template <>
struct elementwise_rule<fn::pow> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static auto grad(G const& g, A const& a, B const& b) {
    if constexpr (I == 0) {
      return detail::node<fn_grad::pow_base>(g, a, b);
    } else {
      return detail::node<fn_grad::pow_exponent>(g, a, b);
    }
  }
};
/// The rule of max(a, b): g to the larger, g/2 on ties.
template <>
struct elementwise_rule<fn::maximum> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static auto grad(G const& g, A const& a, B const& b) {
    return detail::node<fn_grad::extremum<static_cast<int>(I), true>>(g, a, b);
  }
};
/// The rule of min(a, b): g to the smaller, g/2 on ties.
template <>
struct elementwise_rule<fn::minimum> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class A, class B>
  static auto grad(G const& g, A const& a, B const& b) {
    return detail::node<fn_grad::extremum<static_cast<int>(I), false>>(g, a, b);
  }
};
/// The rule of where(c, a, b): g where c to a, elsewhere to b; c gets none.
template <>
struct elementwise_rule<fn::select> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of operand I.
  template <std::size_t I, class G, class C, class A, class B>
  static auto grad(G const& g, C const& c, A const&, B const&) {
    static_assert(I == 1 || I == 2);
    return detail::node<fn_grad::select<static_cast<int>(I)>>(g, c);
  }
};
/// The rule of cast: the gradient cast back to the operand's type.
template <class To>
struct elementwise_rule<fn::cast<To>> {
  /// It has one.
  static constexpr bool defined = true;
  /// The gradient of the operand.
  template <std::size_t I, class G, class A>
  static auto grad(G const& g, A const&) { return detail::node<fn::cast<typename A::value_type>>(g); }
};
/// @}

template <class X, class G>
void propagate(X const& x, G const& g);

namespace detail {

template <std::size_t I, class Op, class... A, class G>
void propagate_operand(map_expr<Op, A...> const& e, G const& g) {
  using arg_t = std::tuple_element_t<I, std::tuple<A...>>;
  if constexpr (std::is_floating_point_v<typename arg_t::value_type>) {
    auto const& args = e.operands();
    auto const& arg = std::get<I>(args);
    if (any_requires_grad(arg)) {
      propagate(arg, std::apply([&](auto const&... a) { return elementwise_rule<Op>::template grad<I>(g, a...); },
                                args));
    }
  }
}

template <class Op, class... A, class G, std::size_t... I>
void propagate_operands(map_expr<Op, A...> const& e, G const& g, std::index_sequence<I...>) {
  (propagate_operand<I>(e, g), ...);
}

template <class Op, class... A, class G>
void propagate_map(map_expr<Op, A...> const& e, G const& g) {
  if constexpr (!elementwise_rule<Op>::defined) {
    throw value_error(
        "backward: a floating-point value passed through an elementwise function without a gradient "
        "(a comparison or a cast to an integer type) on its way to a tensor that requires grad");
  } else {
    std::size_t needing = 0;
    std::apply([&](auto const&... a) { ((needing += any_requires_grad(a) ? 1 : 0), ...); }, e.operands());
    if constexpr (!is_tensor_v<G>) {
      if (needing > 1) {
        // Several operands read this gradient: evaluate it once.
        auto const dense = tensor_for<G>(g);
        propagate_operands(e, dense, std::index_sequence_for<A...>{});
        return;
      }
    }
    propagate_operands(e, g, std::index_sequence_for<A...>{});
  }
}

}  // namespace detail

/// @brief Hands the gradient @p g to the operand @p x: a tensor accumulates
/// it (summed over what x was broadcast over), a lazy expression carries it
/// through its functions, a constant drops it.
template <class X, class G>
void propagate(X const& x, G const& g) {
  if constexpr (is_tensor_v<X>) {
    if (x.requires_grad()) accumulate(x, g);
  } else if constexpr (is_map_expr_v<X>) {
    if (any_requires_grad(x)) detail::propagate_map(x, g);
  }
}

namespace detail {

/// Records the evaluation of a lazy expression @p e into @p result (called
/// by the tensor constructor that evaluates expressions).
template <class Out, class E>
void record_evaluation(Out& result, E const& e) {
  if constexpr (is_map_expr_v<E> && std::is_floating_point_v<typename Out::value_type>) {
    if (should_record(e)) {
      record("elementwise", result, [e](Out const& g) { propagate(e, g); }, e);
    }
  }
}

/// Records @p result as a copy of @p x (clone, contiguous).
template <class Out>
void record_copy(std::string_view name, Out& result, Out const& x) {
  if constexpr (std::is_floating_point_v<typename Out::value_type>) {
    if (should_record(x)) {
      record(name, result, [x](Out const& g) { propagate(x, g); }, x);
    }
  }
}

}  // namespace detail
}  // namespace autograd
}  // namespace dimtensor
