#pragma once
/// @file
/// @brief What every backend's reductions share: the type a sum accumulates
/// in, and the identities of max and min.  Plain constexpr code, so the
/// Thrust backend's device functions call it as the CPU backend's loops do.

#include <cstdint>
#include <limits>
#include <type_traits>

namespace dimtensor::backends {

/// The type a sum of T accumulates in: double for floating point, int64 otherwise.
template <class T>
using sum_accumulator_t = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;

/// The smallest value of T (-inf for floating point): the identity of max.
template <class T>
constexpr T lowest_value() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

/// The largest value of T (+inf for floating point): the identity of min.
template <class T>
constexpr T highest_value() {
  if constexpr (std::numeric_limits<T>::has_infinity) {
    return std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::max();
  }
}

}  // namespace dimtensor::backends
