#pragma once
/// @file
/// @brief `repeat_interleave<D>(x, n)`: every index along D repeated n times
/// (PyTorch's `repeat_interleave(x, n, dim)`); copies.

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/autograd/rules/line.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/tensor/lengths.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// What is wrong with repeat_interleave<D, To>(x, …): a diagnostic class
/// (named, not yet instantiated), `ill_formed` when x already is (reported
/// before), or void.
template <class D, class To, class X>
constexpr auto repeat_interleave_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!DimTag<To>) {
    return std::type_identity<diagnostic::not_a_dimension_tag<call::repeat_interleave, To>>{};
  } else if constexpr (!contains_v<D, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::repeat_interleave, D, typename X::specs>>{};
  } else if constexpr (!std::is_same_v<D, To> && contains_v<To, typename X::specs>) {
    return std::type_identity<diagnostic::already_a_dimension_of<call::repeat_interleave, To, typename X::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief Repeats every index along D @p repeats times in a row, into the
/// dim To (D unless named) of extent extent(D)·repeats:
/// `repeat_interleave<Batch, BatchHeads>(valid_lens, heads)` maps [Batch=2]
/// {a, b} to [BatchHeads=2·heads] {a, a, …, b, b, …} (d2l's multi-head
/// valid_lens).  To is dynamic.
///
/// Copies into a new contiguous tensor.  An expression is evaluated first.
/// x's gradient is the sum of the gradients of its repeats.  Typed lengths
/// (`lengths<KVPairs, Batch>`) come back as lengths of the same measured dim.
/// D not a dim of x (`not_a_dimension_of`), or To another dim of x
/// (`already_a_dimension_of`), is a compile error; a negative @p repeats is a
/// `value_error`.
template <class D, class To = D, class X>
  requires(Expression<X> || is_ill_formed_v<X>)
auto repeat_interleave(X const& x, index_t repeats) {
  if constexpr (rejects(detail::repeat_interleave_diagnosis<D, To, X>())) {
    return ill_formed{};
  } else {
    using L = typename X::specs;
    constexpr std::size_t pos = detail::index_of_v<D, L>;
    constexpr std::size_t r = X::rank;
    if (repeats < 0) {
      throw value_error("repeat_interleave: the number of repeats along dimension " + std::string(dim_name_v<D>) +
                        " must not be negative, got " + std::to_string(repeats));
    }
    auto const t = eval(x);
    auto ext = t.extents();
    ext[pos] = detail::checked_extent_product("repeat_interleave", ext[pos], repeats, [&] {
      return "dimension " + std::string(dim_name_v<D>) + " of extent " + std::to_string(ext[pos]) + " repeated " +
             std::to_string(repeats) + " times";
    });
    using out_t =
        tensor_with_dims<typename X::backend, typename X::value_type, boost::mp11::mp_replace_at_c<L, pos, To>>;
    out_t out(uninitialized, ext);  // checks the whole shape
    // The output is x with a dim of extent `repeats` after D, which the
    // source walks with stride 0: one broadcast copy.
    std::array<index_t, r + 1> wide_ext{};
    std::array<index_t, r + 1> src_str{};
    for (std::size_t k = 0; k < r; ++k) {
      std::size_t const to = k <= pos ? k : k + 1;
      wide_ext[to] = t.extents()[k];
      src_str[to] = t.strides()[k];
    }
    wide_ext[pos + 1] = repeats;
    src_str[pos + 1] = 0;
    // Empty: nothing to copy, and the wide layout's strides need not fit.
    if (out.size() != 0) {
      backend_strided_copy(typename X::backend{}, out.data(), detail::row_major_strides(wide_ext), t.data(), src_str,
                           wide_ext);
    }
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(t)) {
        // g is [outer·extent(D), repeats, inner] row-major: the repeats sum back.
        index_t rows = 1;
        index_t inner = 1;
        for (std::size_t k = 0; k <= pos; ++k) rows *= t.extents()[k];
        for (std::size_t k = pos + 1; k < r; ++k) inner *= t.extents()[k];
        autograd::record_lines("repeat_interleave", out, t, autograd::line_rule::sum_repeats,
                               kernel::lines{rows, repeats, inner}, {});
      }
    }
    if constexpr (is_lengths_v<X>) {
      // d2l's valid lengths repeated over the heads still measure the same dim.
      using lengths_t = lengths_with_dims<typename X::measures, typename X::backend, typename X::value_type,
                                          boost::mp11::mp_replace_at_c<L, pos, To>>;
      return lengths_t(std::move(out));
    } else {
      return out;
    }
  }
}

}  // namespace dimtensor
