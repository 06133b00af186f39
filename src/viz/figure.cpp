// The non-template part of include/dimtensor/viz/figure.hpp (colours,
// colormaps, tick placement and labels, file formats) and the drawing
// helpers of src/viz/canvas.hpp, compiled once into dimtensor::viz.
#include <dimtensor/viz/figure.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>

#include "canvas.hpp"

namespace dimtensor::viz {

rgb parse_color(std::string_view text, std::string_view op) {
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

file_format format_of(std::filesystem::path const& file, std::string_view op) {
  std::string ext = file.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  if (ext == ".png") return file_format::png;
  if (ext == ".svg") return file_format::svg;
  if (ext == ".pdf") return file_format::pdf;
  throw value_error(std::string(op) + ": cannot write \"" + file.string() + "\": unsupported extension \"" +
                    file.extension().string() + "\" (use .png, .svg or .pdf)");
}

colormap::colormap(std::string name, std::vector<std::pair<double, rgb>> const& stops) : name_(std::move(name)) {
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

colormap colormap::named(std::string_view name, std::string_view op) {
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
        {0, 0.267004, 0.004874, 0.329415},
        {16, 0.282327, 0.094955, 0.417331},
        {32, 0.278826, 0.175490, 0.483397},
        {48, 0.258965, 0.251537, 0.524736},
        {64, 0.229739, 0.322361, 0.545706},
        {80, 0.199430, 0.387607, 0.554642},
        {96, 0.172719, 0.448791, 0.557885},
        {112, 0.149039, 0.508051, 0.557250},
        {128, 0.127568, 0.566949, 0.550556},
        {144, 0.120638, 0.625828, 0.533488},
        {160, 0.157851, 0.683765, 0.501686},
        {176, 0.246070, 0.738910, 0.452024},
        {192, 0.369214, 0.788888, 0.382914},
        {208, 0.515992, 0.831158, 0.294279},
        {224, 0.678489, 0.863742, 0.189503},
        {240, 0.845561, 0.887322, 0.099702},
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

std::vector<std::string> colormap::names() { return {"Reds", "Blues", "Greens", "Greys", "Oranges", "viridis"}; }

std::string const& colormap::name() const noexcept { return name_; }

rgb colormap::operator()(double t) const noexcept {
  if (!(t > 0)) return lut_.front();
  if (t >= 1) return lut_.back();
  return lut_[std::min(size - 1, static_cast<std::size_t>(t * static_cast<double>(size)))];
}

rgb const& colormap::entry(std::size_t i) const noexcept { return lut_[i]; }

std::vector<double> nice_ticks(double lo, double hi, int max_intervals, bool integer_only) {
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

std::string format_number(double v, int decimals) {
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

int tick_exponent(std::vector<double> const& ticks) {
  double big = 0;
  for (double t : ticks) big = std::max(big, std::abs(t));
  if (!(big > 0) || !std::isfinite(big)) return 0;
  auto const oom = static_cast<int>(std::floor(std::log10(big) + 1e-12));
  return oom >= 6 || oom <= -5 ? oom : 0;
}

std::vector<std::string> format_ticks(std::vector<double> const& ticks) {
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

std::string exponent_label(int exponent) {
  if (exponent == 0) return {};
  return "1e" + (exponent < 0 ? "\u2212" + std::to_string(-exponent) : std::to_string(exponent));
}

namespace detail {

axis_ticks fit_ticks(canvas const& m, double lo, double hi, double length, bool horizontal, bool integer_only) {
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

double widest(canvas const& m, std::vector<std::string> const& labels) {
  m.font(style::tick_font);
  double w = 0;
  for (auto const& l : labels) w = std::max(w, m.text_width(l));
  return w;
}

void draw_x_ticks(canvas const& c, rect const& r, std::vector<double> const& px,
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

void draw_y_ticks(canvas const& c, rect const& r, std::vector<double> const& py, std::vector<std::string> const& labels,
                  bool right_side) {
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
