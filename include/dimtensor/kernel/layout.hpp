#pragma once
/// @file
/// @brief How the kernels see a row-major tensor around one dim: `lines`,
/// the extents as [outer, n, inner] (softmax, the reductions along a dim,
/// masking, their gradients).

#include <array>
#include <cstddef>

#include <dimtensor/config.hpp>

namespace dimtensor::kernel {

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

}  // namespace dimtensor::kernel
