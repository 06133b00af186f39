#pragma once
/// @file
/// @brief `plot(lines, file)`: line plots as d2l draws them (loss curves,
/// `plot_kernel_reg`), written as PNG, SVG or PDF; `series_of` makes a
/// series from rank-1 expressions; `layout_plot` tells where things land.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/viz/figure.hpp>

namespace dimtensor {

namespace call {
/// `viz::series_of`.
struct series_of {};
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
    line,     ///< a solid line (matplotlib's `-`)
    dashed,   ///< a dashed line (`--`)
    markers   ///< a translucent circle per point (d2l's `'o', alpha=0.5`)
  };

  /// An empty, unlabelled series.
  series() = default;
  /// @brief The points (@p x_values[i], @p y_values[i]), drawn as @p how in
  /// @p color_text (empty: the next tab10 colour).  A constructor rather than
  /// an aggregate, so that leaving the last members out draws no
  /// `-Wmissing-field-initializers` warning.
  series(std::string label_text, std::vector<double> x_values, std::vector<double> y_values,
         style how = style::line, std::string color_text = {})
      : label(std::move(label_text)),
        x(std::move(x_values)),
        y(std::move(y_values)),
        kind(how),
        color(std::move(color_text)) {}

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
  double x_pixel(double x) const { return axes.x + (x - x_low) / (x_high - x_low) * axes.width; }
  /// The pixel row of @p y.
  double y_pixel(double y) const {
    double const f = log_y ? (std::log10(y) - std::log10(y_low)) / (std::log10(y_high) - std::log10(y_low))
                           : (y - y_low) / (y_high - y_low);
    return axes.bottom() - f * axes.height;
  }
};

namespace detail {

/// "series \"Truth\"" or "series 2" (unlabelled), for messages.
inline std::string series_name(std::vector<series> const& lines, std::size_t i) {
  return lines[i].label.empty() ? "series " + std::to_string(i) : "series \"" + lines[i].label + "\"";
}

/// A range checked to be finite and increasing (and positive on a log axis).
inline std::pair<double, double> checked_limits(std::pair<double, double> lim, std::string_view what, bool positive) {
  auto const [lo, hi] = lim;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || (positive && lo <= 0)) {
    throw value_error("plot: " + std::string(what) + " (" + format_number(lo, 6) + ", " + format_number(hi, 6) +
                      ") is not an increasing range of finite" + (positive ? " positive" : "") + " numbers");
  }
  return lim;
}

/// A single value widened to a range (matplotlib's nonsingular()).
inline std::pair<double, double> widen_single(double lo, double hi) {
  if (hi - lo > 1e-12 * std::max(std::abs(lo), std::abs(hi))) return {lo, hi};
  double const w = lo == 0 ? 0.05 : 0.05 * std::abs(lo);
  return {lo - w, hi + w};
}

/// Minus written as matplotlib writes it.
inline std::string exponent_text(int e) { return e < 0 ? "\u2212" + std::to_string(-e) : std::to_string(e); }

/// Width of a label with an optional superscript.
inline double label_width(canvas const& m, std::string const& text, std::string const& sup) {
  m.font(style::tick_font);
  double w = m.text_width(text);
  if (!sup.empty()) {
    m.font(0.7 * style::tick_font);
    w += m.text_width(sup);
    m.font(style::tick_font);
  }
  return w;
}

/// Log-axis ticks over [lo, hi]: decades labelled `10^e` when two or more
/// fall inside (thinned to @p nbins), else the 1…9 multiples as plain numbers.
inline void log_ticks(plot_layout& L, double lo, double hi, int nbins) {
  int const e0 = static_cast<int>(std::floor(std::log10(lo))) - 1;
  int const e1 = static_cast<int>(std::ceil(std::log10(hi))) + 1;
  auto inside = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
  std::vector<int> decades;
  for (int e = e0; e <= e1; ++e) {
    if (inside(std::pow(10.0, e))) decades.push_back(e);
  }
  L.yticks = {};
  L.y_exponents.clear();
  L.y_minor.clear();
  if (decades.size() >= 2) {
    int stride = 1;
    while (static_cast<int>((decades.size() + static_cast<std::size_t>(stride) - 1) / static_cast<std::size_t>(stride)) >
           std::max(nbins, 2)) {
      ++stride;
    }
    for (int e : decades) {
      if (((e % stride) + stride) % stride != 0) continue;
      L.yticks.values.push_back(std::pow(10.0, e));
      L.yticks.labels.emplace_back("10");
      L.y_exponents.push_back(exponent_text(e));
    }
    if (stride == 1) {
      for (int e = e0; e <= e1; ++e) {
        for (int m = 2; m <= 9; ++m) {
          double const v = m * std::pow(10.0, e);
          if (inside(v)) L.y_minor.push_back(v);
        }
      }
    }
    return;
  }
  static constexpr std::array<std::array<int, 9>, 4> subsets{{
      {1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 2, 5, 0, 0, 0, 0, 0, 0}, {1, 3, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 0, 0}}};
  for (auto const& subset : subsets) {
    std::vector<double> major;
    for (int e = e0; e <= e1; ++e) {
      for (int m : subset) {
        if (m != 0 && inside(m * std::pow(10.0, e))) major.push_back(m * std::pow(10.0, e));
      }
    }
    if (static_cast<int>(major.size()) <= std::max(nbins, 2) || subset[1] == 0) {
      L.yticks.values = major;
      break;
    }
  }
  L.yticks.labels = format_ticks(L.yticks.values);
  for (int e = e0; e <= e1; ++e) {
    for (int m = 1; m <= 9; ++m) {
      double const v = m * std::pow(10.0, e);
      bool const labelled = std::any_of(L.yticks.values.begin(), L.yticks.values.end(),
                                        [&](double t) { return std::abs(t - v) <= 1e-9 * v; });
      if (inside(v) && !labelled) L.y_minor.push_back(v);
    }
  }
}

/// Whether the segment (x0, y0)–(x1, y1) meets @p r (Liang–Barsky).
inline bool segment_meets(rect const& r, double x0, double y0, double x1, double y1) {
  double t0 = 0;
  double t1 = 1;
  double const dx = x1 - x0;
  double const dy = y1 - y0;
  std::array<double, 4> const p{-dx, dx, -dy, dy};
  std::array<double, 4> const q{x0 - r.x, r.right() - x0, y0 - r.y, r.bottom() - y0};
  for (std::size_t k = 0; k < 4; ++k) {
    if (p[k] == 0) {
      if (q[k] < 0) return false;
    } else {
      double const t = q[k] / p[k];
      if (p[k] < 0) {
        t0 = std::max(t0, t);
      } else {
        t1 = std::min(t1, t);
      }
      if (t0 > t1) return false;
    }
  }
  return true;
}

/// Legend geometry: padding, row pitch, handle length and the gap to the text.
struct legend_metrics {
  double pad = 0.4 * style::legend_font;
  double handle = 2.0 * style::legend_font;
  double text_gap = 0.8 * style::legend_font;
  double spacing = 0.5 * style::legend_font;
  double row = 0;
};

inline legend_metrics legend_metrics_of(canvas const& m) {
  legend_metrics g;
  m.font(style::legend_font);
  g.row = m.cap_height() + m.descent();
  return g;
}

/// Checks the series and options and lays the figure out.
inline plot_layout layout_plot_data(std::vector<series> const& lines, plot_options const& o) {
  if (o.width < 100 || o.height < 100 || o.width > 8000 || o.height > 8000) {
    throw value_error("plot: a figure of " + std::to_string(o.width) + " x " + std::to_string(o.height) +
                      " pixels is outside 100 to 8000 pixels a side");
  }
  plot_layout L;
  L.width = o.width;
  L.height = o.height;
  L.log_y = o.log_y;
  std::size_t next_color = 0;
  bool any_markers = false;
  double xlo = std::numeric_limits<double>::infinity();
  double xhi = -xlo;
  double ylo = xlo;
  double yhi = -xlo;
  for (std::size_t s = 0; s < lines.size(); ++s) {
    auto const& l = lines[s];
    if (l.x.size() != l.y.size()) {
      throw value_error("plot: " + series_name(lines, s) + " has " + std::to_string(l.x.size()) + " x values but " +
                        std::to_string(l.y.size()) + " y values");
    }
    L.colors.push_back(l.color.empty() ? tab10[next_color++ % tab10.size()] : parse_color(l.color, "plot"));
    any_markers = any_markers || l.kind == series::style::markers;
    for (std::size_t i = 0; i < l.x.size(); ++i) {
      if (o.log_y && l.y[i] <= 0) {
        throw value_error("plot: log_y needs positive y values, but " + series_name(lines, s) + " has y = " +
                          format_number(l.y[i], 6) + " at index " + std::to_string(i));
      }
      if (!std::isfinite(l.x[i]) || !std::isfinite(l.y[i])) continue;
      xlo = std::min(xlo, l.x[i]);
      xhi = std::max(xhi, l.x[i]);
      double const y = o.log_y ? std::log10(l.y[i]) : l.y[i];
      ylo = std::min(ylo, y);
      yhi = std::max(yhi, y);
    }
  }
  if (o.xlim) {
    std::tie(L.x_low, L.x_high) = checked_limits(*o.xlim, "xlim", false);
  } else if (xlo <= xhi) {
    std::tie(L.x_low, L.x_high) = widen_single(xlo, xhi);
    if (any_markers) {
      double const pad = 0.05 * (L.x_high - L.x_low);
      L.x_low -= pad;
      L.x_high += pad;
    }
  }
  if (o.ylim) {
    std::tie(L.y_low, L.y_high) = checked_limits(*o.ylim, "ylim", o.log_y);
  } else if (ylo <= yhi) {
    auto [lo, hi] = widen_single(ylo, yhi);
    double const pad = 0.05 * (hi - lo);
    L.y_low = o.log_y ? std::pow(10.0, lo - pad) : lo - pad;
    L.y_high = o.log_y ? std::pow(10.0, hi + pad) : hi + pad;
  } else if (o.log_y) {
    L.y_low = 0.1;
    L.y_high = 10;
  }

  canvas const m{measure_only_t{}};
  m.font(style::tick_font);
  double const tick_cap = m.cap_height();
  m.font(style::label_font);
  double const label_thick = m.cap_height() + m.descent();
  m.font(style::title_font);
  double const title_block = o.title.empty() ? 0 : style::title_pad + m.cap_height() + m.descent();

  // A multiplier (1e6) goes above the y axis and under the x axis' right end: room is made for it
  // once the ticks show it is needed, and the layout done again.
  bool room_y = false;
  bool room_x = false;
  for (int attempt = 0; attempt < 3; ++attempt) {
    double const multiplier_h = tick_cap + m.descent() + 4;
    double const top = style::margin + std::max({title_block, tick_cap / 2, room_y ? multiplier_h : 0.0});
    double const xtick_block = style::frame_width / 2 + style::tick_length + style::tick_pad + tick_cap;
    double const bottom = o.height - style::margin - xtick_block -
                          (o.xlabel.empty() && !room_x ? 0 : style::label_pad + label_thick);
    if (bottom - top < 20) throw value_error("plot: the figure is too small for its labels");
    double const axes_h = bottom - top;
    int const ybins = std::clamp(static_cast<int>(axes_h / (2 * style::tick_font)), 1, 9);
    if (o.log_y) {
      log_ticks(L, L.y_low, L.y_high, ybins);
    } else {
      L.yticks = fit_ticks(m, L.y_low, L.y_high, axes_h, false, false);
    }
    double ytick_w = 0;
    for (std::size_t i = 0; i < L.yticks.labels.size(); ++i) {
      ytick_w = std::max(
          ytick_w, label_width(m, L.yticks.labels[i], L.y_exponents.empty() ? std::string{} : L.y_exponents[i]));
    }
    double left = style::margin + (o.ylabel.empty() ? 0 : label_thick + style::label_pad) + ytick_w +
                  style::tick_pad + style::tick_length + style::frame_width / 2;
    double right = o.width - style::margin;
    // x tick labels are centred on their ticks: keep the first and the last inside the figure.
    for (int pass = 0; pass < 2; ++pass) {
      L.axes = {std::round(left), std::round(top), std::round(right) - std::round(left),
                std::round(bottom) - std::round(top)};
      if (L.axes.width < 20) throw value_error("plot: the figure is too narrow for its labels");
      L.xticks = fit_ticks(m, L.x_low, L.x_high, L.axes.width, true, false);
      if (L.xticks.values.empty()) break;
      m.font(style::tick_font);
      double const over_right = L.x_pixel(L.xticks.values.back()) + m.text_width(L.xticks.labels.back()) / 2 -
                                (o.width - style::margin);
      double const over_left =
          style::margin - (L.x_pixel(L.xticks.values.front()) - m.text_width(L.xticks.labels.front()) / 2);
      if (over_right <= 0.5 && over_left <= 0.5) break;
      right -= std::max(0.0, over_right);
      left += std::max(0.0, over_left);
    }
    bool const need_y = !L.yticks.multiplier.empty() && o.title.empty();
    bool const need_x = !L.xticks.multiplier.empty() && o.xlabel.empty();
    if ((!need_y || room_y) && (!need_x || room_x)) break;
    room_y = room_y || need_y;
    room_x = room_x || need_x;
  }

  // The legend: matplotlib's loc="best" — of its ten places, the first covering the fewest points and segments.
  std::size_t labelled = 0;
  double text_w = 0;
  m.font(style::legend_font);
  for (auto const& l : lines) {
    if (l.label.empty()) continue;
    ++labelled;
    text_w = std::max(text_w, m.text_width(l.label));
  }
  if (o.legend && labelled > 0) {
    legend_metrics const g = legend_metrics_of(m);
    double const w = 2 * g.pad + g.handle + g.text_gap + text_w;
    double const h = 2 * g.pad + static_cast<double>(labelled) * g.row + static_cast<double>(labelled - 1) * g.spacing;
    double const inset = 0.5 * style::legend_font;
    rect const& a = L.axes;
    double const xl = a.x + inset;
    double const xr = a.right() - inset - w;
    double const xc = a.center_x() - w / 2;
    double const yt = a.y + inset;
    double const yb = a.bottom() - inset - h;
    double const yc = a.center_y() - h / 2;
    std::array<rect, 10> const places{{{xr, yt, w, h}, {xl, yt, w, h}, {xl, yb, w, h}, {xr, yb, w, h},
                                       {xr, yc, w, h}, {xl, yc, w, h}, {xr, yc, w, h}, {xc, yb, w, h},
                                       {xc, yt, w, h}, {xc, yc, w, h}}};
    std::size_t best = 0;
    std::size_t best_badness = std::numeric_limits<std::size_t>::max();
    for (std::size_t p = 0; p < places.size(); ++p) {
      std::size_t badness = 0;
      for (auto const& l : lines) {
        bool have_prev = false;
        double px = 0;
        double py = 0;
        for (std::size_t i = 0; i < l.x.size(); ++i) {
          if (!std::isfinite(l.x[i]) || !std::isfinite(l.y[i])) {
            have_prev = false;
            continue;
          }
          double const qx = L.x_pixel(l.x[i]);
          double const qy = L.y_pixel(l.y[i]);
          if (places[p].contains(qx, qy)) ++badness;
          if (have_prev && l.kind != series::style::markers && segment_meets(places[p], px, py, qx, qy)) ++badness;
          px = qx;
          py = qy;
          have_prev = true;
        }
      }
      if (badness < best_badness) {
        best_badness = badness;
        best = p;
      }
    }
    L.legend = places[best];
  }
  return L;
}

/// Sets the line style of series kind @p kind (width, dashes, caps).
inline void line_style(cairo_t* cr, series::style kind) {
  cairo_set_line_width(cr, style::line_width);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  if (kind == series::style::dashed) {
    // matplotlib's "--": 3.7 on, 1.6 off, in line widths.
    std::array<double, 2> const dashes{3.7 * style::line_width, 1.6 * style::line_width};
    cairo_set_dash(cr, dashes.data(), 2, 0);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
  } else {
    cairo_set_dash(cr, nullptr, 0, 0);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_SQUARE);
  }
}

/// One `o` marker: filled and edged at half opacity, as `plt.plot(x, y, 'o', alpha=0.5)`.
inline void marker(canvas const& c, double x, double y, rgb const& color) {
  cairo_t* const cr = c.cr();
  cairo_new_path(cr);
  cairo_arc(cr, x, y, style::marker_size / 2, 0, 2 * std::numbers::pi);
  c.color(color, 0.5);
  cairo_fill_preserve(cr);
  cairo_set_dash(cr, nullptr, 0, 0);
  cairo_set_line_width(cr, style::marker_edge);
  cairo_stroke(cr);
}

/// Draws a y tick label with an optional superscript, right-aligned at (x, y).
inline void y_label_with_exponent(canvas const& c, std::string const& text, std::string const& sup, double x, double y) {
  double const w = label_width(c, text, sup);
  c.font(style::tick_font);
  double const cap = c.cap_height();
  c.text(text, x - w, y, halign::left, valign::center);
  if (!sup.empty()) {
    double const base_w = c.text_width(text);
    c.font(0.7 * style::tick_font);
    c.text(sup, x - w + base_w, y - 0.45 * cap, halign::left, valign::center);
  }
}

}  // namespace detail

/// @brief Where `plot(lines, file, options)` puts everything (axes, ranges,
/// ticks, colours, legend), without drawing; the same checks and errors.
inline plot_layout layout_plot(std::vector<series> const& lines, plot_options const& options = {}) {
  return detail::layout_plot_data(lines, options);
}

/// @brief Draws @p lines in one axes and writes @p file (`.png`, `.svg`
/// or `.pdf`), looking like d2l's `d2l.plot`: tab10 colours, grid, frame,
/// ticks matplotlib would choose, labels, title and legend.
///
/// `value_error` for a series whose x and y differ in length (naming it and
/// both lengths), a non-positive y on a log axis, a bad range or colour,
/// an unknown extension; `io_error` naming the path and cairo's reason when
/// the file cannot be written.
inline void plot(std::vector<series> const& lines, std::filesystem::path const& file, plot_options const& options = {}) {
  using namespace detail;
  (void)format_of(file, "plot");
  plot_layout const L = layout_plot_data(lines, options);
  canvas c(file, "plot", L.width, L.height, options.title);
  cairo_t* const cr = c.cr();
  rect const& a = L.axes;

  if (options.grid) {
    for (double v : L.xticks.values) c.line(L.x_pixel(v), a.y, L.x_pixel(v), a.bottom(), style::grid_width, grid_grey);
    for (double v : L.yticks.values) c.line(a.x, L.y_pixel(v), a.right(), L.y_pixel(v), style::grid_width, grid_grey);
  }

  cairo_save(cr);
  cairo_rectangle(cr, a.x, a.y, a.width, a.height);
  cairo_clip(cr);
  for (std::size_t s = 0; s < lines.size(); ++s) {
    auto const& l = lines[s];
    if (l.kind == series::style::markers) {
      for (std::size_t i = 0; i < l.x.size(); ++i) {
        if (std::isfinite(l.x[i]) && std::isfinite(l.y[i])) marker(c, L.x_pixel(l.x[i]), L.y_pixel(l.y[i]), L.colors[s]);
      }
      continue;
    }
    cairo_new_path(cr);
    bool pen_down = false;
    for (std::size_t i = 0; i < l.x.size(); ++i) {
      if (!std::isfinite(l.x[i]) || !std::isfinite(l.y[i])) {
        pen_down = false;
        continue;
      }
      double const px = L.x_pixel(l.x[i]);
      double const py = L.y_pixel(l.y[i]);
      if (pen_down) {
        cairo_line_to(cr, px, py);
      } else {
        cairo_move_to(cr, px, py);
      }
      pen_down = true;
    }
    line_style(cr, l.kind);
    c.color(L.colors[s]);
    cairo_stroke(cr);
  }
  cairo_restore(cr);
  cairo_set_dash(cr, nullptr, 0, 0);

  c.frame(a);
  std::vector<double> px;
  for (double v : L.xticks.values) px.push_back(L.x_pixel(v));
  draw_x_ticks(c, a, px, L.xticks.labels);
  double const tick_x = a.x - style::frame_width / 2;
  for (std::size_t i = 0; i < L.yticks.values.size(); ++i) {
    double const y = L.y_pixel(L.yticks.values[i]);
    c.line(tick_x, y, tick_x - style::tick_length, y, style::tick_width, {0, 0, 0});
    y_label_with_exponent(c, L.yticks.labels[i], L.y_exponents.empty() ? std::string{} : L.y_exponents[i],
                          tick_x - style::tick_length - style::tick_pad, y);
  }
  for (double v : L.y_minor) {
    double const y = L.y_pixel(v);
    c.line(tick_x, y, tick_x - style::minor_tick_length, y, 0.6 * style::tick_width, {0, 0, 0});
  }

  c.font(style::tick_font);
  double const tick_cap = c.cap_height();
  double ytick_w = 0;
  for (std::size_t i = 0; i < L.yticks.labels.size(); ++i) {
    ytick_w = std::max(ytick_w, label_width(c, L.yticks.labels[i], L.y_exponents.empty() ? std::string{} : L.y_exponents[i]));
  }
  c.color({0, 0, 0});
  c.font(style::label_font);
  c.text(options.xlabel, a.center_x(),
         a.bottom() + style::frame_width / 2 + style::tick_length + style::tick_pad + tick_cap + style::label_pad,
         halign::center, valign::top);
  c.text(options.ylabel, tick_x - style::tick_length - style::tick_pad - ytick_w - style::label_pad, a.center_y(),
         halign::center, valign::bottom, true);
  c.font(style::title_font);
  c.text(options.title, a.center_x(), a.y - style::frame_width / 2 - style::title_pad, halign::center, valign::bottom);
  c.font(style::tick_font);
  c.text(L.xticks.multiplier, a.right(),
         a.bottom() + style::frame_width / 2 + style::tick_length + style::tick_pad + tick_cap + style::label_pad,
         halign::right, valign::top);
  c.text(L.yticks.multiplier, a.x, a.y - style::frame_width - 4, halign::left, valign::bottom);

  if (L.legend) {
    rect const& b = *L.legend;
    legend_metrics const g = legend_metrics_of(c);
    double const radius = 0.2 * style::legend_font;
    cairo_new_path(cr);
    cairo_arc(cr, b.right() - radius, b.y + radius, radius, -std::numbers::pi / 2, 0);
    cairo_arc(cr, b.right() - radius, b.bottom() - radius, radius, 0, std::numbers::pi / 2);
    cairo_arc(cr, b.x + radius, b.bottom() - radius, radius, std::numbers::pi / 2, std::numbers::pi);
    cairo_arc(cr, b.x + radius, b.y + radius, radius, std::numbers::pi, 1.5 * std::numbers::pi);
    cairo_close_path(cr);
    c.color({1, 1, 1}, 0.8);
    cairo_fill_preserve(cr);
    c.color(legend_edge);
    cairo_set_line_width(cr, 1.0 * pt);
    cairo_stroke(cr);
    double y = b.y + g.pad;
    for (std::size_t s = 0; s < lines.size(); ++s) {
      auto const& l = lines[s];
      if (l.label.empty()) continue;
      c.font(style::legend_font);
      double const mid = y + g.row / 2 - c.descent() / 2;
      double const hx = b.x + g.pad;
      if (l.kind == series::style::markers) {
        marker(c, hx + g.handle / 2, mid, L.colors[s]);
      } else {
        cairo_new_path(cr);
        cairo_move_to(cr, hx, mid);
        cairo_line_to(cr, hx + g.handle, mid);
        line_style(cr, l.kind);
        c.color(L.colors[s]);
        cairo_stroke(cr);
        cairo_set_dash(cr, nullptr, 0, 0);
      }
      c.color({0, 0, 0});
      c.font(style::legend_font);
      c.text(l.label, hx + g.handle + g.text_gap, mid, halign::left, valign::center);
      y += g.row + g.spacing;
    }
  }
  c.finish();
}

namespace detail {

/// The elements of a rank-1 expression of any backend as doubles (copied
/// to the host first when the host cannot read them).
template <class E>
std::vector<double> values_of(E const& x) {
  auto const t = dimtensor::detail::to_host(x);
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
    (void)diagnostic::series_needs_rank_1<call::series_of, typename X::specs>{};
    return {};
  } else if constexpr (Y::rank != 1) {
    (void)diagnostic::series_needs_rank_1<call::series_of, typename Y::specs>{};
    return {};
  } else {
    using SX = dimtensor::detail::spec_at<typename X::specs, 0>;
    using SY = dimtensor::detail::spec_at<typename Y::specs, 0>;
    if constexpr (!std::is_same_v<dim_of<SX>, dim_of<SY>>) {
      (void)diagnostic::series_dims_differ<call::series_of, diagnostic::left_has<dim_of<SX>>,
                                           diagnostic::right_has<dim_of<SY>>>{};
      return {};
    } else if constexpr (is_static_v<SX> && is_static_v<SY> && static_extent_v<SX> != static_extent_v<SY>) {
      (void)diagnostic::extent_mismatch<call::series_of, dim_of<SX>,
                                        diagnostic::extents<static_extent_v<SX>, static_extent_v<SY>>>{};
      return {};
    } else {
      if (x.extents()[0] != y.extents()[0]) {
        dimtensor::detail::throw_extent_mismatch("series_of", dim_name_v<dim_of<SX>>, x.extents()[0], y.extents()[0],
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
    (void)diagnostic::series_needs_rank_1<call::series_of, typename Y::specs>{};
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
