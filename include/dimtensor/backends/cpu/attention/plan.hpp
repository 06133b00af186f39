#pragma once
/// @file
/// @brief The fused attention kernels' plan: the block sizes, the order
/// in which an entry's query rows are taken, how the blocks are shared
/// out among threads, and which path (BLAS, register tiles, the online
/// softmax over chunks of keys) each pass takes, decided in one place
/// (`plan_attention`) from the problem's sizes and lengths.

// IWYU pragma: private, include <dimtensor/backends/cpu/attention.hpp>

/// Defined once an attention kernel header is included (src/cpu/kernels.inl
/// refuses one included before the level's target pragma).
#define DIMTENSOR_BACKENDS_CPU_ATTENTION_HPP 1

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/simd.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/attention.hpp>

namespace dimtensor::backends::cpu {

using kernel::additive_problem;
using kernel::attention_operand;
using kernel::attention_problem;

// Everything below is compiled once for each instruction set of
// dimtensor::runtime, in its own namespace (backends/cpu/dispatch.hpp).
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {

/// The query rows of a block where an entry's rows have different lengths.
inline constexpr index_t attention_block = 64;
/// The fewest where they share one length.
inline constexpr index_t attention_block_min = 32;
/// The most (the size of the kernels' per-block arrays).
inline constexpr index_t attention_block_max = 256;

/// @brief The query rows of a block for a problem with @p kv keys: 64 when
/// the rows of an entry have different lengths (they are taken longest
/// first, and a block's BLAS products run to its longest row); else as
/// many, from 32 to 256 in steps of 32, as keep the block's scores within
/// 2^18 elements (1 MiB of float): larger blocks share the BLAS's packing
/// of the keys and values among more rows, and the cap keeps the
/// per-thread buffer from growing past 1 MiB until 8,192 keys (32 rows),
/// so extra memory stays linear in the length across the sweep.
inline index_t attention_block_rows(index_t kv, bool uniform_lengths) {
  if (!uniform_lengths) return attention_block;
  index_t const fit = (index_t{1} << 18) / std::max<index_t>(kv, 1);
  return std::clamp(fit / attention_block_min * attention_block_min, attention_block_min, attention_block_max);
}

/// @p n rounded up to whole vectors of 16 (score rows are padded to it, so
/// the softmax reads and writes a row's last vector in place).
inline index_t attention_padded(index_t n) { return (n + 15) / 16 * 16; }

namespace attention_detail {

/// @brief The query rows of each batch entry in the order the kernels take
/// them, [batch * queries]: longest valid length first, when the lengths
/// differ within an entry (2-D lengths), so that a block's rows have
/// lengths alike and its products stop near each row's own length; empty
/// when every entry's rows share one length (they are taken in place).
template <class T>
std::vector<index_t> attention_row_order(attention_problem<T> const& p) {
  if (p.lens.data == nullptr || p.queries <= 1 || p.lens.repeat % p.queries == 0) return {};  // one length per entry
  bool varies = false;
  for (index_t b = 0; b < p.batch && !varies; ++b) {
    for (index_t i = 1; i < p.queries && !varies; ++i) varies = p.length(b, i) != p.length(b, 0);
  }
  if (!varies) return {};
  // A counting sort per entry, stable (rows of one length in index order):
  // lengths lie in [0, kv], so this is linear where a comparison sort of
  // every entry's rows on every call was not.
  std::vector<index_t> order(static_cast<std::size_t>(p.batch * p.queries));
  std::vector<index_t> start(static_cast<std::size_t>(p.kv + 2));
  for (index_t b = 0; b < p.batch; ++b) {
    index_t* first = order.data() + b * p.queries;
    auto const key = [&](index_t i) {
      return static_cast<std::size_t>(p.kv - std::clamp<index_t>(p.length(b, i), 0, p.kv));
    };
    std::fill(start.begin(), start.end(), index_t{0});
    for (index_t i = 0; i < p.queries; ++i) ++start[key(i) + 1];
    for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
    for (index_t i = 0; i < p.queries; ++i) first[start[key(i)]++] = i;
  }
  return order;
}

/// The work of each query block t = b * blocks + blk (its rows times the
/// longest valid length among them, rows taken in @p order), and the
/// blocks sorted by it, the most first (ties in index order): threads take
/// blocks one at a time in that order, so that blocks of uneven lengths
/// balance out.
template <class T>
std::pair<std::vector<index_t>, std::vector<index_t>> attention_block_work(attention_problem<T> const& p, index_t block,
                                                                           index_t blocks,
                                                                           std::vector<index_t> const& order) {
  std::vector<index_t> work(static_cast<std::size_t>(p.batch * blocks));
  for (index_t b = 0; b < p.batch; ++b) {
    for (index_t blk = 0; blk < blocks; ++blk) {
      index_t const i0 = blk * block;
      index_t const rows = std::min(block, p.queries - i0);
      index_t width = 0;
      for (index_t r = 0; r < rows; ++r) {
        index_t const i = order.empty() ? i0 + r : order[static_cast<std::size_t>(b * p.queries + i0 + r)];
        width = std::max(width, p.length(b, i));
      }
      work[static_cast<std::size_t>(b * blocks + blk)] = rows * (width + 1);
    }
  }
  std::vector<index_t> sorted(work.size());
  for (std::size_t t = 0; t < sorted.size(); ++t) sorted[t] = static_cast<index_t>(t);
  std::stable_sort(sorted.begin(), sorted.end(), [&work](index_t x, index_t y) {
    return work[static_cast<std::size_t>(x)] > work[static_cast<std::size_t>(y)];
  });
  return {std::move(work), std::move(sorted)};
}
/// Whether the forward pass in T takes the register tiles: float, a
/// compiler with the vector extensions, and the values' features whole
/// vectors (head sizes 16, 32, 64, 128, …; others take BLAS).
template <class T>
bool attention_tiles_fit(index_t dv) {
#if DIMTENSOR_HAS_SIMD
  if constexpr (std::is_same_v<T, float>) return dv > 0 && dv % simd::lanes == 0;
#endif
  (void)dv;
  return false;
}

/// Keys a chunk of the online forward pass (attention_block_chunked)
/// takes at a time: a block's scores over a chunk (256 rows, 512 KiB of
/// float) stay in the second-level cache with the chunk's keys and values.
inline constexpr index_t attention_key_chunk = 512;
/// Query rows of a block on the online path, where an entry's rows share
/// one length (attention_block otherwise).
inline constexpr index_t attention_chunked_block = 256;

/// Whether the forward pass in T goes over the keys in chunks with an
/// online softmax (attention_block_chunked) instead of over each block's
/// whole rows of scores: on the register tiles, past 1,024 keys, where a
/// block's rows of scores no longer stay in the cache with enough rows to
/// share each read of the keys and values.
template <class T>
bool attention_chunked(index_t kv, index_t dv) {
  return attention_tiles_fit<T>(dv) && kv > 2 * attention_key_chunk;
}

/// Whether the backward pass in T takes the register tiles: as the
/// forward pass, and the queries' features whole vectors too (dQ and dK
/// are rows of them).
template <class T>
bool attention_backward_tiles_fit(index_t d, index_t dv) {
  return attention_tiles_fit<T>(dv) && attention_tiles_fit<T>(d);
}

/// @brief How the fused passes take a problem, decided in one place from
/// its sizes and lengths (`plan_attention`); the forward and the backward
/// pass read the same decisions.
struct attention_plan {
  /// Each entry's query rows, longest first (2-D lengths that differ
  /// within an entry), or empty: the rows are taken in place.
  std::vector<index_t> order;
  /// The forward pass goes over the keys in chunks with an online softmax.
  bool chunked = false;
  /// The forward pass takes the register tiles (else BLAS).
  bool tiled = false;
  /// The backward pass takes the register tiles (else BLAS).
  bool backward_tiled = false;
  /// Query rows per block of the forward pass.
  index_t block = attention_block;
  /// Query rows per block of the backward pass (no chunks there).
  index_t backward_block = attention_block;
  /// Whether the rows are taken in place.
  bool direct() const noexcept { return order.empty(); }
};

/// The plan of problem @p p.
template <class T>
attention_plan plan_attention(attention_problem<T> const& p) {
  attention_plan plan;
  plan.order = attention_row_order(p);
  plan.chunked = attention_chunked<T>(p.kv, p.dv);
  plan.tiled = attention_tiles_fit<T>(p.dv);
  plan.backward_tiled = attention_backward_tiles_fit<T>(p.d, p.dv);
  // Causal rows in place have lengths that grow with the row: small
  // blocks, as for lengths that differ.
  bool const uniform = plan.direct() && !p.causal;
  plan.backward_block = attention_block_rows(p.kv, uniform);
  plan.block = !plan.chunked ? plan.backward_block : uniform ? attention_chunked_block : attention_block;
  return plan;
}

}  // namespace attention_detail

}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
