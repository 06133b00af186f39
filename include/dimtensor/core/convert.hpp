#pragma once
/// @file
/// @brief Whether a number is representable in another arithmetic type, and
/// the checked conversion the library makes wherever a value crosses into a
/// type that may not hold it: `cast` to an integer type, the factories'
/// bounds (`arange`, `from_range`, `uniform`, `normal`), the loaders.
///
/// A floating-point value converted to an integer type is truncated toward
/// zero; the conversion is undefined behaviour in C++ when the truncated
/// value does not fit (NaN and the infinities never do). An integer that
/// does not fit a narrower integer type would wrap. A finite double beyond
/// float's range has no float. All three are bad input here: a
/// `value_error` that names the value and the type, never a silent result.
/// Rounding is not an error: 0.1 converts to the nearest float, 2^60 to the
/// nearest double.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <dimtensor/core/error.hpp>

namespace dimtensor::detail {

/// The shortest text that reads back as @p v ("0.5", "1e-09", "nan"),
/// whole numbers below 10^16 in full ("3000000000", not "3e+09").
inline std::string number_text(double v) {
  char buf[32];  // shortest: at most 24; whole numbers below 10^16: at most 17
  bool const whole = std::isfinite(v) && v == std::trunc(v) && std::abs(v) < 1e16;
  auto const r = whole ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                       : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// An integer's text.
template <class T>
requires std::is_integral_v<T> std::string number_text(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else {
    return std::to_string(v);
  }
}

/// The name PyTorch and NumPy give an arithmetic type: float32, int64, …
template <class T>
constexpr std::string_view arithmetic_type_name() {
  if constexpr (std::is_same_v<T, bool>) {
    return "bool";
  } else if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? "float32" : sizeof(T) == 8 ? "float64" : "long double";
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1 ? "int8" : sizeof(T) == 2 ? "int16" : sizeof(T) == 4 ? "int32" : "int64";
  } else {
    return sizeof(T) == 1 ? "uint8" : sizeof(T) == 2 ? "uint16" : sizeof(T) == 4 ? "uint32" : "uint64";
  }
}

/// 2^n in the floating type F, exactly (n below F's exponent range).
template <class F>
constexpr F power_of_two(int n) {
  F p = 1;
  for (int i = 0; i < n; ++i) p *= 2;
  return p;
}

/// Whether `static_cast<To>(x)` is defined and keeps @p x up to rounding:
/// from floating point to an integer type, the truncated value fits (no NaN,
/// no infinity); between integer types, the value fits; from double to
/// float, a finite value stays finite (NaN and the infinities carry over).
/// Anything converts to bool, and integers to floating point.
template <class To, class From>
bool representable_as(From x) noexcept {
  static_assert(std::is_arithmetic_v<To> && std::is_arithmetic_v<From>);
  if constexpr (std::is_same_v<To, From> || std::is_same_v<To, bool>) {
    return true;
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    // The bounds are powers of two, exact in From: the truncated value t fits
    // exactly when -2^digits <= t < 2^digits (0 <= t for unsigned types).
    constexpr From top = power_of_two<From>(std::numeric_limits<To>::digits);
    constexpr From bottom = std::is_signed_v<To> ? -top : From(0);
    if (!(x == x)) return false;  // NaN
    From const t = x < 0 ? -std::floor(-x) : std::floor(x);
    return t >= bottom && t < top;
  } else if constexpr (std::is_integral_v<From> && std::is_integral_v<To>) {
    if constexpr (std::is_same_v<From, bool>) {
      return true;
    } else {
      return std::in_range<To>(x);
    }
  } else if constexpr (std::is_floating_point_v<From> && std::is_floating_point_v<To>) {
    if constexpr (std::numeric_limits<To>::max() >= std::numeric_limits<From>::max()) {
      return true;
    } else {
      return !(x == x) || std::isinf(x) || std::abs(x) <= static_cast<From>(std::numeric_limits<To>::max());
    }
  } else {
    return true;  // integer to floating point: rounds
  }
}

/// The message for a value that @p To cannot hold: "<what>: <value> is not
/// representable in <type>".
template <class To, class From>
std::string not_representable_text(std::string_view what, From x) {
  return std::string(what) + ": " + number_text(x) + " is not representable in " +
         std::string(arithmetic_type_name<To>()) +
         (std::is_floating_point_v<From> && std::is_integral_v<To> ? " (it is NaN, infinite or out of range)"
                                                                   : " (out of range)");
}

/// @p x converted to @p To, or `value_error` naming @p what, the value and
/// the type when @p To cannot hold it (`representable_as`).
template <class To, class From>
To checked_convert(From x, std::string_view what) {
  if (!representable_as<To>(x)) throw value_error(not_representable_text<To>(what, x));
  return static_cast<To>(x);
}

}  // namespace dimtensor::detail
