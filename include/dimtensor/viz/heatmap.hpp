#pragma once
/// @file
/// @brief `show_heatmaps(matrices, file)`: d2l's grid of attention heatmaps
/// with one colour bar, written as PNG, SVG or PDF; `show_heatmap` for one
/// matrix; `layout_heatmaps` / `layout_heatmap` tell where everything lands.

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>
#include <dimtensor/viz/figure.hpp>

namespace dimtensor {

namespace call {
/// `viz::show_heatmaps` and `viz::layout_heatmaps`.
struct show_heatmaps : named<"show_heatmaps"> {};
/// `viz::show_heatmap` and `viz::layout_heatmap`.
struct show_heatmap : named<"show_heatmap"> {};
}  // namespace call

namespace diagnostic {

/// show_heatmaps given a tensor whose rank is not 4.
template <class Call, class Dims>
struct heatmaps_need_rank_4 {
  static_assert(always_false<Call, Dims>,
                "dimtensor: show_heatmaps draws a rank-4 tensor [rows, cols, Y, X], as d2l's "
                "(num_rows, num_cols, num_queries, num_keys) (see heatmaps_need_rank_4<call, dims> above); "
                "unsqueeze the missing grid dims, or call show_heatmap for one [Y, X] matrix");
};

/// show_heatmap given a tensor whose rank is not 2.
template <class Call, class Dims>
struct heatmap_needs_rank_2 {
  static_assert(always_false<Call, Dims>,
                "dimtensor: show_heatmap draws one rank-2 matrix [Y, X] (see heatmap_needs_rank_2<call, dims> "
                "above); call show_heatmaps for a rank-4 grid [rows, cols, Y, X]");
};

}  // namespace diagnostic

namespace viz {

/// @brief How `show_heatmaps` and `show_heatmap` draw.
struct heatmap_options {
  /// Label under the bottom row; empty: the name of the matrices' last dim (`KVPairs`).
  std::string xlabel{};
  /// Label left of the left column; empty: the name of the second-to-last dim (`Queries`).
  std::string ylabel{};
  /// One title per column of the grid, drawn over every heatmap of that column (as d2l does); or none.
  std::vector<std::string> titles{};
  /// The colormap by matplotlib's name (see `colormap::named`); d2l's default is `Reds`.
  std::string cmap = "Reds";
  /// @brief Side of one cell in pixels at 100 dpi; 0 chooses it: 200 pixels
  /// over the longer side of a matrix (whole pixels), at least 3 per cell up
  /// to 400 cells, and 1200 pixels in all beyond.
  double cell_size = 0;
  /// @brief Bottom of the colour range; default: the smallest finite
  /// element of all the matrices.  One range serves the whole grid, so the
  /// one colour bar reads right for every heatmap.
  std::optional<double> vmin{};
  /// Top of the colour range; default: the largest finite element of all the matrices.
  std::optional<double> vmax{};
  /// The colour of a NaN or infinite element (matplotlib masks them too).
  rgb invalid_color = {0.75, 0.75, 0.75};
};

/// @brief Where a heatmap figure puts things, in figure pixels (a PNG's
/// pixels): what `show_heatmaps` draws, computed without drawing.
struct heatmap_layout {
  /// Figure width (the PNG's width).
  int width = 0;
  /// Figure height (the PNG's height).
  int height = 0;
  /// Rows of the grid.
  index_t rows = 0;
  /// Columns of the grid.
  index_t cols = 0;
  /// Rows of each matrix (its second-to-last dim).
  index_t ny = 0;
  /// Columns of each matrix (its last dim).
  index_t nx = 0;
  /// Side of one cell.
  double cell_size = 0;
  /// The image of heatmap (row, col) at `axes[row * cols + col]`; its frame is drawn just outside.
  std::vector<rect> axes;
  /// The gradient of the colour bar (top: `vmax`, bottom: `vmin`); its frame is drawn just outside.
  rect colorbar;
  /// The colour range.
  double vmin = 0;
  /// The colour range.
  double vmax = 1;
  /// The values at the bottom and top of the colour bar (the colour range, widened when it is a single value).
  double bar_low = 0;
  /// See `bar_low`.
  double bar_high = 1;
  /// Ticks of the x axes (column indices).
  axis_ticks xticks;
  /// Ticks of the y axes (row indices).
  axis_ticks yticks;
  /// Ticks of the colour bar (values).
  axis_ticks colorbar_ticks;
  /// The x label drawn.
  std::string xlabel;
  /// The y label drawn.
  std::string ylabel;

  /// The rectangle of element (@p y, @p x) of heatmap (@p row, @p col).
  rect cell(index_t row, index_t col, index_t y, index_t x) const;
  /// The height on the colour bar's gradient of value @p v.
  double colorbar_y(double v) const;
};

namespace detail {

/// The elements of a grid of matrices as doubles, row-major [rows, cols, ny, nx].
struct heatmap_data {
  std::array<index_t, 4> extents{};
  std::vector<double> values;
  std::string shape;   // "[Rows=2, Cols=3, Queries=10, KVPairs=10]", for messages
  std::string x_name;  // the last dim
  std::string y_name;  // the second-to-last dim
};

/// Reads a rank-2 or rank-4 expression of any backend into heatmap_data
/// (rank 2 as a 1×1 grid); elements the host cannot read are copied first.
template <class E>
heatmap_data read_heatmap_data(E const& x) {
  using L = typename E::specs;
  constexpr std::size_t R = E::rank;
  auto const t = to_host(x);
  heatmap_data d;
  auto const& ext = t.extents();
  d.extents = R == 4 ? std::array<index_t, 4>{ext[0], ext[1], ext[R - 2], ext[R - 1]}
                     : std::array<index_t, 4>{1, 1, ext[R - 2], ext[R - 1]};
  d.shape = shape_string<L>(ext);
  d.x_name = std::string(meta::names_of<L>::value[R - 1]);
  d.y_name = std::string(meta::names_of<L>::value[R - 2]);
  index_t const n = t.size();
  d.values.resize(static_cast<std::size_t>(n));
  auto const* const p = t.data();
  for (index_t i = 0; i < n; ++i) d.values[static_cast<std::size_t>(i)] = static_cast<double>(p[i]);
  return d;
}

/// Checks the data and options and lays the figure out (src/viz/heatmap.cpp).
heatmap_layout layout_heatmap_data(std::string_view op, heatmap_data const& d, heatmap_options const& o);

/// Draws the figure of @p d into @p file (src/viz/heatmap.cpp).
void draw_heatmap_data(std::string_view op, heatmap_data const& d, std::filesystem::path const& file,
                       heatmap_options const& o);

}  // namespace detail

/// @brief Where `show_heatmaps(matrices, file, options)` puts everything
/// (figure size, each heatmap's cells, the colour bar), without drawing;
/// the same checks and errors as `show_heatmaps`.
template <class E>
heatmap_layout layout_heatmaps(E const& matrices, heatmap_options const& options = {}) {
  if constexpr (is_ill_formed_v<E>) {
    return {};
  } else if constexpr (!Expression<E>) {
    static_assert(diagnostic::always_false<E>, "dimtensor: layout_heatmaps takes a tensor or a tensor expression");
    return {};
  } else if constexpr (E::rank != 4) {
    (void)diagnostic::fire<diagnostic::heatmaps_need_rank_4<call::show_heatmaps, typename E::specs>>;
    return {};
  } else {
    return detail::layout_heatmap_data("show_heatmaps", detail::read_heatmap_data(matrices), options);
  }
}

/// @brief Where `show_heatmap(matrix, file, options)` puts everything (a 1×1 grid), without drawing.
template <class E>
heatmap_layout layout_heatmap(E const& matrix, heatmap_options const& options = {}) {
  if constexpr (is_ill_formed_v<E>) {
    return {};
  } else if constexpr (!Expression<E>) {
    static_assert(diagnostic::always_false<E>, "dimtensor: layout_heatmap takes a tensor or a tensor expression");
    return {};
  } else if constexpr (E::rank != 2) {
    (void)diagnostic::fire<diagnostic::heatmap_needs_rank_2<call::show_heatmap, typename E::specs>>;
    return {};
  } else {
    return detail::layout_heatmap_data("show_heatmap", detail::read_heatmap_data(matrix), options);
  }
}

/// @brief d2l's `show_heatmaps`: a grid of heatmaps, one per [Y, X] matrix
/// of the rank-4 expression @p matrices [rows, cols, Y, X], written to
/// @p file (`.png`, `.svg` or `.pdf`).
///
/// As d2l draws it: `titles[j]` over every heatmap of column j, the x label
/// under the bottom row, the y label left of the left column, integer index
/// ticks (labelled on the bottom row and left column only, as with shared
/// axes), row 0 of a matrix at the top, and one colour bar on the right,
/// 0.6 of the grid's height.  The colour range is shared by all heatmaps
/// (see `heatmap_options::vmin`); NaN and infinite elements are grey.
///
/// Checked at compile time: the rank (`heatmaps_need_rank_4`).  At run
/// time, `value_error` for an extent of 0 (naming the dims), a wrong number
/// of titles, an unknown colormap, a reversed colour range or an unknown
/// extension; `io_error` naming the path and cairo's reason when the file
/// cannot be written.
template <class E>
void show_heatmaps(E const& matrices, std::filesystem::path const& file, heatmap_options const& options = {}) {
  if constexpr (is_ill_formed_v<E>) {
    return;
  } else if constexpr (!Expression<E>) {
    static_assert(diagnostic::always_false<E>, "dimtensor: show_heatmaps takes a tensor or a tensor expression");
  } else if constexpr (E::rank != 4) {
    (void)diagnostic::fire<diagnostic::heatmaps_need_rank_4<call::show_heatmaps, typename E::specs>>;
  } else {
    (void)format_of(file, "show_heatmaps");
    detail::draw_heatmap_data("show_heatmaps", detail::read_heatmap_data(matrices), file, options);
  }
}

/// @brief One heatmap of the rank-2 expression @p matrix [Y, X], with its
/// colour bar, written to @p file; `titles` may hold one title.  Otherwise
/// as `show_heatmaps` (checked rank: `heatmap_needs_rank_2`).
template <class E>
void show_heatmap(E const& matrix, std::filesystem::path const& file, heatmap_options const& options = {}) {
  if constexpr (is_ill_formed_v<E>) {
    return;
  } else if constexpr (!Expression<E>) {
    static_assert(diagnostic::always_false<E>, "dimtensor: show_heatmap takes a tensor or a tensor expression");
  } else if constexpr (E::rank != 2) {
    (void)diagnostic::fire<diagnostic::heatmap_needs_rank_2<call::show_heatmap, typename E::specs>>;
  } else {
    (void)format_of(file, "show_heatmap");
    detail::draw_heatmap_data("show_heatmap", detail::read_heatmap_data(matrix), file, options);
  }
}

}  // namespace viz
}  // namespace dimtensor
