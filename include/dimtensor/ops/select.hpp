#pragma once
/// @file
/// @brief `select<D>(x, i)`: one index along a dim, the dim dropped, as a view
/// (PyTorch's `x.select(dim, i)`, `state[-1]`).

#include <array>
#include <cstddef>
#include <string>
#include <type_traits>

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

namespace detail {

/// What is wrong with select<D>(x, …): a diagnostic class (named, not yet
/// instantiated), `ill_formed` when x already is (reported before), or void.
template <class D, class X>
constexpr auto select_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!contains_v<D, typename X::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::select, D, typename X::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief The entries of @p x at index @p i along the dim D, D dropped:
/// `select<Layers>(state, -1)` maps [Layers=2, Batch, Hidden] to
/// [Batch, Hidden], the top layer's state (d2l's `hidden_state[-1]`).
///
/// A negative @p i counts from the end, as in Python: -1 is the last.
/// A view: the result shares x's elements.  An expression is evaluated
/// first.  x's gradient is the result's at index i and 0 elsewhere.
/// D not a dim of x is a compile error (`not_a_dimension_of`); i outside
/// [-extent, extent) is a `value_error` naming D, its extent and i.
template <class D, class X>
requires(Expression<X> || is_ill_formed_v<X>) auto select(X const& x, index_t i) {
if constexpr (rejects(detail::select_diagnosis<D, X>())) {
  return ill_formed{};
}
else {
  using L = typename X::specs;
  constexpr std::size_t r = X::rank;
  constexpr std::size_t pos = detail::index_of_v<D, L>;
  auto const t = eval(x);
  index_t const e = t.extents()[pos];
  if (i < -e || i >= e) {
    throw value_error("select: index " + std::to_string(i) + " out of range for dimension " +
                      std::string(dim_name_v<D>) + " of extent " + std::to_string(e) +
                      " (need -extent <= index < extent)");
  }
  index_t const at = i < 0 ? i + e : i;
  std::array<index_t, r - 1> ext{};
  std::array<index_t, r - 1> str{};
  for (std::size_t k = 0; k + 1 < r; ++k) {
    std::size_t const from = k < pos ? k : k + 1;
    ext[k] = t.extents()[from];
    str[k] = t.strides()[from];
  }
  using out_t = tensor_with_dims<typename X::backend, typename X::value_type, detail::remove_dim<D, L>>;
  // An empty result keeps the origin, so no pointer is formed past the storage.
  bool const empty = t.size() == 0;
  out_t out(t.storage(), empty ? t.data() : t.data() + at * t.strides()[pos], ext, str);
  if constexpr (std::is_floating_point_v<typename X::value_type>) {
    if (autograd::should_record(t)) {
      // The gradient: zeros of x's extents with g at index `at` along D.
      auto const dense = detail::row_major_strides(t.extents());
      std::array<index_t, r - 1> dstr{};
      for (std::size_t k = 0; k + 1 < r; ++k) dstr[k] = dense[k < pos ? k : k + 1];
      autograd::record_view("select", out, t, dstr, empty ? 0 : at * dense[pos]);
    }
  }
  return out;
}
}

}  // namespace dimtensor
