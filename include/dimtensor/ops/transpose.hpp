#pragma once
/// @file
/// @brief `transpose<A, B>(x)`: swaps two dims, as a view.

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// What is wrong with transpose<A, B>(x): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class A, class B, class X>
constexpr auto transpose_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!contains_v<A, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::transpose, A, typename X::specs>>{};
  } else if constexpr (!contains_v<B, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::transpose, B, typename X::specs>>{};
  } else if constexpr (std::is_same_v<A, B>) {
    return std::type_identity<diagnostic::named_twice<call::transpose, A, dims<A, B>>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief Swaps the positions of the dims A and B: `transpose<KVPairs, Hidden>`
/// maps [Batch, KVPairs, Hidden] to [Batch, Hidden, KVPairs] (what bmm needs
/// for queries · keysᵀ).
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// A or B not a dim of x (`not_a_dimension_of`), or A the same as B
/// (`named_twice`), is a compile error.
template <class A, class B, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto transpose(X const& x) {
  if constexpr (rejects(detail::transpose_diagnosis<A, B, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    constexpr std::size_t ia = detail::index_of_v<A, L>;
    constexpr std::size_t ib = detail::index_of_v<B, L>;
    auto const t = eval(x);
    auto ext = t.extents();
    auto str = t.strides();
    std::swap(ext[ia], ext[ib]);
    std::swap(str[ia], str[ib]);
    using out_dims =
        boost::mp11::mp_replace_at_c<boost::mp11::mp_replace_at_c<L, ia, detail::spec_at<L, ib>>, ib,
                                     detail::spec_at<L, ia>>;
    tensor_with_dims<typename X::backend, typename X::value_type, out_dims> out(t.storage(), t.data(), ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        auto dense = detail::row_major_strides(t.extents());  // the same view of t laid out densely
        std::swap(dense[ia], dense[ib]);
        autograd::record_view("transpose", out, t, dense);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
