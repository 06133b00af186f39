#pragma once
// The cairo canvas the pictures of dimtensor::viz draw on, and the drawing
// helpers they share (matplotlib's sizes, tick placement on an axis, tick
// marks and labels).  Private to src/viz/: the public headers include no
// cairo header.
#include <dimtensor/viz/figure.hpp>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include <filesystem>
#include <numbers>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>

namespace dimtensor::viz::detail {

/// Pixels per point: the figure is 100 dpi, a point 1/72 inch.
inline constexpr double pt = 100.0 / 72.0;

/// matplotlib's default sizes (rcParams), in pixels.
struct style {
  static constexpr double tick_font = 10 * pt;    ///< xtick.labelsize: 10 pt (medium)
  static constexpr double label_font = 10 * pt;   ///< axes.labelsize: 10 pt
  static constexpr double title_font = 12 * pt;   ///< axes.titlesize: large
  static constexpr double legend_font = 10 * pt;  ///< legend.fontsize
  static constexpr double tick_length = 3.5 * pt;
  static constexpr double minor_tick_length = 2 * pt;
  static constexpr double tick_width = 0.8 * pt;
  static constexpr double tick_pad = 3.5 * pt;  ///< between a tick and its label
  static constexpr double label_pad = 4 * pt;   ///< between tick labels and the axis label
  static constexpr double title_pad = 6 * pt;   ///< between the axes and its title
  static constexpr double frame_width = 0.8 * pt;
  static constexpr double line_width = 1.5 * pt;
  static constexpr double marker_size = 6 * pt;  ///< diameter of an `o` marker
  static constexpr double marker_edge = 1 * pt;
  static constexpr double grid_width = 0.8 * pt;
  static constexpr double margin = 8;  ///< around everything drawn
};

/// The grey of grid lines (`#b0b0b0`) and of a legend's frame (`0.8`).
inline constexpr rgb grid_grey = hex_rgb(0xb0b0b0);
/// The grey of a legend's frame (matplotlib's `0.8`).
inline constexpr rgb legend_edge = {0.8, 0.8, 0.8};

/// Horizontal text alignment.
enum class halign { left, center, right };
/// Vertical text alignment: by the top of digits and capitals, their middle,
/// the baseline, or the bottom of descenders.
enum class valign { top, center, baseline, bottom };

/// Marks a canvas that only measures text.
struct measure_only_t {};

/// @brief A cairo surface and context: on a file (PNG, SVG or PDF by the
/// extension) or, for layout, a 1×1 scratch image that only measures text.
/// Units are figure pixels on every surface.
class canvas {
 public:
  /// A scratch canvas for measuring text.
  explicit canvas(measure_only_t) : surface_(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)) { init(); }

  /// @brief A canvas of @p width × @p height pixels for @p file; an SVG or
  /// PDF file is opened now (`io_error` naming @p op, the path and cairo's
  /// reason when it cannot be), a PNG written by `finish()`.
  canvas(std::filesystem::path file, std::string_view op, int width, int height, std::string_view title = {})
      : file_(std::move(file)), op_(op), format_(format_of(file_, op)) {
    double const pt_per_px = 72.0 / 100.0;
    switch (format_) {
      case file_format::png:
        surface_ = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
        break;
      case file_format::svg:
        surface_ = cairo_svg_surface_create(file_.c_str(), width * pt_per_px, height * pt_per_px);
        break;
      case file_format::pdf:
        surface_ = cairo_pdf_surface_create(file_.c_str(), width * pt_per_px, height * pt_per_px);
        if (cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS) {
          cairo_pdf_surface_set_metadata(surface_, CAIRO_PDF_METADATA_CREATOR, "dimtensor");
          if (!title.empty()) {
            cairo_pdf_surface_set_metadata(surface_, CAIRO_PDF_METADATA_TITLE, std::string(title).c_str());
          }
        }
        break;
    }
    check(cairo_surface_status(surface_));
    init();
    if (format_ != file_format::png) cairo_scale(cr_, pt_per_px, pt_per_px);
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
  }

  canvas(canvas const&) = delete;
  canvas& operator=(canvas const&) = delete;
  ~canvas() {
    if (cr_ != nullptr) cairo_destroy(cr_);
    if (surface_ != nullptr) cairo_surface_destroy(surface_);
  }

  /// The cairo context.
  cairo_t* cr() const noexcept { return cr_; }
  /// The format being written.
  file_format format() const noexcept { return format_; }

  /// Writes the file; `io_error` naming the path and cairo's reason on failure.
  void finish() {
    check(cairo_status(cr_));
    if (format_ == file_format::png) {
      cairo_surface_flush(surface_);
      check(cairo_surface_write_to_png(surface_, file_.c_str()));
    } else {
      cairo_surface_finish(surface_);
      check(cairo_surface_status(surface_));
    }
  }

  /// Sets the source colour.
  void color(rgb const& c, double alpha = 1.0) const { cairo_set_source_rgba(cr_, c.r, c.g, c.b, alpha); }

  /// Selects DejaVu Sans at @p size pixels.
  void font(double size) const {
    cairo_select_font_face(cr_, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
  }

  /// The advance width of @p s in the current font.
  double text_width(std::string const& s) const {
    cairo_text_extents_t e;
    cairo_text_extents(cr_, s.c_str(), &e);
    return e.x_advance;
  }

  /// The height of digits and capitals in the current font (what `valign::top` aligns).
  double cap_height() const {
    cairo_text_extents_t e;
    cairo_text_extents(cr_, "0", &e);
    return -e.y_bearing;
  }

  /// The depth of descenders in the current font.
  double descent() const {
    cairo_font_extents_t e;
    cairo_font_extents(cr_, &e);
    return e.descent;
  }

  /// @brief Draws @p s aligned at (@p x, @p y); @p vertical turns it a
  /// quarter counter-clockwise about that point (a y-axis label), the
  /// alignments then applying along and across the turned text.
  void text(std::string const& s, double x, double y, halign h, valign v, bool vertical = false) const {
    if (s.empty()) return;
    double const w = text_width(s);
    double dx = h == halign::left ? 0 : h == halign::center ? -w / 2 : -w;
    double dy = 0;
    switch (v) {
      case valign::top:
        dy = cap_height();
        break;
      case valign::center:
        dy = cap_height() / 2;
        break;
      case valign::baseline:
        dy = 0;
        break;
      case valign::bottom:
        dy = -descent();
        break;
    }
    cairo_save(cr_);
    cairo_translate(cr_, x, y);
    if (vertical) cairo_rotate(cr_, -std::numbers::pi / 2);
    cairo_move_to(cr_, dx, dy);
    cairo_show_text(cr_, s.c_str());
    cairo_restore(cr_);
  }

  /// A straight line of @p width in colour @p c.
  void line(double x0, double y0, double x1, double y1, double width, rgb const& c) const {
    cairo_move_to(cr_, x0, y0);
    cairo_line_to(cr_, x1, y1);
    cairo_set_line_width(cr_, width);
    cairo_set_line_cap(cr_, CAIRO_LINE_CAP_BUTT);
    color(c);
    cairo_stroke(cr_);
  }

  /// @brief The frame of axes whose inside is @p r, drawn just outside it
  /// (matplotlib's spines), so that the pixels inside stay untouched.
  void frame(rect const& r) const {
    double const w = style::frame_width;
    cairo_rectangle(cr_, r.x - w / 2, r.y - w / 2, r.width + w, r.height + w);
    cairo_set_line_width(cr_, w);
    cairo_set_line_join(cr_, CAIRO_LINE_JOIN_MITER);
    color({0, 0, 0});
    cairo_stroke(cr_);
  }

 private:
  void init() {
    cr_ = cairo_create(surface_);
    // Unhinted metrics: text measures the same on the scratch surface and on every output.
    cairo_font_options_t* const opts = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(opts, CAIRO_HINT_METRICS_OFF);
    cairo_set_font_options(cr_, opts);
    cairo_font_options_destroy(opts);
  }

  void check(cairo_status_t status) const {
    if (status != CAIRO_STATUS_SUCCESS) {
      throw io_error(std::string(op_) + ": cannot write \"" + file_.string() + "\": " + cairo_status_to_string(status));
    }
  }

  std::filesystem::path file_;
  std::string op_;
  file_format format_ = file_format::png;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

/// @brief Ticks for [lo, hi] on an axis of @p length pixels (@p horizontal:
/// labels side by side): at most one interval per two font sizes, as
/// matplotlib's `get_tick_space` allows along y, and fewer while labels
/// would come closer than about a font size apart.
axis_ticks fit_ticks(canvas const& m, double lo, double hi, double length, bool horizontal, bool integer_only);

/// The widest of @p labels in the tick font.
double widest(canvas const& m, std::vector<std::string> const& labels);

/// @brief x ticks below axes @p r: marks at pixel positions @p px, and the
/// labels when @p labels is not empty.
void draw_x_ticks(canvas const& c, rect const& r, std::vector<double> const& px,
                  std::vector<std::string> const& labels);

/// @brief y ticks left (or, with @p right_side, right) of axes @p r: marks
/// at pixel positions @p py, and the labels when @p labels is not empty.
void draw_y_ticks(canvas const& c, rect const& r, std::vector<double> const& py, std::vector<std::string> const& labels,
                  bool right_side = false);

}  // namespace dimtensor::viz::detail
