#pragma once
/// @file
/// @brief Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
/// 1, 2, 3", SC 2011; the generator of PyTorch's CUDA and of cuRAND): four
/// 32-bit words from a 128-bit counter and a 64-bit key, with no state, so
/// that any element's random number is computed where it is needed, by any
/// thread, in any order, and again for the backward pass.
///
/// Dropout draws its keep-mask with it: element i of a call keyed k is kept
/// when word i mod 4 of philox(counter = i / 4, k) is below the keep
/// probability times 2^32, and multiplied by 1 / (1 - p); a dropped one by 0.  The mask is the same whatever the thread count,
/// the instruction set or the backend.

#include <array>
#include <cstdint>

#include <dimtensor/config.hpp>

namespace dimtensor::kernel {

/// Four 32-bit words.
using philox_words = std::array<std::uint32_t, 4>;

/// @brief Philox4x32 with 10 rounds of counter @p c under key (@p k0, @p k1).
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline philox_words philox4x32(philox_words c, std::uint32_t k0,
                                                                             std::uint32_t k1) {
  constexpr std::uint64_t m0 = 0xD2511F53u;
  constexpr std::uint64_t m1 = 0xCD9E8D57u;
  for (int round = 0; round < 10; ++round) {
    std::uint64_t const p0 = m0 * c[0];
    std::uint64_t const p1 = m1 * c[2];
    c = {static_cast<std::uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<std::uint32_t>(p1),
         static_cast<std::uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<std::uint32_t>(p0)};
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return c;
}

/// The threshold of a keep probability @p keep in [0, 1]: a word w is kept when w < threshold.
inline std::uint64_t keep_threshold(double keep) {
  return keep >= 1 ? (std::uint64_t{1} << 32) : static_cast<std::uint64_t>(keep * 4294967296.0);
}

/// Whether a word @p w is below @p threshold (at most 2^32: every word).
DIMTENSOR_ALWAYS_INLINE DIMTENSOR_HOST_DEVICE inline bool below(std::uint32_t w, std::uint64_t threshold) {
  return static_cast<std::uint64_t>(w) < threshold;
}

/// Whether element @p i is kept under @p key and @p threshold.
DIMTENSOR_HOST_DEVICE inline bool dropout_keeps(index_t i, std::uint64_t key, std::uint64_t threshold) {
  auto const group = static_cast<std::uint64_t>(i) >> 2;
  philox_words const w = philox4x32({static_cast<std::uint32_t>(group), static_cast<std::uint32_t>(group >> 32), 0u, 0u},
                                    static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32));
  return below(w[static_cast<std::size_t>(i & 3)], threshold);
}

/// @brief out[i] = in[i] m_i for i in [first, last), m_i @p scale where
/// element i is kept under @p key and @p threshold (dropout_keeps), else 0:
/// one Philox call per element (the CPU runtime's kernel computes eight
/// at once, src/cpu/kernels.inl, with the same result).
template <class T>
DIMTENSOR_HOST_DEVICE inline void dropout_range(T const* in, T* out, index_t first, index_t last, std::uint64_t key,
                                                std::uint64_t threshold, T scale) {
  for (index_t i = first; i < last; ++i) out[i] = in[i] * (dropout_keeps(i, key, threshold) ? scale : T(0));
}

}  // namespace dimtensor::kernel
