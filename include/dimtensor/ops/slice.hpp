#pragma once
/// @file
/// @brief `slice<D>(x, begin, end, step)`: a range of indices along one dim,
/// every step-th, as a view.

#include <cstddef>
#include <type_traits>
#include <string>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/call.hpp>
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

/// @brief The indices [@p begin, @p end) along the dim D, every @p step-th:
/// `slice<Steps>(x, 1, 3)` maps [Batch, Steps=5, Embed] to
/// [Batch, Steps=2, Embed]; `slice<Hidden>(P, 0, 32, 2)` takes the even
/// features (Python's `P[:, :, 0:32:2]`, d2l's `0::2`).  D's extent becomes
/// dynamic in the result: ⌈(end - begin) / step⌉.
///
/// A view: the result shares x's elements.  An expression is evaluated first.
/// x's gradient is the result's at the selected indices and 0 elsewhere.
/// D not a dim of x is a compile error (`not_a_dimension_of`); bounds outside
/// 0 ≤ begin ≤ end ≤ extent(D), or a step below 1, are a `value_error`
/// naming D, its extent and the bounds.
template <class D, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto slice(X const& x, index_t begin, index_t end, index_t step = 1) {
  if constexpr (rejects(detail::slice_diagnosis<D, X>())) {
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
    if (step < 1) {
      throw value_error("slice: step " + std::to_string(step) + " along dimension " + std::string(dim_name_v<D>) +
                        " must be at least 1");
    }
    index_t const n = (end - begin) / step + ((end - begin) % step != 0 ? 1 : 0);
    // With at most one index the step never moves the pointer: 1 keeps
    // stride · step from overflowing for a step far beyond the extent.
    index_t const stride_step = n > 1 ? step : 1;
    auto ext = t.extents();
    ext[pos] = n;
    auto str = t.strides();
    str[pos] *= stride_step;
    // An empty slice keeps the origin, so no pointer is formed past the storage.
    bool const empty = n == 0 || t.size() == 0;
    auto* const data = empty ? t.data() : t.data() + begin * t.strides()[pos];
    using out_dims = boost::mp11::mp_replace_at_c<L, pos, D>;
    using out_t = tensor_with_dims<typename X::backend, typename X::value_type, out_dims>;
    out_t out(t.storage(), data, ext, str);
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        // The gradient: zeros of x's extents with g at the sliced indices.
        auto const dense = detail::row_major_strides(t.extents());
        auto dstr = dense;
        dstr[pos] *= stride_step;
        autograd::record_view("slice", out, t, dstr, empty ? 0 : begin * dense[pos]);
      }
    }
    return out;
  }
}

}  // namespace dimtensor
