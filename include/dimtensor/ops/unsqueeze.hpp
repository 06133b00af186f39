#pragma once
/// @file
/// @brief `unsqueeze<D, Pos>(x)`: a new dim of static extent 1, as a view.

#include <array>
#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// The rank of a tensor, in a diagnostic.
template <std::size_t R>
struct tensor_rank {};

template <class Call, class Position, class Rank, class Dims>
struct position_past_rank {
  static_assert(always_false<Call, Position, Rank, Dims>,
                "dimtensor: the position is past the rank of the tensor; unsqueeze<D, Pos> and stack<D, Pos> "
                "insert D before the dim at Pos, so Pos goes from 0 to the rank (see position_past_rank<call, at_position<Pos>, "
                "tensor_rank<rank>, dims of the tensor> above)");
};

}  // namespace diagnostic

namespace detail {

/// What is wrong with unsqueeze<D, Pos>(x): a diagnostic class (named, not
/// yet instantiated), `ill_formed` when x already is (reported before), or void.
template <class D, std::size_t Pos, class X>
constexpr auto unsqueeze_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!DimTag<D>) {
    return std::type_identity<diagnostic::not_a_dimension_tag<call::unsqueeze, D>>{};
  } else if constexpr (contains_v<D, typename X::specs>) {
    return std::type_identity<diagnostic::already_a_dimension_of<call::unsqueeze, D, typename X::specs>>{};
  } else if constexpr (Pos > X::rank) {
    return std::type_identity<diagnostic::position_past_rank<call::unsqueeze, diagnostic::at_position<Pos>,
                                                             diagnostic::tensor_rank<X::rank>, typename X::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief Inserts the dim `D::fixed<1>` at position @p Pos (0 = outermost,
/// rank = innermost): `unsqueeze<KVPairs, 2>` maps [Batch, Queries, Hidden]
/// to [Batch, Queries, KVPairs[1], Hidden], ready to broadcast against
/// [Batch, KVPairs, Hidden].
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// The gradient goes back without D.
/// D already a dim of x, or Pos past the rank, is a compile error
/// (`already_a_dimension_of`, `position_past_rank`).
template <class D, std::size_t Pos, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto unsqueeze(X const& x) {
  if constexpr (rejects(detail::unsqueeze_diagnosis<D, Pos, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    constexpr std::size_t r = X::rank;
    auto const t = eval(x);
    auto const& in_ext = t.extents();
    auto const& in_str = t.strides();
    std::array<index_t, r + 1> ext{};
    std::array<index_t, r + 1> str{};
    for (std::size_t k = 0; k < r; ++k) {
      std::size_t const to = k < Pos ? k : k + 1;
      ext[to] = in_ext[k];
      str[to] = in_str[k];
    }
    ext[Pos] = 1;
    // Any stride serves an extent of 1; PyTorch's choice keeps the view row-major when x is.
    if constexpr (Pos < r) {
      str[Pos] = in_str[Pos] * in_ext[Pos];
    } else {
      str[Pos] = 1;
    }
    using out_dims = boost::mp11::mp_insert_c<L, Pos, fixed<D, 1>>;
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, out_dims>;
    out_t out(t.storage(), t.data(), ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        auto const dense = detail::row_major_strides(in_ext);  // the same view of t laid out densely
        std::array<index_t, r + 1> dstr{};                     // D's extent is 1: its stride is never used
        for (std::size_t k = 0; k < r; ++k) dstr[k < Pos ? k : k + 1] = dense[k];
        autograd::record_view("unsqueeze", out, t, dstr);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
