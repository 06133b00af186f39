#pragma once
/// @file
/// @brief The run-time layout every dims-free body reads: `layout`
/// (extents and strides of rank at most `max_rank`), `positions` (dims of
/// a layout by place), `padded_extents`, and `lines`, a row-major tensor
/// around one dim as [outer, n, inner] (softmax, the reductions along a
/// dim, masking, their gradients), and `entry_offsets` (each batch entry's
/// offset, as the attention kernels read their operands).

#include <array>
#include <cstddef>
#include <vector>

#include <dimtensor/config.hpp>

namespace dimtensor::kernel {

/// The highest rank of a run-time layout (a contraction's operands, an
/// elementwise program's extents, the attention operands).
inline constexpr std::size_t max_rank = 8;

/// Extents or strides padded to max_rank.
using padded_extents = std::array<index_t, max_rank>;

/// A strided layout of rank at most max_rank, as run-time data.
struct layout {
  /// The extents (the first `rank` of them).
  padded_extents ext{};
  /// The strides, in elements.
  padded_extents str{};
  /// The number of dims.
  std::size_t rank = 0;

  layout() = default;
  /// The layout of extents @p e and strides @p s.
  template <std::size_t R>
  layout(std::array<index_t, R> const& e, std::array<index_t, R> const& s) : rank(R) {
    static_assert(R <= max_rank, "dimtensor: contractions of operands of rank above 8 are not supported (a run-time "
                                 "layout holds at most kernel::max_rank dims)");
    for (std::size_t i = 0; i < R; ++i) {
      ext[i] = e[i];
      str[i] = s[i];
    }
  }
};

/// Positions of dims in a layout (outermost first), as run-time data.
struct positions {
  /// The positions (the first `size` of them).
  std::array<std::size_t, max_rank> at{};
  /// How many.
  std::size_t size = 0;

  positions() = default;
  /// The positions @p p.
  template <std::size_t N>
  positions(std::array<std::size_t, N> const& p) : size(N) {  // NOLINT: implicit, from a position list
    static_assert(N <= max_rank);
    for (std::size_t i = 0; i < N; ++i) at[i] = p[i];
  }
};

/// Extents seen as [outer, n, inner] around one dim.
struct lines {
  index_t outer;  ///< product of the extents before the dim
  index_t n;      ///< the dim's extent
  index_t inner;  ///< product of the extents after the dim
};

/// @p ext seen as lines [outer, n, inner] along position I.
template <std::size_t I, std::size_t R>
constexpr lines lines_along(std::array<index_t, R> const& ext) {
  lines s{1, ext[I], 1};
  for (std::size_t k = 0; k < I; ++k) s.outer *= ext[k];
  for (std::size_t k = I + 1; k < R; ++k) s.inner *= ext[k];
  return s;
}

/// Each batch entry's offset in a layout @p l whose batch dims sit at
/// @p batch (outermost first), the entries in row-major order of those dims
/// (a dim of stride 0 repeats its entries' offsets: a broadcast operand).
inline std::vector<index_t> entry_offsets(layout const& l, positions const& batch) {
  index_t count = 1;
  for (std::size_t i = 0; i < batch.size; ++i) count *= l.ext[batch.at[i]];
  std::vector<index_t> off(static_cast<std::size_t>(count));
  std::array<index_t, max_rank> idx{};
  for (index_t b = 0; b < count; ++b) {
    index_t o = 0;
    for (std::size_t i = 0; i < batch.size; ++i) o += idx[i] * l.str[batch.at[i]];
    off[static_cast<std::size_t>(b)] = o;
    for (std::size_t i = batch.size; i-- > 0;) {
      if (++idx[i] < l.ext[batch.at[i]]) break;
      idx[i] = 0;
    }
  }
  return off;
}

}  // namespace dimtensor::kernel
