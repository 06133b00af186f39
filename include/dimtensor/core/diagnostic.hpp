#pragma once
/// @file
/// @brief Compile-time diagnostics.
///
/// A failed check instantiates a class template whose *name* is the
/// diagnosis and whose arguments are the dims involved, e.g.
/// `diagnostic::not_a_dimension_of<call::softmax, Hidden, dims<Batch, Queries, KVPairs>>`;
/// its static_assert carries a sentence.  The failing call then returns
/// `ill_formed`, which every operation accepts silently, so one mistake
/// gives one error instead of a cascade (Hana's `dispatch_if` idea).

#include <cstddef>
#include <type_traits>
#include <utility>  // std::tuple_size, std::tuple_element

#include <dimtensor/config.hpp>
#include <dimtensor/core/dims.hpp>

namespace dimtensor {

/// @brief What a call whose compile-time check failed returns; operations
/// given one return one and report nothing more.
///
/// It also answers what user code does next with a call's result, so that
/// the diagnosis stays the only error: a tensor's member calls (`extent<D>()`,
/// `item()`, `backward()`, …; each returns `ill_formed`), a structured
/// binding of two names (`auto [outputs, state] = rnn(x, h)`, as the
/// results of the library's calls that return a pair are taken apart), and
/// passing it where a tensor is expected (`basic_tensor` converts from it).
struct ill_formed {
  /// `x.extent<D>()` of a rejected result.
  template <class... D>
  constexpr ill_formed extent() const noexcept {
    return {};
  }
  /// Element access `x(Batch(i), …)` of a rejected result.
  template <class... A>
  constexpr ill_formed operator()(A const&...) const noexcept {
    return {};
  }
  /// `x.extents()` of a rejected result.
  constexpr ill_formed extents() const noexcept { return {}; }
  /// `x.size()` of a rejected result.
  constexpr ill_formed size() const noexcept { return {}; }
  /// `x.item()` of a rejected result.
  constexpr ill_formed item() const noexcept { return {}; }
  /// `x.data()` of a rejected result.
  constexpr ill_formed data() const noexcept { return {}; }
  /// `x.clone()` of a rejected result.
  constexpr ill_formed clone() const noexcept { return {}; }
  /// `x.eval()` of a rejected result.
  constexpr ill_formed eval() const noexcept { return {}; }
  /// `x.contiguous()` of a rejected result.
  constexpr ill_formed contiguous() const noexcept { return {}; }
  /// `x.detach()` of a rejected result.
  constexpr ill_formed detach() const noexcept { return {}; }
  /// `x.grad()` of a rejected result.
  constexpr ill_formed grad() const noexcept { return {}; }
  /// `x.requires_grad()` of a rejected result.
  constexpr ill_formed requires_grad() const noexcept { return {}; }
  /// `x.requires_grad_()` of a rejected result.
  template <class... A>
  constexpr ill_formed requires_grad_(A const&...) const noexcept {
    return {};
  }
  /// `x.backward()` of a rejected result.
  template <class... A>
  constexpr ill_formed backward(A const&...) const noexcept {
    return {};
  }
  /// `x.assign(e)` of a rejected result.
  template <class... A>
  constexpr ill_formed assign(A const&...) const noexcept {
    return {};
  }
  /// `x.fill(v)` of a rejected result.
  template <class... A>
  constexpr ill_formed fill(A const&...) const noexcept {
    return {};
  }
  /// `x.zero_grad()` of a rejected result.
  constexpr ill_formed zero_grad() const noexcept { return {}; }
  /// `x.retain_grad()` of a rejected result.
  constexpr ill_formed retain_grad() const noexcept { return {}; }
  /// The structured binding of two names.
  template <std::size_t I>
  constexpr ill_formed get() const noexcept {
    return {};
  }
};

namespace detail {
/// Whether T (without cv and reference) is a value operations report
/// nothing more about.  `ill_formed`; and, as a diagnosis, `partial`
/// (tensor/partial.hpp): asking this of a partial value, as every
/// operation does of its operands, is the error that names its dim and axis.
template <class T>
struct ill_formed_trait : std::is_same<T, ill_formed> {};
}  // namespace detail

/// Whether T is `ill_formed`.
template <class T>
inline constexpr bool is_ill_formed_v = detail::ill_formed_trait<std::remove_cvref_t<T>>::value;

/// Whether any of Ts is `ill_formed`.
template <class... Ts>
inline constexpr bool any_ill_formed_v = (is_ill_formed_v<Ts> || ...);

/// The diagnoses.  Each is instantiated only when its check fails.
namespace diagnostic {

template <class...>
inline constexpr bool always_false = false;

/// @brief Naming `fire<D>` instantiates the diagnosis @p D, whose
/// static_assert is the compile error: `(void)diagnostic::fire<D>;` in the
/// branch of a call that found the mistake.
///
/// A variable template, so that the diagnosis is instantiated where the
/// call is, and its error is the first one: g++ instantiates the body of a
/// function template (a `fire<D>()` function, a `void` helper) only at the
/// end of the file, after the errors of any code that uses the rejected
/// call's `ill_formed` result (a structured binding, a member call). And not
/// `sizeof(D)` in the operation itself: clang would then mark the operation
/// as failed and report each further call with the same arguments again.
/// Helpers that fire a diagnosis deduce their return type (`auto`) for the
/// same reason: g++ instantiates them at the call only then.
template <class D>
inline constexpr bool fire = sizeof(D) != 0;

/// Gradients were asked of a tensor of integers or bools.
template <class Call, class T>
struct not_differentiable {
  static_assert(always_false<Call, T>,
                "dimtensor: only float and double tensors have gradients (requires_grad_, backward, grad); "
                "see not_differentiable<call, element type> above");
};

/// A position in a shape, counted from 0 at the left.
template <std::size_t I>
struct at_position {};
/// The dim the left operand has.
template <class D>
struct left_has {};
/// The dim the right operand has.
template <class D>
struct right_has {};
/// Two static extents.
template <index_t A, index_t B>
struct extents {};

template <class Call, class Dim, class Dims>
struct not_a_dimension_of {
  static_assert(always_false<Call, Dim, Dims>,
                "dimtensor: the named dimension is not a dimension of the tensor "
                "(see not_a_dimension_of<call, dimension, dims of the tensor> above)");
};

template <class Call, class Dim, class Dims>
struct already_a_dimension_of {
  static_assert(always_false<Call, Dim, Dims>,
                "dimtensor: the new dimension is already a dimension of the tensor, and a "
                "dim may appear only once (see already_a_dimension_of<call, dimension, dims> above)");
};

template <class Call, class Dim, class Named>
struct named_twice {
  static_assert(always_false<Call, Dim, Named>,
                "dimtensor: the call names the same dimension twice where it needs different ones "
                "(see named_twice<call, dimension, dims as named in the call> above)");
};

template <class Call, class Given>
struct not_a_dimension_tag {
  static_assert(always_false<Call, Given>,
                "dimtensor: the call needs a dimension tag declared with DIMTENSOR_DIM here "
                "(see not_a_dimension_tag<call, what was given> above)");
};

template <class Call, class Left, class Right>
struct backends_differ {
  static_assert(always_false<Call, Left, Right>,
                "dimtensor: the operands live on different backends; move one explicitly with "
                "dimtensor::to<Backend>(x) (see backends_differ<call, backend, backend> above)");
};

template <class Dim, class Dims>
struct duplicate_dimension {
  static_assert(always_false<Dim, Dims>,
                "dimtensor: duplicate dimension in a shape; each dim may appear only once "
                "(see duplicate_dimension<dimension, dims> above)");
};

template <class Call, class Dim, class Extents>
struct extent_mismatch {
  static_assert(always_false<Call, Dim, Extents>,
                "dimtensor: static extents disagree for a dimension "
                "(see extent_mismatch<call, dimension, extents<left, right>> above)");
};

template <class Call, class Position, class Left, class Right>
struct operands_disagree {
  static_assert(always_false<Call, Position, Left, Right>,
                "dimtensor: the operands' dims, aligned from the right, must be the same "
                "dimension at every position (see operands_disagree<call, at_position<i>, "
                "left_has<dim>, right_has<dim>> above); use unsqueeze/transpose/rename to align them");
};

/// Element access names no index for the dim @p Dim of the tensor's @p Dims.
template <class Call, class Dim, class Dims>
struct missing_index {
  static_assert(always_false<Call, Dim, Dims>,
                "dimtensor: element access needs one named index per dim of the tensor, and this dim has none "
                "(see missing_index<call, dimension, dims of the tensor> above), e.g. x(Batch(1), Queries(0))");
};

/// A tensor of @p TensorDims is given (constructed from, assigned) an expression of @p ValueDims.
template <class Call, class TensorDims, class ValueDims>
struct assigned_dims_differ {
  static_assert(always_false<Call, TensorDims, ValueDims>,
                "dimtensor: a tensor holds only an expression of its own dims in the same order "
                "(see assigned_dims_differ<call, dims of the tensor, dims of the expression> above); "
                "reorder with transpose/permute or rename the dims first");
};

/// What a dim is sharded over in a diagnosis: the mesh axis @p Axis, or `not_sharded` (void).
template <class Axis>
struct axis_name_of {
  /// The axis.
  using type = Axis;
};
/// An operand whose dim is not sharded.
struct not_sharded {};
template <>
struct axis_name_of<void> {
  /// `not_sharded`.
  using type = not_sharded;
};
/// The left operand's mesh axis (or `not_sharded`).
template <class Axis>
struct left_axis {};
/// The right operand's mesh axis (or `not_sharded`).
template <class Axis>
struct right_axis {};

/// Two operands whose dim @p Dim is sharded over different mesh axes, or sharded in one only.
template <class Call, class Dim, class Left, class Right>
struct sharded_differently {
  static_assert(always_false<Call, Dim, Left, Right>,
                "dimtensor: the operands cut the dimension over different mesh axes, or one is cut and the other "
                "whole (see sharded_differently<call, dimension, left_axis<axis>, right_axis<axis>> above); shard "
                "the whole one with dist::shard<D, Axis>, or gather the cut one with dist::all_gather<D>");
};

/// @brief A partial value (this rank's part of a reduction over the dim
/// @p Dim, sharded over the mesh axis @p Axis) used before the all-reduce
/// that completes it.
template <class Use, class Dim, class Axis>
struct partial_value_used {
  static_assert(always_false<Use, Dim, Axis>,
                "dimtensor: the value is this rank's part of a reduction over a dim sharded over a mesh axis, "
                "not the reduction (see partial_value_used<use, dimension, axis> above); complete it with "
                "dist::all_reduce(x, comm) first");
};

/// A reduction that cannot be completed across ranks (argmax) over a sharded dim.
template <class Call, class Dim, class Axis>
struct reduction_over_sharded_dim {
  static_assert(always_false<Call, Dim, Axis>,
                "dimtensor: this reduction over a dim sharded over a mesh axis cannot be completed by an "
                "all-reduce (see reduction_over_sharded_dim<call, dimension, axis> above); gather the dim "
                "with dist::all_gather<D> first");
};

template <class Call, class Left, class Right>
struct element_types_differ {
  static_assert(always_false<Call, Left, Right>,
                "dimtensor: the operands have different element types; convert one explicitly "
                "with dimtensor::cast<T>(x) (see element_types_differ<call, left, right> above)");
};

}  // namespace diagnostic
}  // namespace dimtensor

/// `auto [a, b] = rejected_call(…)`: two more `ill_formed`, not an error.
template <>
struct std::tuple_size<dimtensor::ill_formed> : std::integral_constant<std::size_t, 2> {};
/// Each name of `auto [a, b] = rejected_call(…)` is an `ill_formed`.
template <std::size_t I>
struct std::tuple_element<I, dimtensor::ill_formed> {
  /// `ill_formed`.
  using type = dimtensor::ill_formed;
};
