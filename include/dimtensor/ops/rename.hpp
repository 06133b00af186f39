#pragma once
/// @file
/// @brief `rename<From, To>(x)`: the same elements under another dim name, as a view.

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

namespace detail {

/// What is wrong with rename<From, To>(x): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class From, class To, class X>
constexpr auto rename_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!DimTag<To>) {
    return std::type_identity<diagnostic::not_a_dimension_tag<call::rename, To>>{};
  } else if constexpr (!contains_v<From, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::rename, From, typename X::specs>>{};
  } else if constexpr (!std::is_same_v<From, To> && contains_v<To, typename X::specs>) {
    return std::type_identity<diagnostic::already_a_dimension_of<call::rename, To, typename X::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// The spec S with its tag replaced by To (a static extent is kept).
template <class S, class To>
using rename_spec = std::conditional_t<is_static_v<S>, fixed<To, (is_static_v<S> ? static_extent_v<S> : 0)>, To>;

}  // namespace detail

/// @brief The same elements with the dim From called To, at the same
/// position and with the same extent (a static extent stays static):
/// `rename<Hidden, Score>` maps [Batch, Hidden[1]] to [Batch, Score[1]].
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// The gradient goes back under the name From.
/// From not a dim of x (`not_a_dimension_of`), or To already one
/// (`already_a_dimension_of`), is a compile error.
template <class From, class To, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto rename(X const& x) {
  if constexpr (rejects(detail::rename_diagnosis<From, To, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    constexpr std::size_t pos = detail::index_of_v<From, L>;
    using out_dims = boost::mp11::mp_replace_at_c<L, pos, detail::rename_spec<detail::spec_at<L, pos>, To>>;
    auto const t = eval(x);
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, out_dims>;
    out_t out(t.storage(), t.data(), t.extents(), t.strides());
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        autograd::record_view("rename", out, t, detail::row_major_strides(t.extents()));
      }
    }
    return out;
  }
}

}  // namespace dimtensor
