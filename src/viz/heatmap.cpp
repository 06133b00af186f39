// The non-template part of include/dimtensor/viz/heatmap.hpp: the layout
// and the cairo drawing of show_heatmaps and show_heatmap, compiled once
// into dimtensor::viz.
#include <dimtensor/viz/heatmap.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/viz/figure.hpp>

#include "canvas.hpp"

namespace dimtensor::viz {

rect heatmap_layout::cell(index_t row, index_t col, index_t y, index_t x) const {
  rect const& a = axes[static_cast<std::size_t>(row * cols + col)];
  return {a.x + static_cast<double>(x) * cell_size, a.y + static_cast<double>(y) * cell_size, cell_size, cell_size};
}

double heatmap_layout::colorbar_y(double v) const {
  return colorbar.bottom() - (v - bar_low) / (bar_high - bar_low) * colorbar.height;
}

namespace detail {
namespace {

/// The automatic cell side for a matrix whose longer side has @p n cells.
double auto_cell_size(index_t n) {
  if (n <= 66) return std::floor(200.0 / static_cast<double>(n));
  if (n <= 400) return 3.0;
  return 1200.0 / static_cast<double>(n);
}

/// Byte of a colour component.
std::uint32_t byte_of(double c) { return static_cast<std::uint32_t>(std::lround(std::clamp(c, 0.0, 1.0) * 255)); }

/// @brief Paints over @p r a @p w × @p h grid of sharp blocks, block
/// (x, y) in colour @p color_at(x, y), as one image (what matplotlib's
/// imshow embeds).  PNG and PDF keep the blocks sharp (cairo marks the PDF
/// image not to be interpolated); SVG cannot say so, so there each block
/// is repeated over as many image pixels as it covers.
template <class F>
void paint_blocks(canvas const& c, rect const& r, int w, int h, F const& color_at) {
  double const sx = r.width / w;
  double const sy = r.height / h;
  bool const upscale = c.format() == file_format::svg;
  int const kx = upscale ? std::clamp(static_cast<int>(std::ceil(sx)), 1, std::max(1, 4096 / w)) : 1;
  int const ky = upscale ? std::clamp(static_cast<int>(std::ceil(sy)), 1, std::max(1, 4096 / h)) : 1;
  cairo_surface_t* const img = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w * kx, h * ky);
  cairo_surface_flush(img);
  unsigned char* const data = cairo_image_surface_get_data(img);
  int const stride = cairo_image_surface_get_stride(img);
  if (data != nullptr) {
    for (int y = 0; y < h * ky; ++y) {
      auto* const row = reinterpret_cast<std::uint32_t*>(data + static_cast<std::ptrdiff_t>(y) * stride);
      for (int x = 0; x < w; ++x) {
        rgb const col = color_at(x, y / ky);
        std::uint32_t const px = 0xff000000U | (byte_of(col.r) << 16) | (byte_of(col.g) << 8) | byte_of(col.b);
        for (int k = 0; k < kx; ++k) row[x * kx + k] = px;
      }
    }
  }
  cairo_surface_mark_dirty(img);
  cairo_t* const cr = c.cr();
  cairo_save(cr);
  cairo_rectangle(cr, r.x, r.y, r.width, r.height);
  cairo_clip(cr);
  cairo_translate(cr, r.x, r.y);
  cairo_scale(cr, sx / kx, sy / ky);
  cairo_set_source_surface(cr, img, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
  cairo_surface_destroy(img);
}

}  // namespace

/// Checks the data and options and lays the figure out.
heatmap_layout layout_heatmap_data(std::string_view op, heatmap_data const& d, heatmap_options const& o) {
  auto const [rows, cols, ny, nx] = d.extents;
  if (rows * cols * ny * nx == 0) {
    throw value_error(std::string(op) + ": nothing to draw: the " +
                      (op == "show_heatmap" ? "matrix " + d.shape + " has" : "matrices " + d.shape + " have") +
                      " no elements");
  }
  if (!o.titles.empty() && static_cast<index_t>(o.titles.size()) != cols) {
    throw value_error(std::string(op) + ": " + std::to_string(o.titles.size()) + " titles for a grid of " +
                      std::to_string(cols) + " columns " + d.shape + " (give one per column, or none)");
  }
  if (!(o.cell_size >= 0) || !std::isfinite(o.cell_size)) {
    throw value_error(std::string(op) + ": cell_size " + std::to_string(o.cell_size) +
                      " is not a size (give a positive number of pixels, or 0 to choose it)");
  }
  (void)colormap::named(o.cmap, op);  // an unknown name fails before any work

  heatmap_layout L;
  L.rows = rows;
  L.cols = cols;
  L.ny = ny;
  L.nx = nx;
  L.xlabel = o.xlabel.empty() ? d.x_name : o.xlabel;
  L.ylabel = o.ylabel.empty() ? d.y_name : o.ylabel;

  // The colour range: shared by every heatmap of the grid, over finite elements only.
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (double v : d.values) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (lo > hi) {
    lo = 0;
    hi = 1;
  }
  for (auto const& [name, given] : {std::pair{"vmin", o.vmin}, std::pair{"vmax", o.vmax}}) {
    if (given && !std::isfinite(*given)) {
      throw value_error(std::string(op) + ": " + name + " " + std::to_string(*given) + " is not a finite number");
    }
  }
  L.vmin = o.vmin.value_or(o.vmax ? std::min(lo, *o.vmax) : lo);
  L.vmax = o.vmax.value_or(o.vmin ? std::max(hi, *o.vmin) : hi);
  if (L.vmin > L.vmax) {
    throw value_error(std::string(op) + ": vmin " + format_number(L.vmin, 6) + " is above vmax " +
                      format_number(L.vmax, 6));
  }
  L.bar_low = L.vmin;
  L.bar_high = L.vmax;
  if (L.bar_high - L.bar_low <= 1e-12 * std::max(std::abs(L.bar_low), std::abs(L.bar_high))) {
    // matplotlib's nonsingular(): a constant range is widened by 10% (or ±0.1 about 0).
    double const w = L.vmin == 0 ? 0.1 : 0.1 * std::abs(L.vmin);
    L.bar_low = L.vmin - w;
    L.bar_high = L.vmax + w;
  }

  canvas const m{measure_only_t{}};
  double const cell = o.cell_size > 0 ? o.cell_size : auto_cell_size(std::max(nx, ny));
  L.cell_size = cell;
  double const img_w = static_cast<double>(nx) * cell;
  double const img_h = static_cast<double>(ny) * cell;
  L.xticks = fit_ticks(m, -0.5, static_cast<double>(nx) - 0.5, img_w, true, true);
  L.yticks = fit_ticks(m, -0.5, static_cast<double>(ny) - 0.5, img_h, false, true);

  m.font(style::tick_font);
  double const tick_cap = m.cap_height();
  double const ytick_block = style::frame_width / 2 + style::tick_length + style::tick_pad + widest(m, L.yticks.labels);
  double const xtick_block = style::frame_width / 2 + style::tick_length + style::tick_pad + tick_cap;
  m.font(style::label_font);
  double const label_thick = m.cap_height() + m.descent();
  double const xlabel_block = L.xlabel.empty() ? 0 : style::label_pad + label_thick;
  double const ylabel_block = L.ylabel.empty() ? 0 : style::label_pad + label_thick;
  double const xlabel_w = m.text_width(L.xlabel);
  double const ylabel_w = m.text_width(L.ylabel);
  m.font(style::title_font);
  double title_w = 0;
  for (auto const& t : o.titles) title_w = std::max(title_w, m.text_width(t));
  double const title_block =
      o.titles.empty() ? 0 : style::frame_width / 2 + style::title_pad + m.cap_height() + m.descent();

  // Slots: a column as wide as its widest image, title or x label; a row as tall as its image or y label.
  double const slot_w = std::max({img_w, title_w, xlabel_w});
  double const slot_h = std::max(img_h, ylabel_w);
  double const col_gap = style::tick_length + 16;
  double const row_gap = style::tick_length + 12 + title_block;
  double const left0 = ylabel_block + ytick_block;
  double const top0 = title_block;
  L.axes.resize(static_cast<std::size_t>(rows * cols));
  for (index_t i = 0; i < rows; ++i) {
    for (index_t j = 0; j < cols; ++j) {
      double const sx = left0 + static_cast<double>(j) * (slot_w + col_gap);
      double const sy = top0 + static_cast<double>(i) * (slot_h + row_gap);
      L.axes[static_cast<std::size_t>(i * cols + j)] = {sx + (slot_w - img_w) / 2, sy + (slot_h - img_h) / 2, img_w,
                                                        img_h};
    }
  }
  double const grid_right = left0 + static_cast<double>(cols) * slot_w + static_cast<double>(cols - 1) * col_gap;
  double const images_top = L.axes.front().y;
  double const images_bottom = L.axes.back().bottom();
  double const slots_bottom = top0 + static_cast<double>(rows) * slot_h + static_cast<double>(rows - 1) * row_gap;
  double const bottom = std::max(slots_bottom, images_bottom + xtick_block + xlabel_block);

  // One colour bar for the grid, right of it: 0.6 of the grid's height (d2l's shrink=0.6), aspect 20.
  double const bar_h = std::max(0.6 * (images_bottom - images_top), 100.0);
  double const bar_w = std::clamp(bar_h / 20, 10.0, 20.0);
  // Beside the rightmost image, not the rightmost slot: a title wider than its image overhangs above the bar.
  double images_right = 0;
  for (auto const& a : L.axes) images_right = std::max(images_right, a.right());
  L.colorbar = {images_right + 20, (images_top + images_bottom - bar_h) / 2, bar_w, bar_h};
  L.colorbar_ticks = fit_ticks(m, L.bar_low, L.bar_high, bar_h, false, false);
  double const right = std::max(grid_right, L.colorbar.right() + style::frame_width / 2 + style::tick_length +
                                                style::tick_pad + widest(m, L.colorbar_ticks.labels));
  double const multiplier_w = L.colorbar_ticks.multiplier.empty() ? 0 : m.text_width(L.colorbar_ticks.multiplier);
  double const multiplier_h = L.colorbar_ticks.multiplier.empty() ? 0 : tick_cap + m.descent() + 4;

  // Shift everything so the drawing starts a margin from the top left, and snap images to whole pixels.
  double const min_y = std::min(0.0, L.colorbar.y - std::max(tick_cap, multiplier_h + style::frame_width));
  double const max_y = std::max(bottom, L.colorbar.bottom() + tick_cap);
  double const dx = style::margin;
  double const dy = style::margin - min_y;
  auto snap = [&](rect r, bool size_too) {
    r.x = std::round(r.x + dx);
    r.y = std::round(r.y + dy);
    if (size_too) {
      r.width = std::round(r.width);
      r.height = std::round(r.height);
    }
    return r;
  };
  for (auto& a : L.axes) a = snap(a, false);
  L.colorbar = snap(L.colorbar, true);
  L.width = static_cast<int>(std::ceil(std::max(right, L.colorbar.x - dx + multiplier_w) + 2 * style::margin));
  L.height = static_cast<int>(std::ceil(max_y - min_y + 2 * style::margin));
  return L;
}

/// Draws the figure of @p d into @p file.
void draw_heatmap_data(std::string_view op, heatmap_data const& d, std::filesystem::path const& file,
                       heatmap_options const& o) {
  (void)format_of(file, op);
  heatmap_layout const L = layout_heatmap_data(op, d, o);
  colormap const cmap = colormap::named(o.cmap, op);
  canvas c(file, op, L.width, L.height);
  double const range = L.vmax - L.vmin;
  auto const nx = static_cast<int>(L.nx);
  auto const ny = static_cast<int>(L.ny);

  for (index_t i = 0; i < L.rows; ++i) {
    for (index_t j = 0; j < L.cols; ++j) {
      rect const& a = L.axes[static_cast<std::size_t>(i * L.cols + j)];
      double const* const m = d.values.data() + (i * L.cols + j) * L.ny * L.nx;
      paint_blocks(c, a, nx, ny, [&](int x, int y) {
        double const v = m[static_cast<std::ptrdiff_t>(y) * nx + x];
        if (!std::isfinite(v)) return o.invalid_color;
        return cmap(range > 0 ? (v - L.vmin) / range : 0.0);
      });
      c.frame(a);
      std::vector<double> px;
      for (double v : L.xticks.values) px.push_back(a.x + (v + 0.5) * L.cell_size);
      std::vector<double> py;
      for (double v : L.yticks.values) py.push_back(a.y + (v + 0.5) * L.cell_size);
      bool const bottom_row = i == L.rows - 1;
      bool const left_col = j == 0;
      draw_x_ticks(c, a, px, bottom_row ? L.xticks.labels : std::vector<std::string>{});
      draw_y_ticks(c, a, py, left_col ? L.yticks.labels : std::vector<std::string>{});
      c.color({0, 0, 0});
      if (!o.titles.empty()) {
        c.font(style::title_font);
        c.text(o.titles[static_cast<std::size_t>(j)], a.center_x(), a.y - style::frame_width / 2 - style::title_pad,
               halign::center, valign::bottom);
      }
      c.font(style::label_font);
      if (bottom_row) {
        c.font(style::tick_font);
        double const below =
            a.bottom() + style::frame_width / 2 + style::tick_length + style::tick_pad + c.cap_height();
        c.font(style::label_font);
        c.text(L.xlabel, a.center_x(), below + style::label_pad, halign::center, valign::top);
      }
      if (left_col) {
        double const left = a.x - style::frame_width / 2 - style::tick_length - style::tick_pad -
                            widest(c, L.yticks.labels) - style::label_pad;
        c.font(style::label_font);
        c.text(L.ylabel, left, a.center_y(), halign::center, valign::bottom, true);
      }
    }
  }

  // The colour bar: the whole colormap, one row per pixel, its top row the top colour and its bottom row the bottom
  // one.
  int const bar_rows = std::max(2, static_cast<int>(L.colorbar.height));
  paint_blocks(c, L.colorbar, 1, bar_rows,
               [&](int, int y) { return cmap(1.0 - static_cast<double>(y) / static_cast<double>(bar_rows - 1)); });
  c.frame(L.colorbar);
  std::vector<double> cy;
  for (double v : L.colorbar_ticks.values) cy.push_back(L.colorbar_y(v));
  draw_y_ticks(c, L.colorbar, cy, L.colorbar_ticks.labels, true);
  c.font(style::tick_font);
  c.text(L.colorbar_ticks.multiplier, L.colorbar.x, L.colorbar.y - style::frame_width - 4, halign::left,
         valign::bottom);
  c.finish();
}

}  // namespace detail
}  // namespace dimtensor::viz
