#pragma once
/// @file
/// @brief Sixteen floats as one value (GCC's and Clang's vector extensions),
/// for the CPU kernels whose loops the compiler does not vectorize well on
/// its own: the fused attention kernels' softmax rows and register tiles.
///
/// One `simd::f32x16` is one AVX-512 register where the target has it (two
/// AVX registers, four SSE ones otherwise: the code is the same, the
/// compiler splits it), so a kernel written with it runs on every x86-64
/// and gets the wider registers from `-march=native` without an intrinsic.
/// `DIMTENSOR_HAS_SIMD` says whether the compiler offers it (not under
/// nvcc, nor a compiler without the extensions); kernels keep a plain loop
/// for the other case.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include <dimtensor/config.hpp>

#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__) && !defined(__HIPCC__)
/// 1: simd:: and the kernels' vector paths are there (GCC, Clang).
#define DIMTENSOR_HAS_SIMD 1
#else
/// 0: the compiler lacks the vector extensions (nvcc, others).
#define DIMTENSOR_HAS_SIMD 0
#endif

#if DIMTENSOR_HAS_SIMD

// No function here takes or returns a vector by value: with 64-byte vectors
// that is a call whose convention differs with and without AVX-512, which
// GCC reports at every use (-Wpsabi, on by default) even when inlined.
// Vectors go by reference, and are values only inside a function.

namespace dimtensor::backends::cpu::simd {

/// Lanes of a vector.
inline constexpr index_t lanes = 16;

/// Sixteen floats.
typedef float f32x16 __attribute__((vector_size(64)));
/// Sixteen 32-bit integers (comparison results).
typedef std::int32_t i32x16 __attribute__((vector_size(64)));
/// Sixteen unsigned 32-bit integers (bits of floats).
typedef std::uint32_t u32x16 __attribute__((vector_size(64)));

/// @p v = the sixteen floats from @p p (any alignment).
[[gnu::always_inline]] inline void load(f32x16& v, float const* p) noexcept { std::memcpy(&v, p, sizeof v); }

/// Stores @p v at @p p (any alignment).
[[gnu::always_inline]] inline void store(float* p, f32x16 const& v) noexcept { std::memcpy(p, &v, sizeof v); }

/// The lanes' sum, lane 0 first (the order the scalar kernels use).
[[gnu::always_inline]] inline float sum_in_order(f32x16 const& v) noexcept {
  float s = 0.0f;
  for (int l = 0; l < 16; ++l) s += v[l];
  return s;
}

/// The lanes' largest (the rule of `a < b ? b : a`).
[[gnu::always_inline]] inline float max_of(f32x16 const& v) noexcept {
  float m = v[0];
  for (int l = 1; l < 16; ++l) m = m < v[l] ? v[l] : m;
  return m;
}

/// @p a = @p b lane by lane where a < b.
[[gnu::always_inline]] inline void max_into(f32x16& a, f32x16 const& b) noexcept { a = a < b ? b : a; }

/// @p v /= @p scale lane by lane: by the multiplication with @p inverse
/// (1 / scale) when Exact, which the caller knows to give the same numbers.
template <bool Exact>
[[gnu::always_inline]] inline void divide(f32x16& v, float scale, float inverse) noexcept {
  if constexpr (Exact) {
    v *= inverse;
  } else {
    v /= scale;
  }
}

namespace detail {
/// Within each 2K x 2K block of the rows a and b (K apart), swaps the
/// upper-right K x K block with the lower-left one: one level of
/// transpose16.
template <int K, std::size_t... I>
[[gnu::always_inline]] inline void swap_blocks(f32x16& a, f32x16& b, std::index_sequence<I...>) noexcept {
  f32x16 const upper = __builtin_shufflevector(a, b, ((I & K) == 0 ? int(I) : int(16 + I - K))...);
  f32x16 const lower = __builtin_shufflevector(a, b, ((I & K) == 0 ? int(I + K) : int(16 + I))...);
  a = upper;
  b = lower;
}

template <int K>
[[gnu::always_inline]] inline void transpose_level(f32x16 (&rows)[16]) noexcept {
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    if ((i & K) == 0) swap_blocks<K>(rows[i], rows[i + K], std::make_index_sequence<16>{});
  }
}
}  // namespace detail

/// Transposes the 16 x 16 matrix whose rows are @p rows, in place: rows[i]
/// lane j becomes the old rows[j] lane i (off-diagonal blocks of 8, 4, 2
/// and 1 swapped in turn: 64 two-vector shuffles).
[[gnu::always_inline]] inline void transpose16(f32x16 (&rows)[16]) noexcept {
  detail::transpose_level<8>(rows);
  detail::transpose_level<4>(rows);
  detail::transpose_level<2>(rows);
  detail::transpose_level<1>(rows);
}

/// The smallest argument exp_nonpositive gives as a number other than 0:
/// ln(2^-126), below which e^y is not a normal float.
inline constexpr float exp_floor = -87.3365479f;

/// @brief y = e^y lane by lane for y ≤ 0, the softmax's exponent: the same
/// range reduction and polynomial as math::exp(float), so equal to it for
/// y in [exp_floor, 0]; 0 below (where math::exp gives a subnormal number,
/// under 1.2e-38); NaN for NaN.  A positive y is not allowed (a softmax
/// subtracts the row's maximum first).
[[gnu::always_inline]] inline void exp_nonpositive(f32x16& y) noexcept {
  f32x16 const zero{};
  i32x16 const small = y < exp_floor;  // all ones where y is below the floor (NaN: 0)
  f32x16 const c = small ? zero : y;
  // n = y / ln 2 rounded to the nearest integer, by adding and subtracting
  // 1.5 * 2^23; the sum's low bits hold n (math::exp's rounding exactly).
  f32x16 const shifted = c * 1.44269504088896341f + 12582912.0f;
  f32x16 const n = shifted - 12582912.0f;
  f32x16 r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f32x16 p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from n's bits: n in [-126, 0], so one normal factor.
  u32x16 bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  u32x16 const two_n = (bits - 0x4B400000u + 127u) << 23;
  f32x16 scale;
  std::memcpy(&scale, &two_n, sizeof scale);
  f32x16 const e = p * scale;
  y = small ? zero : e;
}

}  // namespace dimtensor::backends::cpu::simd

#endif  // DIMTENSOR_HAS_SIMD
