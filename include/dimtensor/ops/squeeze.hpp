#pragma once
/// @file
/// @brief `squeeze<D>(x)`: removes a dim of extent 1, as a view.

#include <array>
#include <cstddef>
#include <type_traits>
#include <string>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// One static extent, in a diagnostic.
template <index_t N>
struct static_extent {};

template <class Call, class Dim, class Extent>
struct extent_is_not_1 {
  static_assert(always_false<Call, Dim, Extent>,
                "dimtensor: squeeze removes a dimension of extent 1, and this dimension has a static extent "
                "other than 1 (see extent_is_not_1<call, dimension, static_extent<n>> above); to drop a "
                "dimension of any extent, slice, index_select or reduce it");
};

}  // namespace diagnostic

namespace detail {

/// What is wrong with squeeze<D>(x): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class D, class X>
constexpr auto squeeze_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L = typename X::specs;
    if constexpr (!contains_v<D, L>) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::squeeze, D, L>>{};
    } else if constexpr (is_static_v<spec_for<D, L>> && static_extent_v<spec_for<D, L>> != 1) {
      return std::type_identity<
          diagnostic::extent_is_not_1<call::squeeze, D, diagnostic::static_extent<static_extent_v<spec_for<D, L>>>>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

}  // namespace detail

/// @brief Removes the dim D, whose extent must be 1: `squeeze<Score>` maps
/// [Batch, Queries, KVPairs, Score[1]] to [Batch, Queries, KVPairs].
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// The gradient goes back with D restored.
/// D not a dim of x, or of a static extent other than 1, is a compile error
/// (`not_a_dimension_of`, `extent_is_not_1`); a dynamic extent other than 1
/// is a `shape_error` naming D and its extent.
template <class D, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto squeeze(X const& x) {
  if constexpr (rejects(detail::squeeze_diagnosis<D, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    constexpr std::size_t r = X::rank;
    constexpr std::size_t pos = detail::index_of_v<D, L>;
    auto const t = eval(x);
    if (t.extents()[pos] != 1) {
      throw shape_error("squeeze: dimension " + std::string(dim_name_v<D>) + " has extent " +
                        std::to_string(t.extents()[pos]) + ", not 1, in " + detail::shape_string<L>(t.extents()));
    }
    std::array<index_t, r - 1> ext{};
    std::array<index_t, r - 1> str{};
    for (std::size_t k = 0; k + 1 < r; ++k) {
      std::size_t const from = k < pos ? k : k + 1;
      ext[k] = t.extents()[from];
      str[k] = t.strides()[from];
    }
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, detail::remove_dim<D, L>>;
    out_t out(t.storage(), t.data(), ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        auto const dense = detail::row_major_strides(t.extents());  // the same view of t laid out densely
        std::array<index_t, r - 1> dstr{};
        for (std::size_t k = 0; k + 1 < r; ++k) dstr[k] = dense[k < pos ? k : k + 1];
        autograd::record_view("squeeze", out, t, dstr);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
