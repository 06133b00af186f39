#pragma once
/// @file
/// @brief What the pictures of `dimtensor::viz` share: colours and colormaps,
/// matplotlib's tick placement and labels, and the cairo canvas that writes
/// PNG, SVG or PDF by the file's extension.
///
/// Geometry is in pixels of a 100 dpi figure (a PNG has exactly that many
/// pixels; SVG and PDF have the same physical size, 72 points per inch).
/// Font sizes and line widths follow matplotlib's defaults, given in points
/// and converted (`detail::pt`).

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>

#include <dimtensor/core/error.hpp>

namespace dimtensor::viz {

/// @brief An sRGB colour, each component in [0, 1].
struct rgb {
  /// Red.
  double r = 0;
  /// Green.
  double g = 0;
  /// Blue.
  double b = 0;

  /// Exact comparison (colours built from the same numbers compare equal).
  friend constexpr bool operator==(rgb const&, rgb const&) = default;
};

/// The colour `0xRRGGBB`.
constexpr rgb hex_rgb(std::uint32_t hex) noexcept {
  return {static_cast<double>((hex >> 16) & 0xffU) / 255.0, static_cast<double>((hex >> 8) & 0xffU) / 255.0,
          static_cast<double>(hex & 0xffU) / 255.0};
}

/// matplotlib's default colour cycle (`tab10`): the colours of successive line series.
inline constexpr std::array<rgb, 10> tab10{hex_rgb(0x1f77b4), hex_rgb(0xff7f0e), hex_rgb(0x2ca02c), hex_rgb(0xd62728),
                                           hex_rgb(0x9467bd), hex_rgb(0x8c564b), hex_rgb(0xe377c2), hex_rgb(0x7f7f7f),
                                           hex_rgb(0xbcbd22), hex_rgb(0x17becf)};

/// @brief A colour from its text: `#rrggbb`, or `C0` … `C9` for the tab10
/// colours (matplotlib's spelling); anything else is a `value_error` naming @p op.
inline rgb parse_color(std::string_view text, std::string_view op = "parse_color") {
  if (text.size() == 2 && text[0] == 'C' && text[1] >= '0' && text[1] <= '9') {
    return tab10[static_cast<std::size_t>(text[1] - '0')];
  }
  std::uint32_t hex = 0;
  if (text.size() == 7 && text[0] == '#') {
    auto const* const first = text.data() + 1;
    auto const* const last = text.data() + text.size();
    auto const r = std::from_chars(first, last, hex, 16);
    if (r.ec == std::errc{} && r.ptr == last) return hex_rgb(hex);
  }
  throw value_error(std::string(op) + ": unknown colour \"" + std::string(text) +
                    "\" (use \"#rrggbb\" or \"C0\" to \"C9\")");
}

/// @brief A rectangle in figure pixels, origin at the top left, y downwards.
struct rect {
  /// Left edge.
  double x = 0;
  /// Top edge.
  double y = 0;
  /// Width.
  double width = 0;
  /// Height.
  double height = 0;

  /// Right edge.
  constexpr double right() const noexcept { return x + width; }
  /// Bottom edge.
  constexpr double bottom() const noexcept { return y + height; }
  /// Horizontal centre.
  constexpr double center_x() const noexcept { return x + width / 2; }
  /// Vertical centre.
  constexpr double center_y() const noexcept { return y + height / 2; }
  /// Whether the point lies inside (edges included).
  constexpr bool contains(double px, double py) const noexcept {
    return px >= x && px <= right() && py >= y && py <= bottom();
  }
};

/// The file formats a picture is written in, chosen by the file's extension.
enum class file_format {
  png,  ///< `.png`: a raster image of the figure's pixels
  svg,  ///< `.svg`: vector, text as glyph outlines
  pdf   ///< `.pdf`: vector, text as embedded fonts
};

/// @brief The format for @p file's extension (`.png`, `.svg` or `.pdf`, in
/// any case); any other is a `value_error` naming @p op, the path and the
/// allowed extensions.
inline file_format format_of(std::filesystem::path const& file, std::string_view op) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  if (ext == ".png") return file_format::png;
  if (ext == ".svg") return file_format::svg;
  if (ext == ".pdf") return file_format::pdf;
  throw value_error(std::string(op) + ": cannot write \"" + file.string() + "\": unsupported extension \"" +
                    file.extension().string() + "\" (use .png, .svg or .pdf)");
}

/// @brief A colormap: a colour for every value in [0, 1], as matplotlib
/// computes it — a table of 256 colours (matplotlib's N), entry i being the
/// linear interpolation of the control points at i / 255, and the value t
/// taking entry ⌊256 t⌋ (255 for t = 1).
class colormap {
 public:
  /// Entries of the table.
  static constexpr std::size_t size = 256;

  /// @brief A colormap interpolating between (position, colour) control
  /// points; positions increase from 0 to 1.
  colormap(std::string name, std::vector<std::pair<double, rgb>> const& stops) : name_(std::move(name)) {
    for (std::size_t i = 0; i < size; ++i) {
      double const t = static_cast<double>(i) / static_cast<double>(size - 1);
      std::size_t k = 1;
      while (k + 1 < stops.size() && stops[k].first < t) ++k;
      auto const& [t0, c0] = stops[k - 1];
      auto const& [t1, c1] = stops[k];
      double const f = t1 > t0 ? std::clamp((t - t0) / (t1 - t0), 0.0, 1.0) : 0.0;
      lut_[i] = {c0.r + f * (c1.r - c0.r), c0.g + f * (c1.g - c0.g), c0.b + f * (c1.b - c0.b)};
    }
  }

  /// @brief A colormap by matplotlib's name: `Reds` (d2l's default),
  /// `Blues`, `Greens`, `Greys`, `Oranges`, `viridis`, each also reversed
  /// with `_r` (`Reds_r`).  An unknown name is a `value_error` naming @p op
  /// and the known names.
  static colormap named(std::string_view name, std::string_view op = "colormap") {
    bool const reversed = name.size() > 2 && name.substr(name.size() - 2) == "_r";
    std::string_view const base = reversed ? name.substr(0, name.size() - 2) : name;
    std::vector<std::pair<double, rgb>> stops;
    auto brewer = [&](std::array<std::uint32_t, 9> const& hex) {
      for (std::size_t i = 0; i < hex.size(); ++i) stops.emplace_back(static_cast<double>(i) / 8.0, hex_rgb(hex[i]));
    };
    // ColorBrewer's 9-class sequential schemes, as matplotlib's _cm.py lists them.
    if (base == "Reds") {
      brewer({0xfff5f0, 0xfee0d2, 0xfcbba1, 0xfc9272, 0xfb6a4a, 0xef3b2c, 0xcb181d, 0xa50f15, 0x67000d});
    } else if (base == "Blues") {
      brewer({0xf7fbff, 0xdeebf7, 0xc6dbef, 0x9ecae1, 0x6baed6, 0x4292c6, 0x2171b5, 0x08519c, 0x08306b});
    } else if (base == "Greens") {
      brewer({0xf7fcf5, 0xe5f5e0, 0xc7e9c0, 0xa1d99b, 0x74c476, 0x41ab5d, 0x238b45, 0x006d2c, 0x00441b});
    } else if (base == "Greys") {
      brewer({0xffffff, 0xf0f0f0, 0xd9d9d9, 0xbdbdbd, 0x969696, 0x737373, 0x525252, 0x252525, 0x000000});
    } else if (base == "Oranges") {
      brewer({0xfff5eb, 0xfee6ce, 0xfdd0a2, 0xfdae6b, 0xfd8d3c, 0xf16913, 0xd94801, 0xa63603, 0x7f2704});
    } else if (base == "viridis") {
      // Every 16th entry of viridis' 256-entry table, and the last.
      static constexpr std::array<std::array<double, 4>, 17> v{{
          {0, 0.267004, 0.004874, 0.329415},   {16, 0.282327, 0.094955, 0.417331},
          {32, 0.278826, 0.175490, 0.483397},  {48, 0.258965, 0.251537, 0.524736},
          {64, 0.229739, 0.322361, 0.545706},  {80, 0.199430, 0.387607, 0.554642},
          {96, 0.172719, 0.448791, 0.557885},  {112, 0.149039, 0.508051, 0.557250},
          {128, 0.127568, 0.566949, 0.550556}, {144, 0.120638, 0.625828, 0.533488},
          {160, 0.157851, 0.683765, 0.501686}, {176, 0.246070, 0.738910, 0.452024},
          {192, 0.369214, 0.788888, 0.382914}, {208, 0.515992, 0.831158, 0.294279},
          {224, 0.678489, 0.863742, 0.189503}, {240, 0.845561, 0.887322, 0.099702},
          {255, 0.993248, 0.906157, 0.143936},
      }};
      for (auto const& e : v) stops.emplace_back(e[0] / 255.0, rgb{e[1], e[2], e[3]});
    } else {
      std::string known;
      for (auto const& n : names()) known += (known.empty() ? "" : ", ") + n;
      throw value_error(std::string(op) + ": unknown colormap \"" + std::string(name) + "\" (known: " + known +
                        ", each also reversed with _r)");
    }
    if (reversed) {
      std::reverse(stops.begin(), stops.end());
      for (auto& s : stops) s.first = 1.0 - s.first;
    }
    return colormap(std::string(name), stops);
  }

  /// The names `named` knows (without the `_r` variants).
  static std::vector<std::string> names() { return {"Reds", "Blues", "Greens", "Greys", "Oranges", "viridis"}; }

  /// The name it was made with.
  std::string const& name() const noexcept { return name_; }

  /// The colour of @p t, clamped to [0, 1] (NaN gives the bottom colour).
  rgb operator()(double t) const noexcept {
    if (!(t > 0)) return lut_.front();
    if (t >= 1) return lut_.back();
    return lut_[std::min(size - 1, static_cast<std::size_t>(t * static_cast<double>(size)))];
  }

  /// Entry @p i of the table (0: the bottom colour, 255: the top colour).
  rgb const& entry(std::size_t i) const noexcept { return lut_[i]; }

 private:
  std::string name_;
  std::array<rgb, size> lut_{};
};

/// @brief Tick positions as matplotlib's `MaxNLocator` (the default
/// `AutoLocator`) places them: multiples of the smallest "nice" step
/// (1, 2, 2.5 or 5 times a power of ten) that splits [lo, hi] into at most
/// @p max_intervals intervals, then smaller steps while fewer than two
/// ticks fall inside.
///
/// @p integer_only keeps integral steps only (tick positions that are
/// indices).  The ticks returned lie in [lo, hi]; an empty or reversed range
/// gives none.
inline std::vector<double> nice_ticks(double lo, double hi, int max_intervals, bool integer_only = false) {
  if (!(lo <= hi) || !std::isfinite(lo) || !std::isfinite(hi)) return {};
  auto multiples = [&](double step) {
    std::vector<double> ticks;
    double const eps = 1e-9;
    auto const first = static_cast<long long>(std::ceil(lo / step - eps));
    auto const last = static_cast<long long>(std::floor(hi / step + eps));
    for (long long k = first; k <= last; ++k) {
      double const v = static_cast<double>(k) * step;
      ticks.push_back(std::abs(v) < step * eps ? 0.0 : v);
    }
    return ticks;
  };
  if (hi - lo <= std::max(std::abs(lo), std::abs(hi)) * 1e-12) {
    if (!integer_only || lo == std::round(lo)) return {lo};
    return {};
  }
  double const raw = (hi - lo) / std::max(1, max_intervals);
  double const scale = std::pow(10.0, std::floor(std::log10(raw)));
  std::vector<double> steps;
  for (double const decade : {0.1, 1.0, 10.0}) {
    for (double const m : {1.0, 2.0, 2.5, 5.0}) {
      double const s = m * scale * decade;
      if (integer_only && (s < 1 - 1e-9 || std::abs(s - std::round(s)) > 1e-9)) continue;
      steps.push_back(integer_only ? std::round(s) : s);
    }
  }
  if (integer_only) steps.push_back(1.0);
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  auto idx = static_cast<std::size_t>(std::lower_bound(steps.begin(), steps.end(), raw * (1 - 1e-9)) - steps.begin());
  idx = std::min(idx, steps.size() - 1);
  std::vector<double> ticks;
  for (std::size_t k = idx + 1; k-- > 0;) {
    ticks = multiples(steps[k]);
    if (ticks.size() >= 2) break;
  }
  return ticks;
}

/// @brief One number as a tick label: @p decimals digits after the point,
/// `−` (U+2212) for negatives as matplotlib writes it, never `−0`.
inline std::string format_number(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "\u2212inf" : "inf";
  std::array<char, 64> buf{};
  auto const r =
      std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, std::clamp(decimals, 0, 20));
  std::string s(buf.data(), r.ptr);
  if (s.front() == '-') {
    bool const zero = s.find_first_not_of("-0.") == std::string::npos;
    s = zero ? s.substr(1) : "\u2212" + s.substr(1);
  }
  return s;
}

/// @brief The power of ten matplotlib's `ScalarFormatter` factors out of
/// ticks: the order of magnitude of the largest when it is 10⁶ or more, or
/// 10⁻⁵ or less (its `axes.formatter.limits`), else 0.
inline int tick_exponent(std::vector<double> const& ticks) {
  double big = 0;
  for (double t : ticks) big = std::max(big, std::abs(t));
  if (!(big > 0) || !std::isfinite(big)) return 0;
  auto const oom = static_cast<int>(std::floor(std::log10(big) + 1e-12));
  return oom >= 6 || oom <= -5 ? oom : 0;
}

/// @brief Labels for ticks as matplotlib's `ScalarFormatter` writes them:
/// the ticks divided by 10^`tick_exponent(ticks)` (which is then shown once,
/// beside the axis), one number of decimals for all, the fewest that tells
/// every tick exactly (`0`, `5`, `10`; `0.0`, `0.5`; `0.25`).
inline std::vector<std::string> format_ticks(std::vector<double> const& ticks) {
  double const scale = std::pow(10.0, -tick_exponent(ticks));
  int decimals = 0;
  for (; decimals < 10; ++decimals) {
    double const f = std::pow(10.0, decimals) * scale;
    bool const exact = std::all_of(ticks.begin(), ticks.end(), [&](double t) {
      return std::abs(t * f - std::round(t * f)) <= 1e-6 * std::max(1.0, std::abs(t * f));
    });
    if (exact) break;
  }
  std::vector<std::string> out;
  for (double t : ticks) out.push_back(format_number(t * scale, decimals));
  return out;
}

/// @brief The factor shown beside an axis whose labels are scaled by
/// 10^@p exponent, as matplotlib writes it (`1e6`, `1e−5`); empty for 0.
inline std::string exponent_label(int exponent) {
  if (exponent == 0) return {};
  return "1e" + (exponent < 0 ? "\u2212" + std::to_string(-exponent) : std::to_string(exponent));
}

/// @brief Ticks of an axis: the positions and their labels.
struct axis_ticks {
  /// Positions in data units.
  std::vector<double> values;
  /// One label per position.
  std::vector<std::string> labels;
  /// The factor the labels leave out (`1e6`), shown once beside the axis; empty when none.
  std::string multiplier;
};

namespace detail {

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
  static constexpr double tick_pad = 3.5 * pt;   ///< between a tick and its label
  static constexpr double label_pad = 4 * pt;    ///< between tick labels and the axis label
  static constexpr double title_pad = 6 * pt;    ///< between the axes and its title
  static constexpr double frame_width = 0.8 * pt;
  static constexpr double line_width = 1.5 * pt;
  static constexpr double marker_size = 6 * pt;  ///< diameter of an `o` marker
  static constexpr double marker_edge = 1 * pt;
  static constexpr double grid_width = 0.8 * pt;
  static constexpr double margin = 8;            ///< around everything drawn
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
      case valign::top: dy = cap_height(); break;
      case valign::center: dy = cap_height() / 2; break;
      case valign::baseline: dy = 0; break;
      case valign::bottom: dy = -descent(); break;
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
inline axis_ticks fit_ticks(canvas const& m, double lo, double hi, double length, bool horizontal, bool integer_only) {
  m.font(style::tick_font);
  // Start dense (two font sizes per label) and thin out while labels would touch.
  double const per_label = 2.0 * style::tick_font;
  int nbins = std::clamp(static_cast<int>(length / per_label), 1, 9);
  axis_ticks t;
  for (;; --nbins) {
    t.values = nice_ticks(lo, hi, nbins, integer_only);
    if (integer_only) {  // indices: whole numbers, however large
      t.labels.clear();
      for (double v : t.values) t.labels.push_back(format_number(v, 0));
    } else {
      t.labels = format_ticks(t.values);
      t.multiplier = exponent_label(tick_exponent(t.values));
    }
    if (nbins == 1 || t.values.size() < 2) break;
    double const pitch = length * (t.values[1] - t.values[0]) / (hi - lo);
    double need = 0;
    for (auto const& l : t.labels) {
      need = std::max(need, horizontal ? m.text_width(l) : m.cap_height());
    }
    if (pitch >= need + (horizontal ? 0.8 : 0.6) * style::tick_font) break;
  }
  return t;
}

/// The widest label of @p t in the tick font.
inline double widest(canvas const& m, std::vector<std::string> const& labels) {
  m.font(style::tick_font);
  double w = 0;
  for (auto const& l : labels) w = std::max(w, m.text_width(l));
  return w;
}

/// @brief x ticks below axes @p r: marks at pixel positions @p px, and the
/// labels when @p labels is not empty.
inline void draw_x_ticks(canvas const& c, rect const& r, std::vector<double> const& px,
                         std::vector<std::string> const& labels) {
  double const y0 = r.bottom() + style::frame_width / 2;
  for (std::size_t i = 0; i < px.size(); ++i) {
    c.line(px[i], y0, px[i], y0 + style::tick_length, style::tick_width, {0, 0, 0});
    if (!labels.empty()) {
      c.font(style::tick_font);
      c.text(labels[i], px[i], y0 + style::tick_length + style::tick_pad, halign::center, valign::top);
    }
  }
}

/// @brief y ticks left (or, with @p right_side, right) of axes @p r: marks
/// at pixel positions @p py, and the labels when @p labels is not empty.
inline void draw_y_ticks(canvas const& c, rect const& r, std::vector<double> const& py,
                         std::vector<std::string> const& labels, bool right_side = false) {
  double const x0 = right_side ? r.right() + style::frame_width / 2 : r.x - style::frame_width / 2;
  double const dir = right_side ? 1.0 : -1.0;
  for (std::size_t i = 0; i < py.size(); ++i) {
    c.line(x0, py[i], x0 + dir * style::tick_length, py[i], style::tick_width, {0, 0, 0});
    if (!labels.empty()) {
      c.font(style::tick_font);
      c.text(labels[i], x0 + dir * (style::tick_length + style::tick_pad), py[i],
             right_side ? halign::left : halign::right, valign::center);
    }
  }
}

}  // namespace detail
}  // namespace dimtensor::viz
