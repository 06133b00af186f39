#pragma once
/// @file
/// @brief `permute<Ds...>(x)`: reorders the dims, as a view.

#include <array>
#include <cstddef>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

template <class Call, class Dim, class Named, class Dims>
struct missing_from_permutation {
  static_assert(always_false<Call, Dim, Named, Dims>,
                "dimtensor: permute must name every dimension of the tensor exactly once, and this one is "
                "missing (see missing_from_permutation<call, dimension, dims as named, dims of the tensor> above)");
};

}  // namespace diagnostic

namespace detail {

template <class L>
struct permute_not_in {
  template <class D>
  using fn = mp::mp_bool<!mp::mp_contains<L, D>::value>;
};

/// What is wrong with permute<Ds...>(x): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class X, class... Ds>
constexpr auto permute_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L = typename X::specs;
    using named = dims<Ds...>;
    using extra = mp::mp_find_if_q<named, permute_not_in<tags_of<L>>>;
    using missing = mp::mp_find_if_q<tags_of<L>, permute_not_in<named>>;
    if constexpr (extra::value < sizeof...(Ds)) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::permute, mp::mp_at<named, extra>, L>>{};
    } else if constexpr (!mp::mp_is_set<named>::value) {
      return std::type_identity<diagnostic::named_twice<call::permute, first_duplicate<named>, named>>{};
    } else if constexpr (missing::value < rank_v<L>) {
      return std::type_identity<
          diagnostic::missing_from_permutation<call::permute, mp::mp_at<tags_of<L>, missing>, named, L>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

}  // namespace detail

/// @brief Reorders x's dims to Ds..., which must name every dim of x once:
/// `permute<Batch, Heads, Queries, HeadFeat>` maps
/// [Batch, Queries, Heads, HeadFeat] to [Batch, Heads, Queries, HeadFeat].
/// Static extents are kept.
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// The gradient goes back through the inverse permutation.
/// A name that is not a dim of x (`not_a_dimension_of`), a name given twice
/// (`named_twice`) or a dim of x left out (`missing_from_permutation`) is a
/// compile error.
template <class... Ds, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto permute(X const& x) {
  if constexpr (rejects(detail::permute_diagnosis<X, Ds...>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    auto const t = eval(x);
    constexpr std::array<std::size_t, X::rank> from{detail::index_of_v<Ds, L>...};
    std::array<index_t, X::rank> ext{};
    std::array<index_t, X::rank> str{};
    for (std::size_t k = 0; k < X::rank; ++k) {
      ext[k] = t.extents()[from[k]];
      str[k] = t.strides()[from[k]];
    }
    using out_dims = dims<detail::spec_for<Ds, L>...>;
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, out_dims>;
    out_t out(t.storage(), t.data(), ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        auto const dense = detail::row_major_strides(t.extents());  // the same view of t laid out densely
        std::array<index_t, X::rank> dstr{};
        for (std::size_t k = 0; k < X::rank; ++k) dstr[k] = dense[from[k]];
        autograd::record_view("permute", out, t, dstr);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
