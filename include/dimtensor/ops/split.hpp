#pragma once
/// @file
/// @brief `split<D, Outer, Inner>(x, Outer(n))`: one dim becomes two, as a view.

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/ops/merge.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

template <class Call, class Dim, class Extents>
struct not_divisible {
  static_assert(always_false<Call, Dim, Extents>,
                "dimtensor: the static extent of the dimension is not a multiple of the number of parts it is "
                "split into (see not_divisible<call, dimension, extents<extent, parts>> above)");
};

template <class Call, class Outer, class Given>
struct parts_not_an_extent_of {
  static_assert(always_false<Call, Outer, Given>,
                "dimtensor: split<D, Outer, Inner>(x, n): n is the extent of Outer or of Inner, written "
                "Outer(n), Inner(n), Outer::fixed<n>{} or Inner::fixed<n>{} (see parts_not_an_extent_of<call, "
                "Outer, what was given> above)");
};

}  // namespace diagnostic

namespace detail {

/// What is wrong with split<D, Outer, Inner>(x, n) where n is a Count: a
/// diagnostic class (named, not yet instantiated), `ill_formed` when x already
/// is (reported before), or void.
template <class D, class Outer, class Inner, class Count, class X>
constexpr auto split_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L = typename X::specs;
    using rest = remove_dim<D, L>;
    if constexpr (!DimTag<Outer>) {
      return std::type_identity<diagnostic::not_a_dimension_tag<call::split, Outer>>{};
    } else if constexpr (!DimTag<Inner>) {
      return std::type_identity<diagnostic::not_a_dimension_tag<call::split, Inner>>{};
    } else if constexpr (!std::is_same_v<dim_of<Count>, Outer> && !std::is_same_v<dim_of<Count>, Inner>) {
      return std::type_identity<diagnostic::parts_not_an_extent_of<call::split, Outer, Count>>{};
    } else if constexpr (!contains_v<D, L>) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::split, D, L>>{};
    } else if constexpr (std::is_same_v<Outer, Inner>) {
      return std::type_identity<diagnostic::named_twice<call::split, Outer, dims<Outer, Inner>>>{};
    } else if constexpr (contains_v<Outer, rest>) {
      return std::type_identity<diagnostic::already_a_dimension_of<call::split, Outer, L>>{};
    } else if constexpr (contains_v<Inner, rest>) {
      return std::type_identity<diagnostic::already_a_dimension_of<call::split, Inner, L>>{};
    } else {
      constexpr index_t e = static_extent_v<spec_for<D, L>>;
      constexpr index_t n = static_extent_v<Count>;
      if constexpr (e != dynamic_extent && n != dynamic_extent && (n == 0 || e % n != 0)) {
        return std::type_identity<diagnostic::not_divisible<call::split, D, diagnostic::extents<e, n>>>{};
      } else {
        return std::type_identity<void>{};
      }
    }
  }
}

/// The dims of split<D, Outer, Inner>(x, n) on dims L, n a Count of Outer
/// (the given extent is Outer's) or of Inner (Inner's).
template <class D, class Outer, class Inner, class Count, class L>
struct split_result {
  static constexpr std::size_t pos = index_of_v<D, L>;
  static constexpr index_t e = static_extent_v<spec_at<L, pos>>;
  static constexpr index_t n = static_extent_v<Count>;
  /// Whether n counts Inner rather than Outer.
  static constexpr bool counts_inner = std::is_same_v<dim_of<Count>, Inner>;
  using given = std::conditional_t<counts_inner, Inner, Outer>;
  using other = std::conditional_t<counts_inner, Outer, Inner>;
  using given_spec = std::conditional_t<n == dynamic_extent, given, fixed<given, (n > 0 ? n : 1)>>;
  using other_spec = std::conditional_t<e == dynamic_extent || n == dynamic_extent, other,
                                        fixed<other, (e >= 0 && n > 0 ? e / n : 0)>>;
  using outer = std::conditional_t<counts_inner, other_spec, given_spec>;
  using inner = std::conditional_t<counts_inner, given_spec, other_spec>;
  using type = mp::mp_insert_c<mp::mp_erase_c<L, pos, pos + 1>, pos, outer, inner>;
};

}  // namespace detail

/// @brief Splits the dim D into Outer (extent n) followed by Inner (extent
/// extent(D) / n), row-major, like a reshape: with heads 3,
/// `split<Hidden, Heads, HeadFeat>(x, Heads(3))` maps [Batch, Queries, Hidden=6]
/// to [Batch, Queries, Heads=3, HeadFeat=2] (d2l's transpose_qkv reshape).
///
/// n is `Outer(n)` or `Outer::fixed<N>{}`, the extent of Outer; or
/// `Inner(n)` or `Inner::fixed<N>{}`, the extent of Inner, and Outer gets
/// extent(D) / n (which splits an empty D too: `split<BatchHeads, Batch,
/// Heads>(x, Heads(4))` of BatchHeads=0 is Batch=0, Heads=4).  The dim n
/// names is static when n is; the other when D and n both are.  A view for any strides: the
/// result shares x's elements.  An expression is evaluated first.  The
/// gradient goes back with Outer and Inner merged into D.
/// D not a dim of x (`not_a_dimension_of`), Outer or Inner already dims of x
/// (`already_a_dimension_of`), Outer the same as Inner (`named_twice`), or
/// static extents that do not divide (`not_divisible`) are compile errors;
/// dynamic ones that do not divide, or n ≤ 0, are a `value_error` naming D,
/// its extent and n.
template <class D, class Outer, class Inner, class X, class Count>
  requires(Expression<X> || is_ill_formed_v<X>)
auto split(X const& x, Count const& parts) {
  if constexpr (rejects(detail::split_diagnosis<D, Outer, Inner, Count, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    using shape = detail::split_result<D, Outer, Inner, Count, L>;
    constexpr std::size_t pos = shape::pos;
    constexpr std::size_t r = X::rank;
    index_t const n = detail::named_extent(parts);
    auto const t = eval(x);
    index_t const e = t.extents()[pos];
    if (n <= 0 || e % n != 0) {
      throw value_error("split: dimension " + std::string(dim_name_v<D>) + " of extent " + std::to_string(e) +
                        " cannot be split into " + std::string(dim_name_v<typename shape::given>) + "=" +
                        std::to_string(n) + (shape::counts_inner ? " elements each" : " parts") +
                        (n <= 0 ? std::string(" (the ") + (shape::counts_inner ? "count" : "number of parts") +
                                      " must be positive)"
                                : std::string(" (not a divisor)")));
    }
    std::array<index_t, r + 1> ext{};
    std::array<index_t, r + 1> str{};
    for (std::size_t k = 0; k < r; ++k) {
      std::size_t const to = k <= pos ? k : k + 1;
      ext[to] = t.extents()[k];
      str[to] = t.strides()[k];
    }
    index_t const s = t.strides()[pos];
    ext[pos] = shape::counts_inner ? e / n : n;
    ext[pos + 1] = shape::counts_inner ? n : e / n;
    str[pos] = s * ext[pos + 1];
    str[pos + 1] = s;
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, typename shape::type>;
    out_t out(t.storage(), t.data(), ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        auto const dense = detail::row_major_strides(t.extents());  // the same view of t laid out densely
        std::array<index_t, r + 1> dstr{};
        for (std::size_t k = 0; k < r; ++k) dstr[k <= pos ? k : k + 1] = dense[k];
        dstr[pos] = dense[pos] * ext[pos + 1];
        dstr[pos + 1] = dense[pos];
        autograd::record_view("split", out, t, dstr);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
