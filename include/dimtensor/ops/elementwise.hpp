#pragma once
/// @file
/// @brief Lazy elementwise operations: arithmetic, math functions,
/// comparisons, `where`, `cast`.
///
/// Each returns an expression node; nothing is computed until the node is
/// assigned to a tensor or passed to `eval()`, and then in one fused pass.
/// Operands broadcast by the rule of core/broadcast.hpp: aligned from the
/// right, same dim at every position, static extent 1 broadcasts.

#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/convert.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/math.hpp>
#include <dimtensor/tensor/expression.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

using dimtensor::Operand;  // the library's code names it detail::Operand

template <class A, class B>
concept BinaryOperands = (Operand<A> && (Operand<B> || Scalar<B>)) || (Scalar<A> && Operand<B>);

template <class E, class S>
constexpr bool scalar_fits() {
  return !(std::is_integral_v<typename E::value_type> && std::is_floating_point_v<S>);
}

/// The lazy elementwise function Op of a and b (a scalar broadcast to the
/// other's type), diagnosed as a call of Op.
template <class Op, class A, class B>
auto binary(A const& a, B const& b) {
  if constexpr (any_ill_formed_v<A, B>) {
    return ill_formed{};
  } else if constexpr (Scalar<A>) {
    static_assert(scalar_fits<B, A>(),
                  "dimtensor: a floating-point scalar with an integer tensor; cast the tensor first (cast<float>(x))");
    return binary<Op>(as_operand<B>(a), b);
  } else if constexpr (Scalar<B>) {
    static_assert(scalar_fits<A, B>(),
                  "dimtensor: a floating-point scalar with an integer tensor; cast the tensor first (cast<float>(x))");
    return binary<Op>(a, as_operand<A>(b));
  } else if constexpr (!binary_ok_v<A, B>) {
    (void)check_binary<Op, A, B>();
    return ill_formed{};
  } else {
    return map_expr<Op, A, B>(Op::name, Op{}, a, b);
  }
}

/// The lazy elementwise function Op of a.
template <class Op, class A>
auto unary(A const& a) {
  if constexpr (is_ill_formed_v<A>) {
    return ill_formed{};
  } else {
    return map_expr<Op, A>(Op::name, Op{}, a);
  }
}

}  // namespace detail

/// @name Arithmetic (lazy; tensors with tensors or scalars)
/// @{

/// Elementwise sum, broadcast by name.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator+(A const& a, B const& b) { return detail::binary<call::plus>(a, b); }
/// Elementwise difference, broadcast by name.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator-(A const& a, B const& b) { return detail::binary<call::minus>(a, b); }
/// Elementwise product, broadcast by name.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator*(A const& a, B const& b) { return detail::binary<call::multiplies>(a, b); }
/// Elementwise quotient, broadcast by name.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator/(A const& a, B const& b) { return detail::binary<call::divides>(a, b); }
/// Elementwise negation.
template <detail::Operand A>
auto operator-(A const& a) {
  return detail::unary<call::negate>(a);
}
/// @}

/// @name Elementwise functions (lazy)
/// @{

/// e^x.
template <detail::Operand A>
auto exp(A const& a) {
  return detail::unary<call::exp>(a);
}
/// Natural logarithm.
template <detail::Operand A>
auto log(A const& a) {
  return detail::unary<call::log>(a);
}
/// Hyperbolic tangent.
template <detail::Operand A>
auto tanh(A const& a) {
  return detail::unary<call::tanh>(a);
}
/// Logistic sigmoid 1 / (1 + e^-x).
template <detail::Operand A>
auto sigmoid(A const& a) {
  return detail::unary<call::sigmoid>(a);
}
/// max(x, 0).
template <detail::Operand A>
auto relu(A const& a) {
  return detail::unary<call::relu>(a);
}
/// The Gauss error function, as `torch.erf`.
template <detail::Operand A>
auto erf(A const& a) {
  return detail::unary<call::erf>(a);
}
/// GELU, x (1 + erf(x / √2)) / 2, as `torch.nn.functional.gelu` (exact
/// form): one function with its own gradient.
template <detail::Operand A>
auto gelu(A const& a) {
  return detail::unary<call::gelu>(a);
}
/// GELU's tanh approximation, x (1 + tanh(√(2/π) (x + 0.044715 x³))) / 2, as
/// `torch.nn.functional.gelu(x, approximate='tanh')` (GPT-2's `gelu_new`):
/// one function with its own gradient.
template <detail::Operand A>
auto gelu_tanh(A const& a) {
  return detail::unary<call::gelu_tanh>(a);
}
/// SiLU (swish), x σ(x), as `torch.nn.functional.silu`.
template <detail::Operand A>
auto silu(A const& a) {
  return detail::unary<call::silu>(a);
}
/// Square root.
template <detail::Operand A>
auto sqrt(A const& a) {
  return detail::unary<call::sqrt>(a);
}
/// Sine.
template <detail::Operand A>
auto sin(A const& a) {
  return detail::unary<call::sin>(a);
}
/// Cosine.
template <detail::Operand A>
auto cos(A const& a) {
  return detail::unary<call::cos>(a);
}
/// Absolute value.
template <detail::Operand A>
auto abs(A const& a) {
  return detail::unary<call::abs>(a);
}
/// Negation (same as unary minus).
template <detail::Operand A>
auto neg(A const& a) {
  return detail::unary<call::negate>(a);
}
/// x * x.
template <detail::Operand A>
auto square(A const& a) {
  return detail::unary<call::square>(a);
}
/// a^b, elementwise; either may be a scalar.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto pow(A const& a, B const& b) { return detail::binary<call::pow>(a, b); }
/// Elementwise maximum.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto maximum(A const& a, B const& b) { return detail::binary<call::maximum>(a, b); }
/// Elementwise minimum.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto minimum(A const& a, B const& b) { return detail::binary<call::minimum>(a, b); }
namespace detail {

/// Whether cast<To> from From can meet an element To cannot hold: floating
/// point to an integer type, or an integer to a narrower one.
template <class To, class From>
constexpr bool cast_checks_values() {
  if constexpr (!std::is_integral_v<To> || std::is_same_v<To, bool> || std::is_same_v<From, bool>) {
    return false;
  } else if constexpr (std::is_floating_point_v<From>) {
    return true;
  } else {
    return !std::in_range<To>(std::numeric_limits<From>::min()) || !std::in_range<To>(std::numeric_limits<From>::max());
  }
}
template <class To, class From>
inline constexpr bool cast_checks_values_v = cast_checks_values<To, From>();

/// `value_error` naming the first element of @p t (a tensor) that To cannot
/// hold, its position and its value; nothing when every element converts.
template <class To, class Tensor>
void check_cast_values(Tensor const& t) {
  using T = typename Tensor::value_type;
  index_t const n = t.size();
  if (n == 0) return;
  auto const dense = t.is_contiguous() ? t : t.clone();
  T const* p = dense.data();
  std::unique_ptr<T[]> staged;
  if constexpr (!Tensor::backend::host_accessible) {
    staged = host_buffer<T>(n);
    backend_copy_to_host(typename Tensor::backend{}, staged.get(), p, n);
    p = staged.get();
  }
  for (index_t i = 0; i < n; ++i) {
    if (!representable_as<To>(p[i])) {
      throw value_error(not_representable_text<To>("cast<" + std::string(arithmetic_type_name<To>()) + ">: element " +
                                                       std::to_string(i) + " (row-major) of " +
                                                       shape_string<typename Tensor::specs>(t.extents()),
                                                   p[i]));
    }
  }
}

}  // namespace detail

/// @brief Converts the elements to To: lazy, and fused with what reads it,
/// where To holds every value of the element type. Where it may not
/// (floating point to an integer type, int64 to int32), the operand is
/// evaluated first and every element checked: `value_error` names the first
/// one To cannot hold (NaN, an infinity, a value out of To's range), whose
/// conversion C++ leaves undefined (PyTorch returns an unspecified number).
/// Floating point converts to integers by truncation toward zero; double to
/// float rounds, and a finite value past float's range becomes an infinity
/// (IEEE 754, as PyTorch).
template <class To, detail::Operand A>
auto cast(A const& a) {
  if constexpr (is_ill_formed_v<A>) {
    return detail::unary<call::cast<To>>(a);
  } else if constexpr (detail::cast_checks_values_v<To, typename A::value_type>) {
    auto const source = a.eval();
    detail::check_cast_values<To>(source);
    return detail::unary<call::cast<To>>(source);
  } else {
    return detail::unary<call::cast<To>>(a);
  }
}
/// @}

namespace detail {

/// @p t's elements as 64-bit integers (t itself when they are): what the
/// gradient rules read lengths and indices as (autograd/rules/line.hpp).
template <class X>
auto as_int64(X const& t) {
  if constexpr (std::is_same_v<typename X::value_type, std::int64_t>) {
    return t;
  } else {
    return eval(cast<std::int64_t>(t));
  }
}

}  // namespace detail

/// @name Comparisons (lazy, bool results)
/// `operator==` is not overloaded (it would not mean equality); see eq/ne
/// and `equal`/`allclose` for whole-tensor tests.
/// @{

/// a == b, elementwise.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto eq(A const& a, B const& b) { return detail::binary<call::eq>(a, b); }
/// a != b, elementwise.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto ne(A const& a, B const& b) { return detail::binary<call::ne>(a, b); }
/// a < b, elementwise.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator<(A const& a, B const& b) { return detail::binary<call::less>(a, b); }
/// a <= b, elementwise.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator<=(A const& a, B const& b) { return detail::binary<call::less_equal>(a, b); }
/// a > b, elementwise.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator>(A const& a, B const& b) { return detail::binary<call::greater>(a, b); }
/// a >= b, elementwise.
template <class A, class B>
requires detail::BinaryOperands<A, B>
auto operator>=(A const& a, B const& b) { return detail::binary<call::greater_equal>(a, b); }
/// @}

/// @brief `cond ? a : b`, elementwise; `cond` holds bool, `a` and `b` may be
/// scalars; all three broadcast together.
template <class C, class A, class B>
  requires detail::Operand<C> && (detail::Operand<A> || Scalar<A>) && (detail::Operand<B> || Scalar<B>)
auto where(C const& cond, A const& a, B const& b) {
  if constexpr (any_ill_formed_v<C, A, B>) {
    return ill_formed{};
  } else if constexpr (Scalar<A> && Scalar<B>) {
    using T = std::common_type_t<A, B>;
    return where(cond, scalar_expr<typename C::backend, T>(static_cast<T>(a)), b);
  } else if constexpr (Scalar<A>) {
    static_assert(detail::scalar_fits<B, A>(),
                  "dimtensor: a floating-point scalar with an integer tensor; cast the tensor first (cast<float>(x))");
    return where(cond, detail::as_operand<B>(a), b);
  } else if constexpr (Scalar<B>) {
    static_assert(detail::scalar_fits<A, B>(),
                  "dimtensor: a floating-point scalar with an integer tensor; cast the tensor first (cast<float>(x))");
    return where(cond, a, detail::as_operand<A>(b));
  } else {
    static_assert(std::is_same_v<typename C::value_type, bool>,
                  "dimtensor::where(cond, a, b): cond must hold bool (a comparison such as x > 0)");
    if constexpr (!detail::binary_ok_v<A, B>) {
      (void)detail::check_binary<call::where, A, B>();
      return ill_formed{};
    } else if constexpr (!detail::broadcast<typename C::specs, typename detail::broadcast<typename A::specs, typename B::specs>::type>::ok) {
      detail::diagnose_broadcast<call::where, typename C::specs,
                                 typename detail::broadcast<typename A::specs, typename B::specs>::type>();
      return ill_formed{};
    } else {
      return map_expr<call::where, C, A, B>("where", call::where{}, cond, a, b);
    }
  }
}

}  // namespace dimtensor
