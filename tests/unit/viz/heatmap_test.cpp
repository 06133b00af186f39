#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/viz.hpp>

#include <cairo.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "unit/support/files.hpp"
#include "unit/support/png.hpp"

// Fontconfig, under cairo's toy text API, keeps its font patterns for the life
// of the process and LeakSanitizer reports them at exit; they are not ours to
// free (that needs cairo_debug_reset_static_data() and FcFini()).  One
// definition serves the whole unit-test program, the line plot tests included.
extern "C" char const* __lsan_default_suppressions() { return "leak:libfontconfig.so\n"; }

namespace heatmap_test {
namespace {

DIMTENSOR_DIM(Rows);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

namespace dt = dimtensor;
namespace viz = dimtensor::viz;
namespace fs = std::filesystem;

using namespace test_support;

// This file's directory, removed at exit.
temp_dir const& tmp() { return program_temp_dir("dimtensor_heatmap_test_"); }

// Cell colours within one step of each component, unless a check says otherwise.
constexpr near_colours near{1};

rgb8 center_of(png const& image, viz::rect const& r) { return image.at(r.center_x(), r.center_y()); }

// matplotlib's Reds control points, as written in ColorBrewer.
constexpr rgb8 reds_top{0x67, 0x00, 0x0d};
constexpr rgb8 reds_bottom{0xff, 0xf5, 0xf0};

// A 2 x 3 grid of 4 x 5 matrices: element (r, c, y, x) = 100 r + 20 c + 5 y + x.
dt::tensor<double, Rows, Heads, Queries, KVPairs> grid_values() {
  auto m = dt::zeros<double>(Rows(2), Heads(3), Queries(4), KVPairs(5));
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x) m(Rows(r), Heads(c), Queries(y), KVPairs(x)) = 100.0 * r + 20.0 * c + 5.0 * y + x;
  return m;
}

}  // namespace

TEST_CASE("colormap: Reds and viridis match matplotlib's tables", "[viz][heatmap]") {
  auto const reds = viz::colormap::named("Reds");
  CHECK(bytes(reds(0.0)).r == reds_bottom.r);
  CHECK(near(bytes(reds(0.0)), reds_bottom, 0));
  CHECK(near(bytes(reds(1.0)), reds_top, 0));
  // t = 0.5 takes entry 128, the interpolation at 128/255 between #fb6a4a (4/8) and #ef3b2c (5/8).
  double const f = (128.0 / 255.0 - 0.5) / 0.125;
  rgb8 const want{static_cast<int>(std::lround(0xfb + f * (0xef - 0xfb))),
                  static_cast<int>(std::lround(0x6a + f * (0x3b - 0x6a))),
                  static_cast<int>(std::lround(0x4a + f * (0x2c - 0x4a)))};
  CHECK(near(bytes(reds(0.5)), want, 0));
  // Out of range clamps; the table quantizes as matplotlib's (256 entries).
  CHECK(reds(-3.0) == reds(0.0));
  CHECK(reds(7.0) == reds(1.0));
  CHECK(reds(0.999) == reds.entry(255));
  CHECK(reds(0.5 / 256) == reds.entry(0));

  auto const viridis = viz::colormap::named("viridis");
  CHECK(viridis(0.0).r == Approx(0.267004));
  CHECK(viridis(0.0).b == Approx(0.329415));
  CHECK(viridis(1.0).g == Approx(0.906157));
  CHECK(viridis(0.5).g == Approx(0.566949));  // entry 128 is a control point
  // Entry 100 of matplotlib's table is (0.166617, 0.463708, 0.558119); interpolation stays within 0.005.
  CHECK(viridis.entry(100).r == Approx(0.166617).margin(0.005));
  CHECK(viridis.entry(100).g == Approx(0.463708).margin(0.005));

  auto const reversed = viz::colormap::named("Reds_r");
  CHECK(near(bytes(reversed(0.0)), reds_top, 0));
  CHECK(near(bytes(reversed(1.0)), reds_bottom, 0));

  REQUIRE_THROWS_AS(viz::colormap::named("Redz", "show_heatmaps"), dt::value_error);
  REQUIRE_THROWS_WITH(viz::colormap::named("Redz", "show_heatmaps"),
                      Catch::Contains("show_heatmaps: unknown colormap \"Redz\"") && Catch::Contains("Reds") &&
                          Catch::Contains("viridis"));
}

TEST_CASE("nice_ticks and format_ticks place and label ticks as matplotlib", "[viz][heatmap]") {
  using V = std::vector<double>;
  CHECK(viz::nice_ticks(-0.5, 9.5, 5, true) == V{0, 2, 4, 6, 8});
  CHECK(viz::nice_ticks(-0.5, 49.5, 6, true) == V{0, 10, 20, 30, 40});
  CHECK(viz::nice_ticks(-0.5, 0.5, 5, true) == V{0});  // one row: index 0 only
  CHECK(viz::nice_ticks(-0.5, 2.5, 9, true) == V{0, 1, 2});  // never a fractional index
  auto const unit = viz::nice_ticks(0, 1, 5);
  REQUIRE(unit.size() == 6);
  CHECK(unit[1] == Approx(0.2));
  CHECK(unit[5] == Approx(1.0));
  CHECK(viz::nice_ticks(0, 1, 4) == V{0, 0.25, 0.5, 0.75, 1.0});
  CHECK(viz::nice_ticks(-1, 5, 6) == V{-1, 0, 1, 2, 3, 4, 5});
  CHECK(viz::nice_ticks(3, 1, 5).empty());

  using S = std::vector<std::string>;
  CHECK(viz::format_ticks({0, 5, 10}) == S{"0", "5", "10"});
  CHECK(viz::format_ticks({0, 0.5, 1}) == S{"0.0", "0.5", "1.0"});
  CHECK(viz::format_ticks({0, 0.25, 0.5}) == S{"0.00", "0.25", "0.50"});
  CHECK(viz::format_ticks({-1, 0, 1}) == S{"\u22121", "0", "1"});
  // Beyond matplotlib's limits (10^6, 10^-5) the labels leave out a power of ten, shown once.
  CHECK(viz::tick_exponent({0, 2e6, 4e6}) == 6);
  CHECK(viz::format_ticks({0, 2e6, 4e6}) == S{"0", "2", "4"});
  CHECK(viz::format_ticks({0, 5e5, 1e6, 1.5e6}) == S{"0.0", "0.5", "1.0", "1.5"});
  CHECK(viz::exponent_label(6) == "1e6");
  CHECK(viz::tick_exponent({0, 1e-5, 2e-5}) == -5);
  CHECK(viz::exponent_label(-5) == "1e\u22125");
  CHECK(viz::tick_exponent({0, 0.001, 0.002}) == 0);
  CHECK(viz::format_ticks({0, 0.001, 0.002}) == S{"0.000", "0.001", "0.002"});
}

TEST_CASE("show_heatmaps: a grid whose cells show the colormap, and one colour bar", "[viz][heatmap]") {
  auto const m = grid_values();
  viz::heatmap_options opts;
  opts.titles = {"Head 1", "Head 2", "Head 3"};
  auto const layout = viz::layout_heatmaps(m, opts);
  REQUIRE(layout.rows == 2);
  REQUIRE(layout.cols == 3);
  REQUIRE(layout.ny == 4);
  REQUIRE(layout.nx == 5);
  REQUIRE(layout.axes.size() == 6);
  CHECK(layout.xlabel == "KVPairs");  // the names of the last two dims
  CHECK(layout.ylabel == "Queries");
  CHECK(layout.vmin == 0.0);  // one range over all six matrices
  CHECK(layout.vmax == 100.0 + 40.0 + 15.0 + 4.0);
  // Heatmaps in grid order, none overlapping, the colour bar right of them all.
  CHECK(layout.axes[1].x > layout.axes[0].right());
  CHECK(layout.axes[3].y > layout.axes[0].bottom());
  CHECK(layout.colorbar.x > layout.axes[5].right());
  // Ticks at integer indices.
  for (double t : layout.xticks.values) CHECK(t == std::round(t));

  auto const file = tmp() / "grid.png";
  viz::show_heatmaps(m, file, opts);
  png const image(file);
  CHECK(image.width() == layout.width);
  CHECK(image.height() == layout.height);

  // The largest element (row 1, col 2, y 3, x 4) has the top colour, the smallest (0, 0, 0, 0) the bottom one.
  CHECK(near(center_of(image, layout.cell(1, 2, 3, 4)), reds_top));
  CHECK(near(center_of(image, layout.cell(0, 0, 0, 0)), reds_bottom));
  // Every cell: the colour of its value on the shared range.
  auto const reds = viz::colormap::named("Reds");
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x) {
          double const v = 100.0 * r + 20.0 * c + 5.0 * y + x;
          auto const got = center_of(image, layout.cell(r, c, y, x));
          INFO("cell " << r << c << y << x << " got " << str(got));
          CHECK(near(got, bytes(reds(v / layout.vmax))));
        }

  // The colour bar runs from the top colour (top) to the bottom colour (bottom), framed in black.
  auto const& bar = layout.colorbar;
  CHECK(near(image.at(bar.center_x(), bar.y + 0.5), reds_top));
  CHECK(near(image.at(bar.center_x(), bar.bottom() - 0.5), reds_bottom));
  CHECK(near(image.at(bar.center_x(), bar.y - 0.5), {0, 0, 0}, 40));
  CHECK(near(image.at(bar.center_x(), bar.center_y()), bytes(reds(0.5)), 3));
  // Its ticks are values in the range, labelled.
  REQUIRE(layout.colorbar_ticks.values.size() >= 2);
  CHECK(layout.colorbar_ticks.values.front() >= layout.vmin);
  CHECK(layout.colorbar_ticks.values.back() <= layout.vmax);
  CHECK(layout.colorbar_y(layout.vmax) == Approx(bar.y));
  // Outside the heatmaps, the figure is white.
  CHECK(near(image.at(1, 1), {255, 255, 255}, 0));
}

TEST_CASE("show_heatmaps: expressions, views, options", "[viz][heatmap]") {
  auto const m = grid_values();

  SECTION("a lazy expression and a transposed view are drawn as their values") {
    auto const layout = viz::layout_heatmaps(m * 2.0);
    CHECK(layout.vmax == 2 * 159.0);
    auto const t = dt::transpose<Queries, KVPairs>(m);
    auto const tl = viz::layout_heatmaps(t);
    CHECK(tl.nx == 4);
    CHECK(tl.ny == 5);
    CHECK(tl.xlabel == "Queries");
    CHECK(tl.ylabel == "KVPairs");
    auto const file = tmp() / "transposed.png";
    viz::show_heatmaps(t, file);
    png const image(file);
    // Element (y = KVPairs 4, x = Queries 3) of the last heatmap is the largest.
    CHECK(near(center_of(image, tl.cell(1, 2, 4, 3)), reds_top));
  }

  SECTION("labels, viridis, a fixed colour range that clamps") {
    viz::heatmap_options opts;
    opts.xlabel = "Keys";
    opts.ylabel = "Queries (q)";
    opts.cmap = "viridis";
    opts.vmin = 10.0;
    opts.vmax = 50.0;
    opts.cell_size = 7;
    auto const layout = viz::layout_heatmaps(m, opts);
    CHECK(layout.xlabel == "Keys");
    CHECK(layout.ylabel == "Queries (q)");
    CHECK(layout.cell_size == 7);
    CHECK(layout.axes[0].width == 35);
    auto const file = tmp() / "viridis.png";
    viz::show_heatmaps(m, file, opts);
    png const image(file);
    auto const viridis = viz::colormap::named("viridis");
    CHECK(near(center_of(image, layout.cell(0, 0, 0, 0)), bytes(viridis(0.0))));  // 0 < vmin: bottom colour
    CHECK(near(center_of(image, layout.cell(1, 0, 0, 0)), bytes(viridis(1.0))));  // 100 > vmax: top colour
    CHECK(near(center_of(image, layout.cell(0, 1, 2, 0)), bytes(viridis(0.5))));  // 30: the middle
  }

  SECTION("NaN and infinite elements are grey; the range ignores them") {
    auto n = m.clone();
    n(Rows(0), Heads(0), Queries(1), KVPairs(1)) = std::numeric_limits<double>::quiet_NaN();
    n(Rows(1), Heads(2), Queries(3), KVPairs(4)) = std::numeric_limits<double>::infinity();
    auto const layout = viz::layout_heatmaps(n);
    CHECK(layout.vmax == 158.0);  // the infinite element is not the maximum
    auto const file = tmp() / "nan.png";
    viz::show_heatmaps(n, file);
    png const image(file);
    CHECK(near(center_of(image, layout.cell(0, 0, 1, 1)), {191, 191, 191}));
    CHECK(near(center_of(image, layout.cell(1, 2, 3, 4)), {191, 191, 191}));
    CHECK(near(center_of(image, layout.cell(1, 2, 3, 3)), reds_top));
  }

  SECTION("a constant grid draws in the bottom colour, with a widened colour bar") {
    auto const c = dt::full(0.5f, Rows(1), Heads(2), Queries(3), KVPairs(3));
    auto const layout = viz::layout_heatmaps(c);
    CHECK(layout.bar_low < 0.5);
    CHECK(layout.bar_high > 0.5);
    auto const file = tmp() / "constant.png";
    viz::show_heatmaps(c, file);
    png const image(file);
    CHECK(near(center_of(image, layout.cell(0, 1, 2, 2)), reds_bottom));
  }

  SECTION("tiny values: the colour bar's labels leave out the power of ten") {
    auto const layout = viz::layout_heatmaps(m * 1e-7);
    CHECK(layout.colorbar_ticks.multiplier == "1e\u22125");
    for (auto const& l : layout.colorbar_ticks.labels) CHECK(l.size() <= 4);
    viz::show_heatmaps(m * 1e-7, tmp() / "tiny.png");
    png const image(tmp() / "tiny.png");
    CHECK(image.height() == layout.height);
  }

  SECTION("many cells: thinned ticks, small cells") {
    auto const big = dt::zeros<float>(Rows(1), Heads(1), Queries(120), KVPairs(300));
    auto const layout = viz::layout_heatmaps(big);
    CHECK(layout.cell_size == 3);
    CHECK(layout.xticks.values.size() <= 9);
    CHECK(layout.yticks.values.size() <= 9);
    CHECK(layout.xticks.values.size() >= 2);
  }

  SECTION("integer elements") {
    auto const ints = dt::arange<std::int32_t>(KVPairs(6));
    auto const grid = dt::unsqueeze<Rows, 0>(dt::unsqueeze<Heads, 0>(dt::unsqueeze<Queries, 0>(ints)));
    auto const layout = viz::layout_heatmaps(grid);
    CHECK(layout.vmax == 5.0);
    viz::show_heatmaps(grid, tmp() / "ints.png");
    CHECK(fs::exists(tmp() / "ints.png"));
  }
}

TEST_CASE("show_heatmap: one matrix with its colour bar", "[viz][heatmap]") {
  auto mat = dt::zeros<float>(Queries(3), KVPairs(4));
  mat(Queries(2), KVPairs(1)) = 1.0f;
  mat(Queries(0), KVPairs(3)) = -1.0f;
  viz::heatmap_options opts;
  opts.titles = {"weights"};
  auto const layout = viz::layout_heatmap(mat, opts);
  REQUIRE(layout.rows == 1);
  REQUIRE(layout.cols == 1);
  auto const file = tmp() / "single.png";
  viz::show_heatmap(mat, file, opts);
  png const image(file);
  CHECK(image.width() == layout.width);
  CHECK(image.height() == layout.height);
  CHECK(near(center_of(image, layout.cell(0, 0, 2, 1)), reds_top));
  CHECK(near(center_of(image, layout.cell(0, 0, 0, 3)), reds_bottom));
  CHECK(near(image.at(layout.colorbar.center_x(), layout.colorbar.y + 0.5), reds_top));
}

TEST_CASE("show_heatmaps: SVG and PDF output", "[viz][heatmap]") {
  auto const m = grid_values();
  viz::heatmap_options opts;
  opts.titles = {"a", "b", "c"};
  auto const layout = viz::layout_heatmaps(m, opts);

  auto const svg_file = tmp() / "grid.svg";
  viz::show_heatmaps(m, svg_file, opts);
  std::string const svg = read_bytes(svg_file);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  // Same physical size as the PNG: 72 points per 100 pixels.
  auto const attr = [&](std::string const& name) {
    auto const at = svg.find(name + "=\"");
    REQUIRE(at != std::string::npos);
    return std::stod(svg.substr(at + name.size() + 2));
  };
  CHECK(attr("width") == Approx(layout.width * 0.72).margin(0.01));
  CHECK(attr("height") == Approx(layout.height * 0.72).margin(0.01));
  // Cairo writes text as glyph outlines: the labels are there as glyphs; the heatmaps and the colour bar as images.
  CHECK(svg.find("glyph") != std::string::npos);
  std::size_t images = 0;
  for (auto at = svg.find("<image"); at != std::string::npos; at = svg.find("<image", at + 1)) ++images;
  CHECK(images == 7);

  auto const pdf_file = tmp() / "grid.PDF";  // the extension in any case
  viz::show_heatmaps(m, pdf_file, opts);
  std::string const pdf = read_bytes(pdf_file);
  CHECK(pdf.rfind("%PDF-", 0) == 0);
  CHECK(pdf.find("/Creator (dimtensor)") != std::string::npos);
  CHECK(pdf.find("/Interpolate false") != std::string::npos);  // sharp cells in every viewer
}

TEST_CASE("show_heatmaps: bad input is a clear error", "[viz][heatmap]") {
  auto const m = grid_values();

  SECTION("an unknown extension") {
    REQUIRE_THROWS_AS(viz::show_heatmaps(m, tmp() / "grid.jpg"), dt::value_error);
    REQUIRE_THROWS_WITH(viz::show_heatmaps(m, tmp() / "grid.jpg"),
                        Catch::Contains("show_heatmaps") && Catch::Contains("grid.jpg") &&
                            Catch::Contains(".png, .svg or .pdf"));
    REQUIRE_THROWS_WITH(viz::show_heatmap(dt::zeros<float>(Queries(2), KVPairs(2)), tmp() / "noext"),
                        Catch::Contains("show_heatmap:") && Catch::Contains("unsupported extension"));
    CHECK_FALSE(fs::exists(tmp() / "grid.jpg"));
  }

  SECTION("an unknown colormap") {
    viz::heatmap_options opts;
    opts.cmap = "reds";
    REQUIRE_THROWS_AS(viz::show_heatmaps(m, tmp() / "cmap.png", opts), dt::value_error);
    REQUIRE_THROWS_WITH(viz::show_heatmaps(m, tmp() / "cmap.png", opts),
                        Catch::Contains("unknown colormap \"reds\"") && Catch::Contains("Reds"));
    CHECK_FALSE(fs::exists(tmp() / "cmap.png"));
  }

  SECTION("a zero extent names the dims") {
    auto const empty = dt::zeros<float>(Rows(1), Heads(2), Queries(0), KVPairs(10));
    REQUIRE_THROWS_AS(viz::show_heatmaps(empty, tmp() / "empty.png"), dt::value_error);
    REQUIRE_THROWS_WITH(viz::show_heatmaps(empty, tmp() / "empty.png"),
                        Catch::Contains("show_heatmaps") && Catch::Contains("[Rows=1, Heads=2, Queries=0, KVPairs=10]") &&
                            Catch::Contains("no elements"));
    REQUIRE_THROWS_WITH(viz::show_heatmap(dt::zeros<float>(Queries(3), KVPairs(0)), tmp() / "empty.png"),
                        Catch::Contains("[Queries=3, KVPairs=0]"));
  }

  SECTION("titles for another number of columns") {
    viz::heatmap_options opts;
    opts.titles = {"a", "b"};
    REQUIRE_THROWS_AS(viz::show_heatmaps(m, tmp() / "titles.png", opts), dt::value_error);
    REQUIRE_THROWS_WITH(viz::show_heatmaps(m, tmp() / "titles.png", opts),
                        Catch::Contains("2 titles") && Catch::Contains("3 columns"));
  }

  SECTION("a reversed or non-finite colour range") {
    viz::heatmap_options opts;
    opts.vmin = 5.0;
    opts.vmax = 1.0;
    REQUIRE_THROWS_WITH(viz::show_heatmaps(m, tmp() / "range.png", opts),
                        Catch::Contains("vmin 5") && Catch::Contains("above vmax 1"));
    opts.vmin = std::numeric_limits<double>::quiet_NaN();
    REQUIRE_THROWS_AS(viz::show_heatmaps(m, tmp() / "range.png", opts), dt::value_error);
  }

  SECTION("an unwritable path is an io_error naming it and cairo's reason") {
    auto const bad = tmp() / "no such dir" / "grid";
    std::string const reason = cairo_status_to_string(CAIRO_STATUS_WRITE_ERROR);
    for (auto const* ext : {".png", ".svg", ".pdf"}) {
      fs::path file = bad;
      file += ext;
      REQUIRE_THROWS_AS(viz::show_heatmaps(m, file), dt::io_error);
      REQUIRE_THROWS_WITH(viz::show_heatmaps(m, file), Catch::Contains("show_heatmaps: cannot write \"" + file.string() +
                                                                       "\": " + reason));
    }
  }
}

}  // namespace heatmap_test
