#pragma once
/// @file
/// @brief `bmm(a, b)`: batched matrix product with d2l's rank-3 semantics,
/// a [B, I, J] · b [B, J, K] → [B, I, K], every dim checked by name.

#include <type_traits>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/ops/contract.hpp>

namespace dimtensor {

namespace diagnostic {

/// The dim the left operand of bmm sums over (its last).
template <class D>
struct left_contracts {};
/// The dim the right operand of bmm offers to be summed over (its middle).
template <class D>
struct right_offers {};
/// The dim the left operand of bmm keeps (its middle).
template <class D>
struct left_keeps {};
/// The dim the right operand of bmm keeps (its last).
template <class D>
struct right_keeps {};

/// bmm given an operand whose rank is not 3.
template <class Left, class Right>
struct bmm_needs_rank_3 {
  static_assert(always_false<Left, Right>,
                "dimtensor: bmm needs two rank-3 operands, [B, I, J] and [B, J, K] (see "
                "bmm_needs_rank_3<left_has<dims>, right_has<dims>> above); unsqueeze a batch dim, "
                "or use contract<D>(a, b) for other ranks");
};

/// bmm whose operands have different batch (first) dims.
template <class Left, class Right>
struct bmm_batch_dims_disagree {
  static_assert(always_false<Left, Right>,
                "dimtensor: bmm needs the same batch dim (the first) in both operands (see "
                "bmm_batch_dims_disagree<left_has<dim>, right_has<dim>> above); transpose or rename one");
};

/// A fix of a bmm whose inner dims disagree that type-checks, computed
/// from the operands' dims: bmm(a, transpose<A, B>(b)).
template <class A, class B>
struct fix_transpose_right {};
/// bmm(transpose<A, B>(a), b).
template <class A, class B>
struct fix_transpose_left {};
/// bmm(b, a): the operands in the other order.
struct fix_swap_operands {};
/// No transpose of one operand and no swap makes the dims fit.
struct no_fix_found {};

/// bmm whose left last dim is not the right middle dim; @p Fix is the
/// first of transposing the right operand, transposing the left one and
/// swapping them that would type-check (`no_fix_found` if none does).
template <class Left, class Right, class Fix>
struct bmm_inner_dims_disagree {
  static_assert(always_false<Left, Right, Fix>,
                "dimtensor: bmm sums over the left operand's last dim and the right operand's middle dim, "
                "and they differ (see bmm_inner_dims_disagree<left_contracts<dim>, right_offers<dim>, fix> above); "
                "the fix is computed from your operands' dims: fix_transpose_right<A, B> means "
                "bmm(a, transpose<A, B>(b)), fix_transpose_left<A, B> bmm(transpose<A, B>(a), b), "
                "fix_swap_operands bmm(b, a), no_fix_found that none of these would type-check");
};

/// bmm whose result would hold one dim twice.
template <class Left, class Right>
struct bmm_free_dims_collide {
  static_assert(always_false<Left, Right>,
                "dimtensor: bmm keeps the left operand's middle dim and the right operand's last dim, and they "
                "are the same dimension, so the result would have it twice (see "
                "bmm_free_dims_collide<left_keeps<dim>, right_keeps<dim>> above); rename one of them");
};

}  // namespace diagnostic

namespace detail {

/// Whether bmm of operands with the dims (tags) @p TA and @p TB passes the
/// dim checks: rank 3, the same batch dim, a's last = b's middle, a's
/// middle ≠ b's last.
template <class TA, class TB>
constexpr bool bmm_dims_fit() {
  if constexpr (boost::mp11::mp_size<TA>::value != 3 || boost::mp11::mp_size<TB>::value != 3) {
    return false;
  } else {
    using namespace boost::mp11;
    return std::is_same_v<mp_at_c<TA, 0>, mp_at_c<TB, 0>> && std::is_same_v<mp_at_c<TA, 2>, mp_at_c<TB, 1>> &&
           !std::is_same_v<mp_at_c<TA, 1>, mp_at_c<TB, 2>>;
  }
}

/// The fix that `bmm_inner_dims_disagree` names for operands of dims @p TA, @p TB (rank 3, same batch).
template <class TA, class TB>
constexpr auto bmm_fix() {
  using namespace boost::mp11;
  using a1 = mp_at_c<TA, 1>;
  using a2 = mp_at_c<TA, 2>;
  using b1 = mp_at_c<TB, 1>;
  using b2 = mp_at_c<TB, 2>;
  if constexpr (bmm_dims_fit<TA, dims<mp_at_c<TB, 0>, b2, b1>>()) {
    return std::type_identity<diagnostic::fix_transpose_right<b1, b2>>{};
  } else if constexpr (bmm_dims_fit<dims<mp_at_c<TA, 0>, a2, a1>, TB>()) {
    return std::type_identity<diagnostic::fix_transpose_left<a1, a2>>{};
  } else if constexpr (bmm_dims_fit<TB, TA>()) {
    return std::type_identity<diagnostic::fix_swap_operands>{};
  } else {
    return std::type_identity<diagnostic::no_fix_found>{};
  }
}

/// What is wrong with bmm(a, b): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when an operand already is, or void.
/// Backends and element types first, as for every binary operation; then
/// the dims; then (the batch and inner dims being now the only shared ones)
/// their static extents, as contract checks them.
template <class A, class B>
constexpr auto bmm_diagnosis() {
  using operands = typename decltype(operands_diagnosis<call::bmm, A, B>())::type;
  if constexpr (!std::is_void_v<operands>) {
    return std::type_identity<operands>{};
  } else {
    using LA = typename A::specs;
    using LB = typename B::specs;
    using diagnostic::left_has;
    using diagnostic::right_has;
    if constexpr (rank_v<LA> != 3 || rank_v<LB> != 3) {
      return std::type_identity<diagnostic::bmm_needs_rank_3<left_has<LA>, right_has<LB>>>{};
    } else {
      using batch_a = dim_of<spec_at<LA, 0>>;
      using keep_a = dim_of<spec_at<LA, 1>>;
      using inner_a = dim_of<spec_at<LA, 2>>;
      using batch_b = dim_of<spec_at<LB, 0>>;
      using inner_b = dim_of<spec_at<LB, 1>>;
      using keep_b = dim_of<spec_at<LB, 2>>;
      if constexpr (!std::is_same_v<batch_a, batch_b>) {
        return std::type_identity<diagnostic::bmm_batch_dims_disagree<left_has<batch_a>, right_has<batch_b>>>{};
      } else if constexpr (!std::is_same_v<inner_a, inner_b>) {
        using fix = typename decltype(bmm_fix<tags_of<LA>, tags_of<LB>>())::type;
        return std::type_identity<diagnostic::bmm_inner_dims_disagree<diagnostic::left_contracts<inner_a>,
                                                                      diagnostic::right_offers<inner_b>, fix>>{};
      } else if constexpr (std::is_same_v<keep_a, keep_b>) {
        return std::type_identity<
            diagnostic::bmm_free_dims_collide<diagnostic::left_keeps<keep_a>, diagnostic::right_keeps<keep_b>>>{};
      } else {
        return shared_extents_diagnosis<call::bmm, inner_a, LA, LB>();
      }
    }
  }
}

}  // namespace detail

/// @brief Batched matrix product, as d2l's `torch.bmm`: a [B, I, J] ·
/// b [B, J, K] → [B, I, K] (a fresh contiguous tensor).
///
/// Checked at compile time, each failure a diagnostic naming the dims:
/// both operands rank 3 (`bmm_needs_rank_3`), the same batch dim
/// (`bmm_batch_dims_disagree`), a's last dim equal to b's middle dim
/// (`bmm_inner_dims_disagree`, naming the fix that would type-check:
/// transposing the right operand, e.g. a forgotten `transpose<KVPairs,
/// Hidden>(keys)`, transposing the left one, or swapping them), I and K different
/// (`bmm_free_dims_collide`), static extents that agree (`extent_mismatch`)
/// and the same element type (`element_types_differ`).  Dynamic extents of
/// B or J that differ throw `shape_error` naming "bmm", the dim and both sizes.
///
/// Operands may be any expressions: transposed and sliced views are read in
/// place, lazy ones are evaluated first (see `contract_operand`).
/// Differentiable, as `torch.bmm`: a's gradient is g · bᵀ, b's is aᵀ · g,
/// each one batched product (those of `contract<J>`).
template <class A, class B>
  requires detail::ContractArg<A> && detail::ContractArg<B>
auto bmm(A const& a, B const& b) {
  if constexpr (rejects(detail::bmm_diagnosis<A, B>())) {
    return ill_formed{};
  } else {
    return detail::contract_operands<dim_of<detail::spec_at<typename A::specs, 2>>>("bmm", a, b);
  }
}

}  // namespace dimtensor
