#pragma once
// Test support for the viz tests: a PNG read back with cairo, its pixels as
// 8-bit colours, and viz's colours in the same terms.  Only the viz tests,
// built where cairo is, include it.
#include <catch2/catch.hpp>

#include <cairo.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <dimtensor/viz/figure.hpp>

namespace test_support {

// A colour as 8-bit components.
struct rgb8 {
  int r, g, b;
};

// A PNG read back with cairo; pixels as 8-bit components (the figures are opaque).
struct png {
  cairo_surface_t* surface;
  explicit png(std::filesystem::path const& p) : surface(cairo_image_surface_create_from_png(p.c_str())) {
    REQUIRE(cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS);
    cairo_surface_flush(surface);
  }
  ~png() { cairo_surface_destroy(surface); }
  png(png const&) = delete;
  png& operator=(png const&) = delete;
  int width() const { return cairo_image_surface_get_width(surface); }
  int height() const { return cairo_image_surface_get_height(surface); }
  rgb8 at(double x, double y) const {
    auto const ix = static_cast<int>(std::floor(x));
    auto const iy = static_cast<int>(std::floor(y));
    REQUIRE(ix >= 0);
    REQUIRE(iy >= 0);
    REQUIRE(ix < width());
    REQUIRE(iy < height());
    auto const* row = cairo_image_surface_get_data(surface) + iy * cairo_image_surface_get_stride(surface);
    std::uint32_t const px = reinterpret_cast<std::uint32_t const*>(row)[ix];
    return {static_cast<int>((px >> 16) & 0xff), static_cast<int>((px >> 8) & 0xff), static_cast<int>(px & 0xff)};
  }
};

// viz's colour, rounded to 8-bit components as a PNG stores it.
inline rgb8 bytes(dimtensor::viz::rgb const& c) {
  return {static_cast<int>(std::lround(c.r * 255)), static_cast<int>(std::lround(c.g * 255)),
          static_cast<int>(std::lround(c.b * 255))};
}

// Whether two colours agree within a tolerance per component: the one given,
// or the default of the test file's own object (each figure's rendering
// has its own slack), e.g. `constexpr near_colours near{1};`.
struct near_colours {
  int default_tolerance;
  bool operator()(rgb8 a, rgb8 b) const { return (*this)(a, b, default_tolerance); }
  bool operator()(rgb8 a, rgb8 b, int tol) const {
    return std::abs(a.r - b.r) <= tol && std::abs(a.g - b.g) <= tol && std::abs(a.b - b.b) <= tol;
  }
};

// "(r, g, b)", for messages.
inline std::string str(rgb8 c) {
  return "(" + std::to_string(c.r) + ", " + std::to_string(c.g) + ", " + std::to_string(c.b) + ")";
}

}  // namespace test_support
