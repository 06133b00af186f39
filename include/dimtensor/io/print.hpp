#pragma once
/// @file
/// @brief Printing tensors and expressions as PyTorch does, with the dims
/// appended: `std::cout << x` and `to_string(x)`.
///
/// The body follows PyTorch's `torch._tensor_str` with its default print
/// options, so that output can be compared with d2l's by eye:
///  - floats: 4 decimals and one common width; integral values print as
///    `1.`; scientific notation (`1.2346e+05`) when the non-zero finite
///    magnitudes span more than 1000×, exceed 1e8, or (non-integral) go below 1e-4;
///    `nan`, `inf`, `-inf` as Python spells them;
///  - integers plainly, bools as `True`/`False`, right-aligned to a common width;
///  - nested brackets, one row per line, a blank line between blocks of rank
///    3 and more, rows wrapped at 80 columns;
///  - beyond 1000 elements, only the first and last 3 entries of each dim,
///    with `...` between them.
///
/// Suffixes, separated by `, ` (or a line break when the line would pass 80
/// columns): always `dims=[Batch=2, Queries=4]` (each dim's name and extent,
/// outermost first; `dims=[]` at rank 0), then `dtype=float64` or
/// `dtype=int32` for element types PyTorch would not print without a dtype
/// (every type but float, std::int64_t and bool; every type but float when
/// the tensor is empty, since no element shows the type then).  Between the
/// two, `backend=thrust_omp` (the backend's `name`) when the tensor is not on
/// `default_backend`, as PyTorch prints `device='cuda:0'`:
///
///     tensor([[0.4324, 0.5676, 0.0000, 0.0000],
///             [0.2216, 0.3351, 0.4433, 0.0000]], dims=[Queries=2, KVPairs=4])
///     tensor(3.5000, dims=[])
///     tensor([1., 2.], dims=[Batch=2], backend=cuda, dtype=float64)
///
/// The elements of a backend the host cannot read (`cuda`) are copied to the
/// host first.

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// @brief How `to_string` lays a tensor out; the defaults are PyTorch's.
struct print_options {
  /// Digits after the decimal point for floating-point elements.
  int precision = 4;
  /// Tensors with more elements than this are summarized with `...`.
  index_t threshold = 1000;
  /// Entries shown at each end of a summarized dim.
  index_t edgeitems = 3;
  /// Column at which rows wrap.
  int linewidth = 80;
};

namespace detail {

/// @brief The bracketed body of the contiguous row-major buffer @p data of
/// extents @p ext, its rows indented to column @p indent (PyTorch's
/// `_tensor_str_with_formatter`).  Defined in src/io/print.cpp for every
/// element type.
template <class T>
std::string print_body(T const* data, std::vector<index_t> ext, print_options const& opts, std::size_t indent);

/// Appends `, suffix` (or a line break and the indent when the line would
/// pass the line width) and the closing parenthesis (PyTorch's `_add_suffixes`).
std::string add_suffixes(std::string s, std::vector<std::string> const& suffixes, std::size_t indent, int linewidth);

template <class T>
constexpr std::string_view print_dtype_name() {
  if constexpr (std::is_same_v<T, float>) {
    return "float32";
  } else if constexpr (std::is_same_v<T, double>) {
    return "float64";
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return "int32";
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return "int64";
  } else {
    return "bool";
  }
}

}  // namespace detail

/// @brief The text `std::cout << x` prints: PyTorch's layout of the elements
/// and `dims=[…]` (see the file comment for the exact rules).  An expression
/// is evaluated first, on its backend; elements the host cannot read are
/// copied to the host.
template <Expression E>
std::string to_string(E const& x, print_options const& opts = {}) {
  using T = typename E::value_type;
  using B = typename E::backend;
  auto const t = detail::to_host(x);
  constexpr std::string_view prefix = "tensor(";
  std::vector<std::string> suffixes{"dims=" + detail::shape_string<typename E::specs>(t.extents())};
  if constexpr (!std::is_same_v<B, default_backend>) {
    suffixes.push_back("backend=" + std::string(B::name));
  }
  std::string body;
  if (t.size() == 0) {
    body = "[]";
    if constexpr (!std::is_same_v<T, float>) {
      suffixes.push_back("dtype=" + std::string(detail::print_dtype_name<T>()));
    }
  } else {
    if constexpr (!std::is_same_v<T, float> && !std::is_same_v<T, std::int64_t> && !std::is_same_v<T, bool>) {
      suffixes.push_back("dtype=" + std::string(detail::print_dtype_name<T>()));
    }
    body = detail::print_body<T>(t.data(), std::vector<index_t>(t.extents().begin(), t.extents().end()), opts,
                                 prefix.size());
  }
  return detail::add_suffixes(std::string(prefix) + body, suffixes, prefix.size(), opts.linewidth);
}

/// Prints a tensor or an expression as `to_string` does.
template <Expression E>
std::ostream& operator<<(std::ostream& os, E const& x) {
  return os << to_string(x);
}

/// Prints the result of a call whose compile-time check failed (it cannot run).
inline std::ostream& operator<<(std::ostream& os, ill_formed) { return os << "ill_formed"; }

}  // namespace dimtensor
