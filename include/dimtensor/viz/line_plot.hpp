#pragma once
/// @file
/// @brief `plot(lines, file)`: line plots as d2l draws them (loss curves,
/// `plot_kernel_reg`), written as PNG, SVG or PDF; `series_of` makes a
/// series from rank-1 expressions; `layout_plot` tells where things land.

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
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
/// `viz::series_of`.
struct series_of : named<"series_of"> {};
}  // namespace call

namespace diagnostic {

/// series_of given an expression whose rank is not 1.
template <class Call, class Dims>
struct series_needs_rank_1 {
  static_assert(always_false<Call, Dims>,
                "dimtensor: a series is made of rank-1 tensors, one value per point (see "
                "series_needs_rank_1<call, dims> above); slice or index the other dims away first");
};

/// series_of whose x and y run along different dims.
template <class Call, class X, class Y>
struct series_dims_differ {
  static_assert(always_false<Call, X, Y>,
                "dimtensor: the x and y of a series must run along the same dimension, one x per y (see "
                "series_dims_differ<call, left_has<x's dim>, right_has<y's dim>> above); rename one if they "
                "really are the same points");
};

}  // namespace diagnostic

namespace viz {

/// @brief One line of a plot: its points, legend entry, look and colour:
/// `series{"Truth", x, y}`, `series{"Pred", x, y_hat, series::style::dashed}`.
struct series {
  /// How the points are drawn.
  enum class style {
    line,    ///< a solid line (matplotlib's `-`)
    dashed,  ///< a dashed line (`--`)
    markers  ///< a translucent circle per point (d2l's `'o', alpha=0.5`)
  };

  /// An empty, unlabelled series.
  series() = default;
  /// @brief The points (@p x_values[i], @p y_values[i]), drawn as @p how in
  /// @p color_text (empty: the next tab10 colour).  A constructor rather than
  /// an aggregate, so that leaving the last members out draws no
  /// `-Wmissing-field-initializers` warning.
  series(std::string label_text, std::vector<double> x_values, std::vector<double> y_values, style how = style::line,
         std::string color_text = {});

  /// The legend entry; empty: left out of the legend.
  std::string label;
  /// x of each point.
  std::vector<double> x;
  /// y of each point (as many as x); a NaN or infinite value breaks the line.
  std::vector<double> y;
  /// How the points are drawn.
  style kind = style::line;
  /// @brief `#rrggbb` or `C0`…`C9`; empty: the next colour of matplotlib's
  /// tab10 cycle, which only such series advance (as in matplotlib).
  std::string color;
};

/// @brief How `plot` draws.
struct plot_options {
  /// Label under the x axis.
  std::string xlabel{};
  /// Label left of the y axis.
  std::string ylabel{};
  /// Title over the axes.
  std::string title{};
  /// @brief x range shown; default: the data's range, widened by 5% on each
  /// side when a series has markers (so that none is cut in half).
  std::optional<std::pair<double, double>> xlim{};
  /// y range shown; default: the data's range widened by 5% on each side (matplotlib's margins).
  std::optional<std::pair<double, double>> ylim{};
  /// Whether labelled series get a legend (placed where it covers the fewest points, matplotlib's `best`).
  bool legend = true;
  /// Whether grid lines mark the major ticks (d2l's `axes.grid()`).
  bool grid = true;
  /// A logarithmic y axis (loss curves); every y must then be positive.
  bool log_y = false;
  /// Figure width in pixels at 100 dpi (100 to 8000).
  int width = 640;
  /// Figure height in pixels at 100 dpi (100 to 8000).
  int height = 440;
};

/// @brief Where `plot` puts things, in figure pixels (a PNG's pixels).
struct plot_layout {
  /// Figure width (the PNG's width).
  int width = 0;
  /// Figure height (the PNG's height).
  int height = 0;
  /// The inside of the axes; the frame is drawn just outside.
  rect axes;
  /// The x range shown (left edge).
  double x_low = 0;
  /// The x range shown (right edge).
  double x_high = 1;
  /// The y range shown (bottom edge).
  double y_low = 0;
  /// The y range shown (top edge).
  double y_high = 1;
  /// Whether the y axis is logarithmic.
  bool log_y = false;
  /// Labelled ticks of the x axis.
  axis_ticks xticks;
  /// Labelled ticks of the y axis (on a log axis, `10` with the exponents in `y_exponents`).
  axis_ticks yticks;
  /// Superscripts of the y labels (log axes of several decades), else empty.
  std::vector<std::string> y_exponents;
  /// Unlabelled small ticks of a log y axis.
  std::vector<double> y_minor;
  /// The colour of each series.
  std::vector<rgb> colors;
  /// The legend's box, when there is one.
  std::optional<rect> legend;

  /// The pixel column of @p x.
  double x_pixel(double x) const;
  /// The pixel row of @p y.
  double y_pixel(double y) const;
};

/// @brief Where `plot(lines, file, options)` puts everything (axes, ranges,
/// ticks, colours, legend), without drawing; the same checks and errors.
plot_layout layout_plot(std::vector<series> const& lines, plot_options const& options = {});

/// @brief Draws @p lines in one axes and writes @p file (`.png`, `.svg`
/// or `.pdf`), looking like d2l's `d2l.plot`: tab10 colours, grid, frame,
/// ticks matplotlib would choose, labels, title and legend.
///
/// `value_error` for a series whose x and y differ in length (naming it and
/// both lengths), a non-positive y on a log axis, a bad range or colour,
/// an unknown extension; `io_error` naming the path and cairo's reason when
/// the file cannot be written.
void plot(std::vector<series> const& lines, std::filesystem::path const& file, plot_options const& options = {});

namespace detail {

/// The elements of a rank-1 expression of any backend as doubles (copied
/// to the host first when the host cannot read them).
template <class E>
std::vector<double> values_of(E const& x) {
  auto const t = to_host(x);
  std::vector<double> v(static_cast<std::size_t>(t.size()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(t.data()[i]);
  return v;
}

/// Whether T may be handed to series_of: an expression, or what a failed check returned.
template <class T>
concept SeriesArg = Expression<T> || is_ill_formed_v<T>;

}  // namespace detail

/// @brief A series from two rank-1 expressions along the same dim:
/// `series_of("Truth", x_test, y_truth)`.
///
/// Checked at compile time: rank 1 (`series_needs_rank_1`), the same dim
/// (`series_dims_differ`), equal static extents (`extent_mismatch`).  At
/// run time, extents that differ are a `shape_error` naming the dim and
/// both sizes.  After a failed check (or given `ill_formed`) it returns an
/// empty series, so that the call still fits in a `plot({...})` list.
template <detail::SeriesArg X, detail::SeriesArg Y>
series series_of(std::string label, X const& x, Y const& y, series::style kind = series::style::line) {
  if constexpr (any_ill_formed_v<X, Y>) {
    return {};
  } else if constexpr (X::rank != 1) {
    (void)diagnostic::fire<diagnostic::series_needs_rank_1<call::series_of, typename X::specs>>;
    return {};
  } else if constexpr (Y::rank != 1) {
    (void)diagnostic::fire<diagnostic::series_needs_rank_1<call::series_of, typename Y::specs>>;
    return {};
  } else {
    using SX = meta::spec_at<typename X::specs, 0>;
    using SY = meta::spec_at<typename Y::specs, 0>;
    if constexpr (!std::is_same_v<dim_of<SX>, dim_of<SY>>) {
      (void)diagnostic::fire<diagnostic::series_dims_differ<call::series_of, diagnostic::left_has<dim_of<SX>>,
                                                            diagnostic::right_has<dim_of<SY>>>>;
      return {};
    } else if constexpr (is_static_v<SX> && is_static_v<SY> && static_extent_v<SX> != static_extent_v<SY>) {
      (void)diagnostic::fire<diagnostic::extent_mismatch<
          call::series_of, dim_of<SX>, diagnostic::extents<static_extent_v<SX>, static_extent_v<SY>>>>;
      return {};
    } else {
      if (x.extents()[0] != y.extents()[0]) {
        throw_extent_mismatch("series_of", dim_name_v<dim_of<SX>>, x.extents()[0], y.extents()[0],
                                                 "x", "y");
      }
      return series(std::move(label), detail::values_of(x), detail::values_of(y), kind);
    }
  }
}

/// @brief A series of the rank-1 expression @p y against its indices 0, 1, …
/// (as `plt.plot(y)`); checked as the two-expression form.
template <detail::SeriesArg Y>
series series_of(std::string label, Y const& y, series::style kind = series::style::line) {
  if constexpr (is_ill_formed_v<Y>) {
    return {};
  } else if constexpr (Y::rank != 1) {
    (void)diagnostic::fire<diagnostic::series_needs_rank_1<call::series_of, typename Y::specs>>;
    return {};
  } else {
    std::vector<double> ys = detail::values_of(y);
    std::vector<double> xs(ys.size());
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<double>(i);
    return series(std::move(label), std::move(xs), std::move(ys), kind);
  }
}

}  // namespace viz
}  // namespace dimtensor
