#pragma once
/// @file
/// @brief What the pictures of `dimtensor::viz` share: colours and colormaps,
/// matplotlib's tick placement and labels, and the file formats (PNG, SVG or
/// PDF by the file's extension).  The drawing itself, with cairo, is compiled
/// into `dimtensor::viz` (src/viz/).
///
/// Geometry is in pixels of a 100 dpi figure (a PNG has exactly that many
/// pixels; SVG and PDF have the same physical size, 72 points per inch).
/// Font sizes and line widths follow matplotlib's defaults, given in points.

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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
rgb parse_color(std::string_view text, std::string_view op = "parse_color");

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
file_format format_of(std::filesystem::path const& file, std::string_view op);

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
  colormap(std::string name, std::vector<std::pair<double, rgb>> const& stops);

  /// @brief A colormap by matplotlib's name: `Reds` (d2l's default),
  /// `Blues`, `Greens`, `Greys`, `Oranges`, `viridis`, each also reversed
  /// with `_r` (`Reds_r`).  An unknown name is a `value_error` naming @p op
  /// and the known names.
  static colormap named(std::string_view name, std::string_view op = "colormap");

  /// The names `named` knows (without the `_r` variants).
  static std::vector<std::string> names();

  /// The name it was made with.
  std::string const& name() const noexcept;

  /// The colour of @p t, clamped to [0, 1] (NaN gives the bottom colour).
  rgb operator()(double t) const noexcept;

  /// Entry @p i of the table (0: the bottom colour, 255: the top colour).
  rgb const& entry(std::size_t i) const noexcept;

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
std::vector<double> nice_ticks(double lo, double hi, int max_intervals, bool integer_only = false);

/// @brief One number as a tick label: @p decimals digits after the point,
/// `−` (U+2212) for negatives as matplotlib writes it, never `−0`.
std::string format_number(double v, int decimals);

/// @brief The power of ten matplotlib's `ScalarFormatter` factors out of
/// ticks: the order of magnitude of the largest when it is 10⁶ or more, or
/// 10⁻⁵ or less (its `axes.formatter.limits`), else 0.
int tick_exponent(std::vector<double> const& ticks);

/// @brief Labels for ticks as matplotlib's `ScalarFormatter` writes them:
/// the ticks divided by 10^`tick_exponent(ticks)` (which is then shown once,
/// beside the axis), one number of decimals for all, the fewest that tells
/// every tick exactly (`0`, `5`, `10`; `0.0`, `0.5`; `0.25`).
std::vector<std::string> format_ticks(std::vector<double> const& ticks);

/// @brief The factor shown beside an axis whose labels are scaled by
/// 10^@p exponent, as matplotlib writes it (`1e6`, `1e−5`); empty for 0.
std::string exponent_label(int exponent);

/// @brief Ticks of an axis: the positions and their labels.
struct axis_ticks {
  /// Positions in data units.
  std::vector<double> values;
  /// One label per position.
  std::vector<std::string> labels;
  /// The factor the labels leave out (`1e6`), shown once beside the axis; empty when none.
  std::string multiplier;
};

}  // namespace dimtensor::viz
