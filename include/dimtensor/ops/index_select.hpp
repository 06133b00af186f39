#pragma once
/// @file
/// @brief `index_select<D>(x, indices)`: gathers along one dim by a tensor of
/// indices (NumPy's `take`; an embedding lookup); copies.

#include <array>
#include <cstddef>
#include <cstdint>
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
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

template <class Call, class Element>
struct indices_not_integer {
  static_assert(always_false<Call, Element>,
                "dimtensor: the indices must hold std::int32_t or std::int64_t; convert them explicitly with "
                "cast<std::int64_t>(indices) (see indices_not_integer<call, element type of the indices> above)");
};

}  // namespace diagnostic

namespace detail {

/// x's dims with D replaced, at its position, by the dims of the indices.
template <class D, class L, class I>
using index_select_dims =
    mp::mp_append<mp::mp_take_c<L, index_of_v<D, L>>, I, mp::mp_drop_c<L, index_of_v<D, L> + 1>>;

/// What is wrong with index_select<D>(x, indices): a diagnostic class
/// (named, not yet instantiated), `ill_formed` when an argument already is
/// (reported before), or void.
template <class D, class X, class Ix>
constexpr auto index_select_diagnosis() {
  if constexpr (any_ill_formed_v<X, Ix>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L = typename X::specs;
    using I = typename Ix::specs;
    using idx_t = typename Ix::value_type;
    if constexpr (!std::is_same_v<typename X::backend, typename Ix::backend>) {
      return std::type_identity<
          diagnostic::backends_differ<call::index_select, typename X::backend, typename Ix::backend>>{};
    } else if constexpr (!std::is_same_v<idx_t, std::int32_t> && !std::is_same_v<idx_t, std::int64_t>) {
      return std::type_identity<diagnostic::indices_not_integer<call::index_select, idx_t>>{};
    } else if constexpr (!contains_v<D, L>) {
      return std::type_identity<diagnostic::not_a_dimension_of<call::index_select, D, L>>{};
    } else if constexpr (!is_unique_v<index_select_dims<D, L, I>>) {
      return std::type_identity<
          diagnostic::duplicate_dimension<first_duplicate<index_select_dims<D, L, I>>, index_select_dims<D, L, I>>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

/// index_select<D>(x, indices) for arguments its diagnosis accepted, the
/// entries that picked index @p skip adding nothing to x's gradient (an
/// embedding's padding row; -1: none).
template <class D, class X, class Ix>
auto index_select_skipping(X const& x, Ix const& indices, index_t skip) {
  using L = typename X::specs;
  using B = typename X::backend;
  constexpr std::size_t pos = detail::index_of_v<D, L>;
  constexpr std::size_t r = X::rank;
  constexpr std::size_t ri = Ix::rank;
  using out_t = tensor_with_dims<B, typename X::value_type, detail::index_select_dims<D, L, typename Ix::specs>>;
  auto const t = eval(x).contiguous();
  auto const idx = eval(indices).contiguous();
  index_t const extent = t.extents()[pos];
  index_t const count = idx.size();
  index_t const bad = backend_first_out_of_range(B{}, idx.data(), count, extent);
  if (bad >= 0) {
    throw value_error("index_select: index " + std::to_string(static_cast<index_t>(detail::read_element(B{}, idx.data() + bad))) +
                      " out of range for dimension " + std::string(dim_name_v<D>) + " of extent " +
                      std::to_string(extent));
  }
  std::array<index_t, r - 1 + ri> ext{};
  index_t outer = 1;
  index_t inner = 1;
  for (std::size_t k = 0; k < pos; ++k) {
    ext[k] = t.extents()[k];
    outer *= t.extents()[k];
  }
  for (std::size_t k = 0; k < ri; ++k) ext[pos + k] = idx.extents()[k];
  for (std::size_t k = pos + 1; k < r; ++k) {
    ext[k - 1 + ri] = t.extents()[k];
    inner *= t.extents()[k];
  }
  out_t out(uninitialized, ext);
  backend_gather(B{}, out.data(), t.data(), outer, extent, inner, idx.data(), count);
  if constexpr (std::is_floating_point_v<typename X::value_type>) {
    if (autograd::should_record(t)) {
      // Zeros of x's extents, each selected index adding its entries of g.
      typename autograd::line_node<B, typename X::value_type>::saved keep;
      auto const wide = detail::as_int64(idx);
      keep.lens_keep = wide.storage();
      keep.lens = wide.data();
      keep.count = idx.size();
      keep.skip = skip;
      autograd::record_lines("index_select", out, t, autograd::line_rule::index_add,
                             kernel::lines{outer, t.extents()[pos], inner}, std::move(keep));
    }
  }
  return out;
}

}  // namespace detail

/// @brief Picks, along the dim D of x, the entries the indices name; D is
/// replaced, at its position, by the dims of the indices (NumPy's `take`).
/// An embedding lookup: weight [Vocab, Embed] and tokens [Batch, Steps]
/// give `index_select<Vocab>(weight, tokens)` of [Batch, Steps, Embed].
///
/// The indices are a tensor (or expression) of std::int32_t or std::int64_t
/// with any dims.  Copies into a new contiguous tensor; expressions are
/// evaluated first.  x's gradient adds up, at each index, the gradients
/// of the entries that picked it (a repeated index gets the sum); the
/// indices get none.  Float indices (`indices_not_integer`), D not a dim of x
/// (`not_a_dimension_of`) or an index dim that x also has
/// (`duplicate_dimension`) are compile errors; an index outside
/// [0, extent(D)) is a `value_error` naming it, D and the extent.
template <class D, class X, class Ix>
  requires((Expression<X> || is_ill_formed_v<X>) && (Expression<Ix> || is_ill_formed_v<Ix>))
auto index_select(X const& x, Ix const& indices) {
  if constexpr (rejects(detail::index_select_diagnosis<D, X, Ix>())) {
    return ill_formed{};
  } else {
    return detail::index_select_skipping<D>(x, indices, -1);
  }
}

/// An index whose picks pass no gradient back (`nn.Embedding`'s
/// `padding_idx`); -1: none.
struct padding_index {
  /// The index along the selected dim, or -1.
  index_t value = -1;
};

/// @brief index_select<D>(x, indices), the entries that pick
/// @p padding.value adding nothing to x's gradient (an embedding's
/// padding row: its lookups are values, never trained).
template <class D, class X, class Ix>
  requires((Expression<X> || is_ill_formed_v<X>) && (Expression<Ix> || is_ill_formed_v<Ix>))
auto index_select(X const& x, Ix const& indices, padding_index padding) {
  if constexpr (rejects(detail::index_select_diagnosis<D, X, Ix>())) {
    return ill_formed{};
  } else {
    return detail::index_select_skipping<D>(x, indices, padding.value);
  }
}

}  // namespace dimtensor
