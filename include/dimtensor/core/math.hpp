#pragma once
/// @file
/// @brief Elementwise functions as function objects, callable on host and
/// device.  The float versions of exp, tanh and sigmoid are branch-free so
/// that loops over them vectorize (glibc's scalar calls do not).

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <dimtensor/config.hpp>

namespace dimtensor::math {

/// e^x in float, within 2 ulp: 0 below -103.97, +inf above 88.72, NaN for NaN.
DIMTENSOR_HOST_DEVICE inline float exp(float x) {
  float const hi = 88.7228394f;
  float const lo = -103.972084f;
  bool const nan = x != x;
  float const cx = nan ? 0.0f : (x > hi ? hi : (x < lo ? lo : x));
  // x = n ln2 + r with |r| <= ln2 / 2; adding and subtracting 1.5 * 2^23
  // rounds to the nearest integer without a call that might not vectorize
  float const shifter = 12582912.0f;
  float const n = (cx * 1.44269504088896341f + shifter) - shifter;
  float r = cx - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // e^r by a degree-7 polynomial (error < 2e-9 on the interval)
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n with n in [-150, 128], split so both factors are normal numbers
  std::int32_t const ni = static_cast<std::int32_t>(n);
  std::int32_t const n1 = ni >> 1;
  std::int32_t const n2 = ni - n1;
  float const s1 = std::bit_cast<float>((n1 + 127) << 23);
  float const s2 = std::bit_cast<float>((n2 + 127) << 23);
  float const y = p * s1 * s2;
  float const inf = std::bit_cast<float>(0x7f800000);
  return nan ? x : (x > hi ? inf : (x < lo ? 0.0f : y));
}

/// tanh in float, branch-free; within 2 ulp of the correctly rounded result.
DIMTENSOR_HOST_DEVICE inline float tanh(float x) {
  float const ax = std::fabs(x);
  // small |x|: odd minimax polynomial
  float const z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float const small = x + x * z * p;
  // large |x|: 1 - 2 / (e^{2|x|} + 1), with the sign of x
  float const e = math::exp(2.0f * (ax > 9.0f ? 9.0f : ax));
  float const big = 1.0f - 2.0f / (e + 1.0f);
  float const signed_big = x < 0.0f ? -big : big;
  return ax < 0.625f ? small : signed_big;
}

/// Logistic sigmoid in float.
DIMTENSOR_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + math::exp(-x)); }

/// e^x in double.
DIMTENSOR_HOST_DEVICE inline double exp(double x) { return std::exp(x); }
/// tanh in double.
DIMTENSOR_HOST_DEVICE inline double tanh(double x) { return std::tanh(x); }
/// Logistic sigmoid in double.
DIMTENSOR_HOST_DEVICE inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace dimtensor::math

namespace dimtensor::fn {

#define DIMTENSOR_DETAIL_UNARY(name, expr)                              \
  struct name {                                                         \
    template <class T>                                                  \
    DIMTENSOR_HOST_DEVICE T operator()(T x) const { return expr; }      \
  }

/// @name Elementwise function objects
/// @{
DIMTENSOR_DETAIL_UNARY(negate, -x);
DIMTENSOR_DETAIL_UNARY(abs, x < T(0) ? -x : x);
DIMTENSOR_DETAIL_UNARY(relu, x > T(0) ? x : T(0));
DIMTENSOR_DETAIL_UNARY(square, x* x);
/// @}
#undef DIMTENSOR_DETAIL_UNARY

/// e^x (vectorizable for float).
struct exp {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::exp(x);
    else return static_cast<T>(std::exp(static_cast<double>(x)));
  }
};
/// tanh (vectorizable for float).
struct tanh {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::tanh(x);
    else return static_cast<T>(std::tanh(static_cast<double>(x)));
  }
};
/// Logistic sigmoid (vectorizable for float).
struct sigmoid {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::sigmoid(x);
    else return static_cast<T>(math::sigmoid(static_cast<double>(x)));
  }
};
/// Natural logarithm.
struct log {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const { return static_cast<T>(std::log(x)); }
};
/// Square root.
struct sqrt {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const { return static_cast<T>(std::sqrt(x)); }
};
/// Sine.
struct sin {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const { return static_cast<T>(std::sin(x)); }
};
/// Cosine.
struct cos {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T x) const { return static_cast<T>(std::cos(x)); }
};

/// @name Binary function objects
/// @{
struct plus {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return a + b; }
};
struct minus {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return a - b; }
};
struct multiplies {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return a * b; }
};
struct divides {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};
struct pow {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return static_cast<T>(std::pow(a, b)); }
};
struct maximum {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return a < b ? b : a; }
};
struct minimum {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b) const { return b < a ? b : a; }
};
struct equal_to {
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const { return a == b; }
};
struct not_equal_to {
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const { return a != b; }
};
struct less {
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const { return a < b; }
};
struct less_equal {
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const { return a <= b; }
};
struct greater {
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const { return a > b; }
};
struct greater_equal {
  template <class T>
  DIMTENSOR_HOST_DEVICE bool operator()(T a, T b) const { return a >= b; }
};
/// `cond ? a : b`.
struct select {
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(bool c, T a, T b) const { return c ? a : b; }
};
/// Converts to To.
template <class To>
struct cast {
  template <class T>
  DIMTENSOR_HOST_DEVICE To operator()(T x) const { return static_cast<To>(x); }
};
/// @}

}  // namespace dimtensor::fn
