#pragma once
/// @file
/// @brief Evaluators: what a backend loop reads an expression through.
///
/// An expression bound to an output of rank R becomes an evaluator, a small
/// copyable struct of pointers and strides with two ways in:
///  - `flat()` / `at_flat(i)`: when every leaf has the output's extents and is
///    contiguous, element i of the output reads element i of every leaf;
///  - `row(outer)` / `at(j)`: otherwise, `row` positions every leaf at the row
///    given by the R-1 outer indices and `at(j)` reads column j.
/// Evaluators never loop over the output; the backends do.

#include <array>
#include <cstddef>
#include <tuple>
#include <utility>

#include <dimtensor/config.hpp>

namespace dimtensor::detail {

/// Reads a strided leaf, its dims right-aligned to an output of rank R;
/// broadcast positions have stride 0.
template <class T, std::size_t R>
struct strided_evaluator {
  T const* origin;
  T const* base;
  std::array<index_t, R> strides;
  bool is_flat;

  DIMTENSOR_HOST_DEVICE bool flat() const { return is_flat; }
  DIMTENSOR_HOST_DEVICE T at_flat(index_t i) const { return origin[i]; }
  DIMTENSOR_HOST_DEVICE void row(index_t const* outer) {
    index_t off = 0;
    for (std::size_t d = 0; d + 1 < R; ++d) off += outer[d] * strides[d];
    base = origin + off;
  }
  DIMTENSOR_HOST_DEVICE T at(index_t j) const {
    if constexpr (R == 0) {
      (void)j;
      return *base;
    } else {
      return base[j * strides[R - 1]];
    }
  }
};

/// Binds a leaf of rank N (extents, strides) to an output of rank R >= N.
template <class T, std::size_t R, std::size_t N>
DIMTENSOR_HOST_DEVICE strided_evaluator<T, R> bind_strided(T const* data, std::array<index_t, N> const& ext,
                                                           std::array<index_t, N> const& str,
                                                           std::array<index_t, R> const& out) {
  static_assert(N <= R);
  strided_evaluator<T, R> ev{data, data, {}, true};
  index_t expected = 1;
  for (std::size_t k = R; k-- > 0;) {
    if (k + N < R) {  // a leading position this leaf lacks
      ev.strides[k] = 0;
      if (out[k] != 1) ev.is_flat = false;
      continue;
    }
    std::size_t const i = k + N - R;
    bool const broadcast = ext[i] == 1;
    ev.strides[k] = broadcast ? 0 : str[i];
    if (ext[i] != out[k] || (out[k] != 1 && str[i] != expected)) ev.is_flat = false;
    expected *= out[k];
  }
  return ev;
}

/// A scalar operand.
template <class T>
struct scalar_evaluator {
  T value;
  DIMTENSOR_HOST_DEVICE bool flat() const { return true; }
  DIMTENSOR_HOST_DEVICE T at_flat(index_t) const { return value; }
  DIMTENSOR_HOST_DEVICE void row(index_t const*) {}
  DIMTENSOR_HOST_DEVICE T at(index_t) const { return value; }
};

/// An elementwise function of other evaluators.
template <class Op, class... Args>
struct map_evaluator {
  Op op;
  std::tuple<Args...> args;

  DIMTENSOR_HOST_DEVICE bool flat() const {
    return std::apply([](auto const&... a) { return (a.flat() && ...); }, args);
  }
  DIMTENSOR_HOST_DEVICE auto at_flat(index_t i) const {
    return std::apply([&](auto const&... a) { return op(a.at_flat(i)...); }, args);
  }
  DIMTENSOR_HOST_DEVICE void row(index_t const* outer) {
    std::apply([&](auto&... a) { (a.row(outer), ...); }, args);
  }
  DIMTENSOR_HOST_DEVICE auto at(index_t j) const {
    return std::apply([&](auto const&... a) { return op(a.at(j)...); }, args);
  }
};

}  // namespace dimtensor::detail
