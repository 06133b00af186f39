// The non-template part of include/dimtensor/viz/line_plot.hpp: the layout
// and the cairo drawing of plot, compiled once into dimtensor::viz.
#include <dimtensor/viz/line_plot.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/viz/figure.hpp>

#include "canvas.hpp"

namespace dimtensor::viz {

series::series(std::string label_text, std::vector<double> x_values, std::vector<double> y_values, style how,
               std::string color_text)
    : label(std::move(label_text)),
      x(std::move(x_values)),
      y(std::move(y_values)),
      kind(how),
      color(std::move(color_text)) {}

double plot_layout::x_pixel(double x) const { return axes.x + (x - x_low) / (x_high - x_low) * axes.width; }

double plot_layout::y_pixel(double y) const {
  double const f = log_y ? (std::log10(y) - std::log10(y_low)) / (std::log10(y_high) - std::log10(y_low))
                         : (y - y_low) / (y_high - y_low);
  return axes.bottom() - f * axes.height;
}

namespace detail {
namespace {

/// "series \"Truth\"" or "series 2" (unlabelled), for messages.
std::string series_name(std::vector<series> const& lines, std::size_t i) {
  return lines[i].label.empty() ? "series " + std::to_string(i) : "series \"" + lines[i].label + "\"";
}

/// A range checked to be finite and increasing (and positive on a log axis).
std::pair<double, double> checked_limits(std::pair<double, double> lim, std::string_view what, bool positive) {
  auto const [lo, hi] = lim;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || (positive && lo <= 0)) {
    throw value_error("plot: " + std::string(what) + " (" + format_number(lo, 6) + ", " + format_number(hi, 6) +
                      ") is not an increasing range of finite" + (positive ? " positive" : "") + " numbers");
  }
  return lim;
}

/// A single value widened to a range (matplotlib's nonsingular()).
std::pair<double, double> widen_single(double lo, double hi) {
  if (hi - lo > 1e-12 * std::max(std::abs(lo), std::abs(hi))) return {lo, hi};
  double const w = lo == 0 ? 0.05 : 0.05 * std::abs(lo);
  return {lo - w, hi + w};
}

/// Minus written as matplotlib writes it.
std::string exponent_text(int e) { return e < 0 ? "\u2212" + std::to_string(-e) : std::to_string(e); }

/// Width of a label with an optional superscript.
double label_width(canvas const& m, std::string const& text, std::string const& sup) {
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
void log_ticks(plot_layout& L, double lo, double hi, int nbins) {
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
    while (static_cast<int>((decades.size() + static_cast<std::size_t>(stride) - 1) /
                            static_cast<std::size_t>(stride)) > std::max(nbins, 2)) {
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
  static constexpr std::array<std::array<int, 9>, 4> subsets{{{1, 2, 3, 4, 5, 6, 7, 8, 9},
                                                              {1, 2, 5, 0, 0, 0, 0, 0, 0},
                                                              {1, 3, 0, 0, 0, 0, 0, 0, 0},
                                                              {1, 0, 0, 0, 0, 0, 0, 0, 0}}};
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
bool segment_meets(rect const& r, double x0, double y0, double x1, double y1) {
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

legend_metrics legend_metrics_of(canvas const& m) {
  legend_metrics g;
  m.font(style::legend_font);
  g.row = m.cap_height() + m.descent();
  return g;
}

/// Checks the series and options and lays the figure out.
plot_layout layout_plot_data(std::vector<series> const& lines, plot_options const& o) {
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
        throw value_error("plot: log_y needs positive y values, but " + series_name(lines, s) +
                          " has y = " + format_number(l.y[i], 6) + " at index " + std::to_string(i));
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
    double const bottom =
        o.height - style::margin - xtick_block - (o.xlabel.empty() && !room_x ? 0 : style::label_pad + label_thick);
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
      ytick_w = std::max(ytick_w,
                         label_width(m, L.yticks.labels[i], L.y_exponents.empty() ? std::string{} : L.y_exponents[i]));
    }
    double left = style::margin + (o.ylabel.empty() ? 0 : label_thick + style::label_pad) + ytick_w + style::tick_pad +
                  style::tick_length + style::frame_width / 2;
    double right = o.width - style::margin;
    // x tick labels are centred on their ticks: keep the first and the last inside the figure.
    for (int pass = 0; pass < 2; ++pass) {
      L.axes = {std::round(left), std::round(top), std::round(right) - std::round(left),
                std::round(bottom) - std::round(top)};
      if (L.axes.width < 20) throw value_error("plot: the figure is too narrow for its labels");
      L.xticks = fit_ticks(m, L.x_low, L.x_high, L.axes.width, true, false);
      if (L.xticks.values.empty()) break;
      m.font(style::tick_font);
      double const over_right =
          L.x_pixel(L.xticks.values.back()) + m.text_width(L.xticks.labels.back()) / 2 - (o.width - style::margin);
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
    std::array<rect, 10> const places{{{xr, yt, w, h},
                                       {xl, yt, w, h},
                                       {xl, yb, w, h},
                                       {xr, yb, w, h},
                                       {xr, yc, w, h},
                                       {xl, yc, w, h},
                                       {xr, yc, w, h},
                                       {xc, yb, w, h},
                                       {xc, yt, w, h},
                                       {xc, yc, w, h}}};
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
void line_style(cairo_t* cr, series::style kind) {
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
void marker(canvas const& c, double x, double y, rgb const& color) {
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
void y_label_with_exponent(canvas const& c, std::string const& text, std::string const& sup, double x, double y) {
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

}  // namespace
}  // namespace detail

plot_layout layout_plot(std::vector<series> const& lines, plot_options const& options) {
  return detail::layout_plot_data(lines, options);
}

void plot(std::vector<series> const& lines, std::filesystem::path const& file, plot_options const& options) {
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
        if (std::isfinite(l.x[i]) && std::isfinite(l.y[i]))
          marker(c, L.x_pixel(l.x[i]), L.y_pixel(l.y[i]), L.colors[s]);
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
    ytick_w =
        std::max(ytick_w, label_width(c, L.yticks.labels[i], L.y_exponents.empty() ? std::string{} : L.y_exponents[i]));
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

}  // namespace dimtensor::viz
