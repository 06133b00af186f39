#pragma once
/// @file
/// @brief Factories: zeros, ones, full, arange, from a buffer or a range.
/// Extents are named at the call site: `zeros<float>(Batch(2), Queries(4))`;
/// `Hidden::fixed<8>{}` gives a static extent.

#include <cmath>
#include <cstddef>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/core/convert.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {
/// The spec a named-extent argument stands for: `Batch(2)` → Batch, `Hidden::fixed<8>{}` → Hidden::fixed<8>.
template <class A>
using spec_of_arg = std::remove_cvref_t<A>;

template <class A>
concept NamedExtent = DimSpec<std::remove_cvref_t<A>>;

template <class T, class... Named>
using tensor_of_args = tensor<T, spec_of_arg<Named>...>;

/// Element i of start + i * step (host and device).
template <class T>
struct arithmetic_progression {
  T* out;
  double start;
  double step;
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    out[i] = static_cast<T>(start + static_cast<double>(i) * step);
  }
};
}  // namespace detail

/// A tensor of the named extents filled with @p value.
template <class T, detail::NamedExtent... Named>
auto full(T value, Named const&... extents) {
  detail::tensor_of_args<T, Named...> t(uninitialized, {detail::named_extent(extents)...});
  t.fill(value);
  return t;
}

/// A tensor of zeros: `zeros<float>(Batch(2), KVPairs(10))`.
template <class T, detail::NamedExtent... Named>
auto zeros(Named const&... extents) {
  return full<T>(T(0), extents...);
}

/// A tensor of ones.
template <class T, detail::NamedExtent... Named>
auto ones(Named const&... extents) {
  return full<T>(T(1), extents...);
}

/// A tensor with uninitialized elements (fill it before reading it).
template <class T, detail::NamedExtent... Named>
auto empty(Named const&... extents) {
  return detail::tensor_of_args<T, Named...>(uninitialized, {detail::named_extent(extents)...});
}

/// 0, 1, …, n-1 along one dim: `arange<float>(KVPairs(10))`.
template <class T, detail::NamedExtent Named>
auto arange(Named const& extent) {
  auto t = empty<T>(extent);
  if (t.size() > 0 && !detail::representable_as<T>(t.size() - 1)) {
    throw value_error(detail::not_representable_text<T>("arange: the last element", t.size() - 1));
  }
  backend_for_each(typename decltype(t)::backend{}, t.size(), detail::arithmetic_progression<T>{t.data(), 0.0, 1.0});
  return t;
}

/// @brief start, start + step, … below stop (PyTorch's `arange(start, stop, step)`),
/// along dim D: `arange<float, Points>(0, 5, 0.1)` has 50 elements.
template <class T, class D>
auto arange(double start, double stop, double step = 1.0) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    throw value_error("arange: start, stop and step must be finite and step non-zero");
  }
  double const count = std::ceil((stop - start) / step);
  if (count >= 0x1p62) {  // converting it to index_t would overflow
    throw value_error("arange: " + std::to_string(count) + " elements are too many");
  }
  index_t const n = count > 0 ? static_cast<index_t>(count) : 0;
  // The progression is monotone: its ends bound every element. Each must be
  // a value of T (an int32 of 3e9 would wrap, a float of 1e300 has none).
  if (n > 0) {
    double const last = start + static_cast<double>(n - 1) * step;
    if (!detail::representable_as<T>(start)) {
      throw value_error(detail::not_representable_text<T>("arange: the first element", start));
    }
    if (!detail::representable_as<T>(last)) {
      throw value_error(detail::not_representable_text<T>("arange: the last element", last));
    }
  }
  tensor<T, D> t(uninitialized, {n});
  backend_for_each(typename tensor<T, D>::backend{}, n, detail::arithmetic_progression<T>{t.data(), start, step});
  return t;
}

/// @brief A tensor copied from @p n contiguous elements at @p data, row-major,
/// with the named extents; their product must be @p n (`value_error` otherwise).
template <class T, detail::NamedExtent... Named>
auto from_buffer(T const* data, index_t n, Named const&... extents) {
  auto t = empty<T>(extents...);
  if (t.size() != n) {
    throw value_error("from_buffer: the extents " + detail::shape_string<typename decltype(t)::specs>(t.extents()) +
                      " hold " + std::to_string(t.size()) + " elements but the buffer has " + std::to_string(n));
  }
  backend_copy_from_host(typename decltype(t)::backend{}, t.data(), data, n);
  return t;
}

namespace detail {

/// What from_range reads: a range whose size std::size() gives (a std::vector,
/// an array, a sized view…), spelled without `<ranges>`, which the umbrella
/// would otherwise parse in every file.
template <class R>
concept sized_range = requires(R const& r) {
  std::size(r);
  std::begin(r);
  std::end(r);
};

}  // namespace detail

/// A tensor copied from a sized range (a std::vector, an array…), row-major.
template <class T, detail::sized_range R, detail::NamedExtent... Named>
auto from_range(R const& r, Named const&... extents) {
  auto t = empty<T>(extents...);
  auto const n = static_cast<index_t>(std::size(r));
  if (t.size() != n) {
    throw value_error("from_range: the extents " + detail::shape_string<typename decltype(t)::specs>(t.extents()) +
                      " hold " + std::to_string(t.size()) + " elements but the range has " + std::to_string(n));
  }
  auto const staged = detail::host_buffer<T>(n);
  T* p = staged.get();
  using V = std::remove_cvref_t<decltype(*std::begin(r))>;
  index_t i = 0;
  for (auto const& v : r) {
    if constexpr (std::is_arithmetic_v<V> && !std::is_same_v<V, T>) {
      if (!detail::representable_as<T>(v)) {
        throw value_error(detail::not_representable_text<T>("from_range: element " + std::to_string(i), v));
      }
    }
    *p++ = static_cast<T>(v);
    ++i;
  }
  backend_copy_from_host(typename decltype(t)::backend{}, t.data(), static_cast<T const*>(staged.get()), n);
  return t;
}

}  // namespace dimtensor
