#pragma once
/// @file
/// @brief Sixteen floats as one value (GCC's and Clang's vector extensions),
/// for the CPU kernels whose loops the compiler does not vectorize well on
/// its own: the fused attention kernels' softmax rows and register tiles.
///
/// A `simd::f32x16` is made of `simd::parts` vectors of the target's own
/// width (`simd::native_lanes` floats: 16 with AVX-512, 8 with AVX, 4
/// otherwise), so that every piece lives in one register.  A 64-byte vector
/// type on a target without 512-bit registers is not split into registers
/// by GCC: it is kept in memory and moved through general registers, which
/// made the register tiles 15 to 30 times slower than scalar code.  Kernels
/// are written once for sixteen lanes; how many registers that takes is
/// this header's business, and the tile shapes follow `simd::parts`
/// (backends/cpu/attention.hpp).  The width is the target's: a file
/// compiled for AVX2 (a level of dimtensor::runtime, or -march=native) gets
/// two 8-lane halves, the x86-64 baseline four 4-lane quarters.
/// `DIMTENSOR_SIMD_LANES` may name the width (4, 8 or 16) where the target
/// macros do not say it.
///
/// `DIMTENSOR_HAS_SIMD` says whether the compiler offers the extensions (not
/// under nvcc, nor a compiler without them); kernels keep a plain loop for
/// the other case.

/// Defined once the header is included (src/cpu/kernels.inl checks the order).
#define DIMTENSOR_BACKENDS_CPU_SIMD_HPP 1

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

#if !defined(DIMTENSOR_SIMD_LANES)
#if defined(__AVX512F__)
/// Floats in one register of the target.
#define DIMTENSOR_SIMD_LANES 16
#elif defined(__AVX__)
/// Floats in one register of the target.
#define DIMTENSOR_SIMD_LANES 8
#else
/// Floats in one register of the target.
#define DIMTENSOR_SIMD_LANES 4
#endif
#endif

#if DIMTENSOR_HAS_SIMD

// A 64-byte vector type passed by value has a calling convention that
// differs with and without AVX-512 (GCC's -Wpsabi); f32x16 is a struct of
// registers of the target's own width, which has no such difference, and
// every helper is inlined.

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {
namespace simd {

/// Lanes of a vector.
inline constexpr index_t lanes = 16;
/// Floats in one register of the target.
inline constexpr int native_lanes = DIMTENSOR_SIMD_LANES;
/// Registers in one f32x16.
inline constexpr int parts = 16 / native_lanes;
static_assert(native_lanes == 4 || native_lanes == 8 || native_lanes == 16, "DIMTENSOR_SIMD_LANES is 4, 8 or 16");

/// One register of floats.
typedef float f32n __attribute__((vector_size(4 * native_lanes)));
/// One register of 32-bit integers (comparison results).
typedef std::int32_t i32n __attribute__((vector_size(4 * native_lanes)));
/// One register of unsigned 32-bit integers (bits of floats).
typedef std::uint32_t u32n __attribute__((vector_size(4 * native_lanes)));

/// Sixteen floats, as `parts` registers; value-initialized to zeros.
struct f32x16 {
  f32n part[parts];

  /// Lane @p l (0 to 15).
  [[gnu::always_inline]] float operator[](index_t l) const noexcept {
    return part[l / native_lanes][l % native_lanes];
  }
  [[gnu::always_inline]] f32x16& operator+=(f32x16 const& b) noexcept {
    for (int i = 0; i < parts; ++i) part[i] += b.part[i];
    return *this;
  }
  [[gnu::always_inline]] f32x16& operator-=(float b) noexcept {
    for (int i = 0; i < parts; ++i) part[i] -= b;
    return *this;
  }
  [[gnu::always_inline]] f32x16& operator*=(float b) noexcept {
    for (int i = 0; i < parts; ++i) part[i] *= b;
    return *this;
  }
  [[gnu::always_inline]] f32x16& operator/=(float b) noexcept {
    for (int i = 0; i < parts; ++i) part[i] /= b;
    return *this;
  }
};

/// Sixteen copies of @p x.
[[gnu::always_inline]] inline f32x16 splat(float x) noexcept {
  f32x16 v;
  for (int i = 0; i < parts; ++i) v.part[i] = f32n{} + x;
  return v;
}

/// @p acc += @p v · @p x lane by lane (a register tile's step).
[[gnu::always_inline]] inline void multiply_add(f32x16& acc, f32x16 const& v, float x) noexcept {
  for (int i = 0; i < parts; ++i) acc.part[i] += v.part[i] * x;
}

/// @p v = the sixteen floats from @p p (any alignment), one register at a
/// time (a whole-struct copy goes through the stack).
[[gnu::always_inline]] inline void load(f32x16& v, float const* p) noexcept {
  for (int i = 0; i < parts; ++i) std::memcpy(&v.part[i], p + i * native_lanes, sizeof(f32n));
}

/// Stores @p v at @p p (any alignment).
[[gnu::always_inline]] inline void store(float* p, f32x16 const& v) noexcept {
  for (int i = 0; i < parts; ++i) std::memcpy(p + i * native_lanes, &v.part[i], sizeof(f32n));
}

/// Lanes @p count and above of @p v set to @p fill.
[[gnu::always_inline]] inline void keep_first(f32x16& v, index_t count, float fill) noexcept {
  i32n lane;
  for (int l = 0; l < native_lanes; ++l) lane[l] = l;
  for (int i = 0; i < parts; ++i) {
    i32n const kept = lane < static_cast<std::int32_t>(count - i * native_lanes);
    v.part[i] = kept ? v.part[i] : f32n{} + fill;
  }
}

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
[[gnu::always_inline]] inline void max_into(f32x16& a, f32x16 const& b) noexcept {
  for (int i = 0; i < parts; ++i) a.part[i] = a.part[i] < b.part[i] ? b.part[i] : a.part[i];
}

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
[[gnu::always_inline]] inline void swap_blocks(f32n& a, f32n& b, std::index_sequence<I...>) noexcept {
  f32n const upper = __builtin_shufflevector(a, b, ((I & K) == 0 ? int(I) : int(16 + I - K))...);
  f32n const lower = __builtin_shufflevector(a, b, ((I & K) == 0 ? int(I + K) : int(16 + I))...);
  a = upper;
  b = lower;
}

template <int K>
[[gnu::always_inline]] inline void transpose_level(f32x16 (&rows)[16]) noexcept {
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) {
    if ((i & K) == 0) swap_blocks<K>(rows[i].part[0], rows[i + K].part[0], std::make_index_sequence<16>{});
  }
}
}  // namespace detail

/// Transposes the 16 x 16 matrix whose rows are @p rows, in place: rows[i]
/// lane j becomes the old rows[j] lane i.  With one register a row, the
/// off-diagonal blocks of 8, 4, 2 and 1 are swapped in turn (64
/// two-register shuffles); with narrower registers, through memory.
[[gnu::always_inline]] inline void transpose16(f32x16 (&rows)[16]) noexcept {
  if constexpr (parts == 1) {
    detail::transpose_level<8>(rows);
    detail::transpose_level<4>(rows);
    detail::transpose_level<2>(rows);
    detail::transpose_level<1>(rows);
  } else {
    float m[16][16];
    for (int i = 0; i < 16; ++i) store(m[i], rows[i]);
    float t[16][16];
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 16; ++j) t[i][j] = m[j][i];
    }
    for (int i = 0; i < 16; ++i) load(rows[i], t[i]);
  }
}

/// The smallest argument exp_nonpositive gives as a number other than 0:
/// ln(2^-126), below which e^y is not a normal float.
inline constexpr float exp_floor = -87.3365479f;

namespace detail {
/// exp_nonpositive of one register.
[[gnu::always_inline]] inline void exp_nonpositive(f32n& y) noexcept {
  f32n const zero{};
  i32n const small = y < exp_floor;  // all ones where y is below the floor (NaN: 0)
  f32n const c = small ? zero : y;
  // n = y / ln 2 rounded to the nearest integer, by adding and subtracting
  // 1.5 * 2^23; the sum's low bits hold n (math::exp's rounding exactly).
  f32n const shifted = c * 1.44269504088896341f + 12582912.0f;
  f32n const n = shifted - 12582912.0f;
  f32n r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f32n p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from n's bits: n in [-126, 0], so one normal factor.
  u32n bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  u32n const two_n = (bits - 0x4B400000u + 127u) << 23;
  f32n scale;
  std::memcpy(&scale, &two_n, sizeof scale);
  f32n const e = p * scale;
  y = small ? zero : e;
}
}  // namespace detail

/// @brief y = e^y lane by lane for y ≤ 0, the softmax's exponent: the same
/// range reduction and polynomial as math::exp(float), so equal to it for
/// y in [exp_floor, 0]; 0 below (where math::exp gives a subnormal number,
/// under 1.2e-38); NaN for NaN.  A positive y is not allowed (a softmax
/// subtracts the row's maximum first).
[[gnu::always_inline]] inline void exp_nonpositive(f32x16& y) noexcept {
  for (int i = 0; i < parts; ++i) detail::exp_nonpositive(y.part[i]);
}

}  // namespace simd
}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu

#endif  // DIMTENSOR_HAS_SIMD
