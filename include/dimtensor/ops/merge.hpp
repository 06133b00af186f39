#pragma once
/// @file
/// @brief `merge<A, B, To>(x)`: two adjacent dims become one, as a view when
/// the strides allow it.

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

template <class Call, class First, class Second, class Dims>
struct not_adjacent {
  static_assert(always_false<Call, First, Second, Dims>,
                "dimtensor: merge<A, B, To> needs B immediately after A in the tensor's dims; transpose or "
                "permute first (see not_adjacent<call, A, B, dims of the tensor> above)");
};

}  // namespace diagnostic

namespace detail {

/// What is wrong with merge<A, B, To>(x): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class A, class B, class To, class X>
constexpr auto merge_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L = typename X::specs;
    if constexpr (!DimTag<To>) {
      return std::type_identity<diagnostic::not_a_dimension_tag<call::merge, To>>{};
    } else if constexpr (!contains_v<A, L>) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::merge, A, L>>{};
    } else if constexpr (!contains_v<B, L>) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::merge, B, L>>{};
    } else if constexpr (std::is_same_v<A, B>) {
      return std::type_identity<diagnostic::named_twice<call::merge, A, dims<A, B>>>{};
    } else if constexpr (index_of_v<B, L> != index_of_v<A, L> + 1) {
      return std::type_identity<diagnostic::not_adjacent<call::merge, A, B, L>>{};
    } else if constexpr (contains_v<To, remove_dim<B, remove_dim<A, L>>>) {
      return std::type_identity<diagnostic::already_a_dimension_of<call::merge, To, L>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

template <class A, class To, class L>
struct merge_result {
  static constexpr std::size_t pos = index_of_v<A, L>;
  static constexpr index_t ea = static_extent_v<spec_at<L, pos>>;
  static constexpr index_t eb = static_extent_v<spec_at<L, pos + 1>>;
  using spec = std::conditional_t<ea == dynamic_extent || eb == dynamic_extent, To,
                                  fixed<To, (ea >= 0 && eb >= 0 ? ea * eb : 0)>>;
  using type = mp::mp_insert_c<mp::mp_erase_c<L, pos, pos + 2>, pos, spec>;
};

/// The stride of A and B merged, or -1 when no single stride walks both.
inline index_t merge_stride(index_t ea, index_t sa, index_t eb, index_t sb) {
  if (eb == 1) return sa;
  if (ea == 1 || ea * eb == 0) return sb;
  return sa == sb * eb ? sb : -1;
}

}  // namespace detail

/// @brief Merges the adjacent dims A and B (A immediately before B) into To
/// of extent extent(A)·extent(B), row-major, like a reshape:
/// `merge<Batch, Heads, BatchHeads>` maps [Batch=2, Heads=3, Queries, HeadFeat]
/// to [BatchHeads=6, Queries, HeadFeat] (d2l's transpose_qkv reshape).  To is
/// static when A and B both are.
///
/// A view when stride(A) = stride(B)·extent(B) (x row-major, for example);
/// otherwise x is copied to a contiguous tensor first.  An expression is
/// evaluated first.  The gradient goes back split into A and B, through
/// the copy when there is one.  A or B not dims of x (`not_a_dimension_of`), A the same
/// as B (`named_twice`), B not right after A (`not_adjacent`) or To another
/// dim of x (`already_a_dimension_of`) is a compile error.
template <class A, class B, class To, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto merge(X const& x) {
  if constexpr (rejects(detail::merge_diagnosis<A, B, To, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    using shape = detail::merge_result<A, To, L>;
    constexpr std::size_t pos = shape::pos;
    constexpr std::size_t r = X::rank;
    auto t = eval(x);
    index_t stride = detail::merge_stride(t.extents()[pos], t.strides()[pos], t.extents()[pos + 1],
                                           t.strides()[pos + 1]);
    if (stride < 0) {
      t = t.clone();
      stride = t.strides()[pos + 1];
    }
    std::array<index_t, r - 1> ext{};
    std::array<index_t, r - 1> str{};
    for (std::size_t k = 0; k < r; ++k) {
      if (k == pos + 1) continue;
      std::size_t const to = k <= pos ? k : k - 1;
      ext[to] = t.extents()[k];
      str[to] = t.strides()[k];
    }
    ext[pos] = t.extents()[pos] * t.extents()[pos + 1];
    str[pos] = stride;
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, typename shape::type>;
    out_t out(t.storage(), t.data(), ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      // t is the copy when x's strides needed one (recorded by clone), so
      // the gradient reaches x through it.
      if (autograd::should_record(t)) {
        auto const dense = detail::row_major_strides(t.extents());  // the same view of t laid out densely
        std::array<index_t, r - 1> dstr{};
        for (std::size_t k = 0; k < r; ++k) {
          if (k != pos + 1) dstr[k <= pos ? k : k - 1] = dense[k];
        }
        dstr[pos] = dense[pos + 1];
        autograd::record_view("merge", out, t, dstr);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
