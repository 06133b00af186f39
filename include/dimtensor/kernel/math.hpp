#pragma once
/// @file
/// @brief Elementwise functions as function objects, callable on host and
/// device.  The float versions of exp, tanh, sigmoid and erf are branch-free
/// so that loops over them vectorize (glibc's scalar calls do not).

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <dimtensor/config.hpp>

namespace dimtensor::math {

namespace detail {
// c ? a : b through bit masks.  Under the default -ftrapping-math, g++ does
// not turn a float `?:` into a vector blend (it will not speculate the
// comparison), so every selection in the float kernels goes through here.
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline float select(bool c, float a, float b) {
  std::uint32_t const m = 0u - static_cast<std::uint32_t>(c);
  return std::bit_cast<float>((std::bit_cast<std::uint32_t>(a) & m) | (std::bit_cast<std::uint32_t>(b) & ~m));
}
}  // namespace detail

/// e^x in float, within 2 ulp: 0 below -103.97, +inf above 88.72, NaN for NaN.
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline float exp(float x) {
  // Clamped to [-104, 89], where the arithmetic below itself gives 0 and
  // +inf (2^n p with n from -150 to 128); a NaN passes both comparisons and
  // stays NaN through every step, so two selections are all it takes.
  float const cx = detail::select(x > 89.0f, 89.0f, detail::select(x < -104.0f, -104.0f, x));
  // x = n ln2 + r with |r| <= ln2 / 2; adding and subtracting 1.5 * 2^23
  // rounds to the nearest integer without a call that might not vectorize
  // (whose bits are then 1.5 * 2^23's plus n: n without a conversion, which
  // a NaN would make undefined)
  float const shifter = 12582912.0f;
  float const t = cx * 1.44269504088896341f + shifter;
  float const n = t - shifter;
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
  // (for a NaN the factors are garbage, and p is NaN)
  std::int32_t const ni = std::bit_cast<std::int32_t>(t) - 0x4B400000;
  std::int32_t const n1 = ni >> 1;
  std::int32_t const n2 = ni - n1;
  float const s1 = std::bit_cast<float>((static_cast<std::uint32_t>(n1) + 127u) << 23);
  float const s2 = std::bit_cast<float>((static_cast<std::uint32_t>(n2) + 127u) << 23);
  return p * s1 * s2;
}

/// tanh in float, branch-free; within 2 ulp of the correctly rounded result.
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline float tanh(float x) {
  std::uint32_t const bits = std::bit_cast<std::uint32_t>(x);
  float const ax = std::bit_cast<float>(bits & 0x7fffffffu);
  std::uint32_t const sign = bits & 0x80000000u;
  // small |x|: odd minimax polynomial
  float const z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  float const small = x + x * z * p;
  // large |x|: 1 - 2 / (e^{2|x|} + 1), with the sign of x; the clamp keeps e
  // finite and must lie above 9.011, where tanh first rounds to exactly 1
  float const e = math::exp(2.0f * detail::select(ax > 10.0f, 10.0f, ax));
  float const big = 1.0f - 2.0f / (e + 1.0f);
  float const signed_big = std::bit_cast<float>(std::bit_cast<std::uint32_t>(big) | sign);
  // x + x*z*p turns -0 into +0; tanh(-0) is -0
  return detail::select(ax == 0.0f, x, detail::select(ax < 0.625f, small, signed_big));
}

/// Logistic sigmoid in float.
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + math::exp(-x)); }

/// @brief erf in float, branch-free: x P(x²) / Q(x²) on [-4, 4] (the
/// rational approximation XLA and Eigen use; beyond ±4 float's erf is ±1),
/// within 8 ulp and 4.5e-7 of erf on every float (PyTorch's vectorized CPU
/// erf, Abramowitz and Stegun 7.1.26, is within 1.5e-7 of it, 6 ulp);
/// NaN for NaN, erf(-0) is -0.
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline float erf(float x) {
  float const c = detail::select(x > 4.0f, 4.0f, detail::select(x < -4.0f, -4.0f, x));
  float const z = c * c;
  float p = -2.72614225801306e-10f;
  p = p * z + 2.77068142495902e-08f;
  p = p * z - 2.10102402082508e-06f;
  p = p * z - 5.69250639462346e-05f;
  p = p * z - 7.34990630326855e-04f;
  p = p * z - 2.95459980854025e-03f;
  p = p * z - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * z - 2.13374055278905e-04f;
  q = q * z - 1.68282697438203e-03f;
  q = q * z - 7.37332916720468e-03f;
  q = q * z - 1.42647390514189e-02f;
  // c (p / q), not (c p) / q: c p is subnormal for the smallest normal c
  float const r = c * (p / q);
  return detail::select(r > 1.0f, 1.0f, detail::select(r < -1.0f, -1.0f, r));
}

/// e^x in double.
DIMTENSOR_HOST_DEVICE inline double exp(double x) { return std::exp(x); }
/// tanh in double.
DIMTENSOR_HOST_DEVICE inline double tanh(double x) { return std::tanh(x); }
/// Logistic sigmoid in double.
DIMTENSOR_HOST_DEVICE inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
/// erf in double.
DIMTENSOR_HOST_DEVICE inline double erf(double x) { return std::erf(x); }

}  // namespace dimtensor::math
