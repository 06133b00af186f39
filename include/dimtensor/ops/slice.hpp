#pragma once
/// @file
/// @brief `slice<D>(x, begin, end)`: a range of indices along one dim, as a view.

#include <cstddef>
#include <type_traits>
#include <string>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// What is wrong with slice<D>(x, …): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class D, class X>
constexpr auto slice_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!contains_v<D, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::slice, D, typename X::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief The indices [@p begin, @p end) along the dim D:
/// `slice<Steps>(x, 1, 3)` maps [Batch, Steps=5, Embed] to
/// [Batch, Steps=2, Embed].  D's extent becomes dynamic in the result.
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// x's gradient is the result's inside [begin, end) and 0 elsewhere.
/// D not a dim of x is a compile error (`not_a_dimension_of`); bounds outside
/// 0 ≤ begin ≤ end ≤ extent(D) are a `value_error` naming D, its extent and
/// the bounds.
template <class D, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto slice(X const& x, index_t begin, index_t end) {
  using diagnosis = typename decltype(detail::slice_diagnosis<D, X>())::type;
  if constexpr (!std::is_void_v<diagnosis>) {
    diagnostic::fire<diagnosis>();  // the compile error, unless x was ill_formed
    return ill_formed{};
  } else {
    using L = typename X::specs;
    constexpr std::size_t pos = detail::index_of_v<D, L>;
    auto const t = eval(x);
    index_t const e = t.extents()[pos];
    if (begin < 0 || begin > end || end > e) {
      throw value_error("slice: bounds [" + std::to_string(begin) + ", " + std::to_string(end) +
                        ") out of range for dimension " + std::string(dim_name_v<D>) + " of extent " +
                        std::to_string(e) + " (need 0 <= begin <= end <= extent)");
    }
    auto ext = t.extents();
    ext[pos] = end - begin;
    // An empty slice keeps the origin, so no pointer is formed past the storage.
    auto* const data = begin < end ? t.data() + begin * t.strides()[pos] : t.data();
    using out_dims = boost::mp11::mp_replace_at_c<L, pos, D>;
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, out_dims>;
    out_t out(t.storage(), data, ext, t.strides());
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        // The gradient: zeros of x's extents with g in the sliced range.
        auto const dense = detail::row_major_strides(t.extents());
        autograd::record_view("slice", out, t, dense, begin < end ? begin * dense[pos] : 0);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
