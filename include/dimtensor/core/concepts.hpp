#pragma once
/// @file
/// @brief The concepts of the expression layer.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <dimtensor/core/dims.hpp>

namespace dimtensor {

/// The element types a tensor may hold.
template <class T>
concept Element = std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::int32_t> ||
                  std::same_as<T, std::int64_t> || std::same_as<T, bool>;

/// @brief A typed tensor expression: a tensor, a view, or a lazy elementwise
/// node.  It knows its element type, backend, dims and run-time extents, and
/// binds to an evaluator for a backend loop.
template <class E>
concept Expression = requires(E const& e) {
  typename E::value_type;
  typename E::backend;
  typename E::specs;
  { E::rank } -> std::convertible_to<std::size_t>;
  { e.extents() } -> std::convertible_to<std::array<index_t, E::rank>>;
  requires E::is_expression;
};

/// The plain type of an expression argument.
template <class E>
using expr_t = std::remove_cvref_t<E>;

/// A C++ arithmetic scalar usable with a tensor in `x * 2.0`.
template <class S>
concept Scalar = std::is_arithmetic_v<std::remove_cvref_t<S>>;

}  // namespace dimtensor
