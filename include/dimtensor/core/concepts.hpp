#pragma once
/// @file
/// @brief The concepts of the expression layer.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <dimtensor/core/diagnostic.hpp>
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

/// @brief What an operation takes as an operand: an expression or tensor
/// (any cv-ref), or the `ill_formed` of an earlier rejected call, which the
/// operation passes on, so that one mistake gives one error.
template <class A>
concept Operand = Expression<expr_t<A>> || is_ill_formed_v<A>;

/// A C++ arithmetic scalar usable with a tensor in `x * 2.0`.
template <class S>
concept Scalar = std::is_arithmetic_v<std::remove_cvref_t<S>>;

}  // namespace dimtensor
