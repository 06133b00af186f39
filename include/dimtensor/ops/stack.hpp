#pragma once
/// @file
/// @brief `stack<New, Pos>(list)`: a run-time list of tensors of one shape
/// joined along a new dim (PyTorch's `torch.stack`); copies.

#include <array>
#include <cstddef>
#include <memory>
#include <ranges>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// What is wrong with stack<New, Pos> of tensors of dims @p L: a
/// diagnostic class (named, not yet instantiated) or void.
template <class New, std::size_t Pos, class L>
constexpr auto stack_diagnosis() {
  if constexpr (!DimTag<New>) {
    return std::type_identity<diagnostic::not_a_dimension_tag<call::stack, New>>{};
  } else if constexpr (contains_v<New, L>) {
    return std::type_identity<diagnostic::already_a_dimension_of<call::stack, New, L>>{};
  } else if constexpr (Pos > rank_v<L>) {
    return std::type_identity<diagnostic::position_past_rank<call::stack, diagnostic::at_position<Pos>,
                                                             diagnostic::tensor_rank<rank_v<L>>, L>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief Joins a run-time list of tensors of one shape along a new dim
/// @p New inserted at position @p Pos (0 = outermost, the default; rank =
/// innermost): `stack<DecSteps, 1>(weights)` maps a `std::vector` of n
/// [Batch, EncSteps] to [Batch, DecSteps=n, EncSteps] (d2l's per-step
/// attention weights).
///
/// @p parts is any range (`std::vector`, `std::array`, a view) of
/// expressions of one type; New's extent is the list's length, dynamic.
/// One copy of every element and one node: each operand's gradient is its
/// entry of the result's.  New not a dimension tag, already a dim of the
/// operands, or Pos past their rank is a compile error
/// (`not_a_dimension_tag`, `already_a_dimension_of`, `position_past_rank`);
/// an empty list is a `value_error`; operands whose extents differ are a
/// `shape_error` naming the dim, the operands and both sizes.
template <class New, std::size_t Pos = 0, std::ranges::input_range R>
requires(Expression<std::remove_cvref_t<std::ranges::range_reference_t<R>>>) auto stack(R&& parts) {
  using X = std::remove_cvref_t<std::ranges::range_reference_t<R>>;
  using L = typename X::specs;
  if constexpr (rejects(detail::stack_diagnosis<New, Pos, L>())) {
    return ill_formed{};
  } else {
    constexpr std::size_t r = X::rank;
    using T = typename X::value_type;
    using B = typename X::backend;
    auto const list = detail::evaluated_list(std::forward<R>(parts));
    if (list.empty()) throw value_error("stack: the list of tensors is empty");
    auto const& first = list.front().extents();
    std::array<index_t, r + 1> ext{};
    for (std::size_t i = 0; i <= r; ++i) ext[i] = i < Pos ? first[i] : i == Pos ? 1 : first[i - 1];
    // Each operand as a view of rank r + 1 with New of extent 1 at Pos.
    using part_t = tensor_with_dims<B, T, boost::mp11::mp_insert_c<L, Pos, New>>;
    std::vector<part_t> views;
    views.reserve(list.size());
    std::vector<std::shared_ptr<autograd::tensor_state>> states;
    states.reserve(list.size());
    bool record = false;
    for (std::size_t k = 0; k < list.size(); ++k) {
      auto const& p = list[k];
      for (std::size_t i = 0; i < r; ++i) {
        if (p.extents()[i] != first[i]) {
          detail::throw_extent_mismatch("stack", detail::names_of<L>::value[i], first[i], p.extents()[i], "operand 0",
                                        "operand " + std::to_string(k));
        }
      }
      std::array<index_t, r + 1> str{};
      for (std::size_t i = 0; i <= r; ++i) str[i] = i < Pos ? p.strides()[i] : i == Pos ? 0 : p.strides()[i - 1];
      views.emplace_back(p.storage(), p.data(), ext, str);
      states.push_back(detail::state_if_required(p));
      if constexpr (std::is_floating_point_v<T>) record = record || autograd::should_record(p);
    }
    ext[Pos] = static_cast<index_t>(list.size());
    using out_t = tensor_with_dims<B, T, boost::mp11::mp_insert_c<L, Pos, New>>;
    out_t out(uninitialized, ext);
    detail::join_views(Pos, out, views, states, record);
    return out;
  }
}

}  // namespace dimtensor
