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

namespace line_plot_test {
namespace {

DIMTENSOR_DIM(Points);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Batch);

namespace dt = dimtensor;
namespace viz = dimtensor::viz;
namespace fs = std::filesystem;
using style = viz::series::style;

using namespace test_support;

// This file's directory, removed at exit.
temp_dir const& tmp() { return program_temp_dir("dimtensor_line_plot_test_"); }

// Line colours within two steps of each component, unless a check says otherwise.
constexpr near_colours near{2};

constexpr rgb8 white{255, 255, 255};
constexpr rgb8 tab_blue{0x1f, 0x77, 0xb4};
constexpr rgb8 tab_orange{0xff, 0x7f, 0x0e};
constexpr rgb8 tab_green{0x2c, 0xa0, 0x2c};

std::vector<double> range(double from, double to, double step) {
  std::vector<double> v;
  for (double x = from; x <= to + 1e-9; x += step) v.push_back(x);
  return v;
}

std::vector<double> constant(std::size_t n, double c) { return std::vector<double>(n, c); }

}  // namespace

TEST_CASE("plot: lines in tab10 colours where the data maps", "[viz][line_plot]") {
  auto const xs = range(0, 10, 0.5);
  std::vector<viz::series> lines{{"one", xs, constant(xs.size(), 1.0)},
                                 {"three", xs, constant(xs.size(), 3.0)},
                                 {"", xs, constant(xs.size(), 5.0), style::line, "#ff00ff"},
                                 {"seven", xs, constant(xs.size(), 7.0)}};
  viz::plot_options opts;
  opts.ylim = {{0, 8}};
  opts.legend = false;
  opts.xlabel = "x";
  opts.ylabel = "y";
  opts.title = "four lines";
  auto const layout = viz::layout_plot(lines, opts);
  CHECK(layout.width == 640);
  CHECK(layout.height == 440);
  CHECK(layout.x_low == 0.0);  // the data's x range
  CHECK(layout.x_high == 10.0);
  CHECK(layout.y_low == 0.0);
  CHECK(layout.y_high == 8.0);
  CHECK_FALSE(layout.legend);
  // Colours: the tab10 cycle, skipping the series that names its own.
  REQUIRE(layout.colors.size() == 4);
  CHECK(near(bytes(layout.colors[0]), tab_blue, 0));
  CHECK(near(bytes(layout.colors[1]), tab_orange, 0));
  CHECK(near(bytes(layout.colors[2]), {255, 0, 255}, 0));
  CHECK(near(bytes(layout.colors[3]), tab_green, 0));
  // The mapping: data corners on the axes' corners.
  CHECK(layout.x_pixel(0) == Approx(layout.axes.x));
  CHECK(layout.x_pixel(10) == Approx(layout.axes.right()));
  CHECK(layout.y_pixel(0) == Approx(layout.axes.bottom()));
  CHECK(layout.y_pixel(8) == Approx(layout.axes.y));

  auto const file = tmp() / "lines.png";
  viz::plot(lines, file, opts);
  png const image(file);
  REQUIRE(image.width() == 640);
  REQUIRE(image.height() == 440);
  for (double x : {1.3, 4.7, 8.9}) {
    CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(1)), tab_blue));
    CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(3)), tab_orange));
    CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(5)), {255, 0, 255}));
    CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(7)), tab_green));
    // Between the lines: the background.
    CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(2.2)), white));
  }
  // The frame is black; outside the axes, the figure is white.
  CHECK(near(image.at(layout.axes.x - 0.5, layout.axes.center_y()), {0, 0, 0}, 40));
  CHECK(near(image.at(2, 2), white, 0));
}

TEST_CASE("plot: d2l's plot_kernel_reg — truth, dashed prediction, translucent training points", "[viz][line_plot]") {
  auto const xs = range(0, 5, 0.1);
  std::vector<double> truth;
  for (double x : xs) truth.push_back(2 * std::sin(x) + std::pow(x, 0.8));
  std::vector<viz::series> lines{{"Truth", xs, truth},
                                 {"Pred", xs, constant(xs.size(), 2.5), style::dashed},
                                 {"", {1.0, 2.0, 4.0}, {4.5, -0.5, 4.5}, style::markers}};
  viz::plot_options opts;
  opts.xlabel = "x";
  opts.ylabel = "y";
  opts.xlim = {{0, 5}};
  opts.ylim = {{-1, 5}};
  opts.grid = false;
  auto const layout = viz::layout_plot(lines, opts);
  CHECK(layout.x_low == 0.0);
  CHECK(layout.x_high == 5.0);
  CHECK(layout.y_low == -1.0);
  CHECK(layout.y_high == 5.0);
  REQUIRE(layout.legend);
  auto const file = tmp() / "kernel_reg.png";
  viz::plot(lines, file, opts);
  png const image(file);

  SECTION("a marker is its colour at half opacity over white") {
    rgb8 const half{(255 + tab_green.r + 1) / 2, (255 + tab_green.g + 1) / 2, (255 + tab_green.b + 1) / 2};
    CHECK(near(image.at(layout.x_pixel(2.0), layout.y_pixel(-0.5)), half, 3));
    CHECK(near(image.at(layout.x_pixel(2.0), layout.y_pixel(-0.5) - 12), white));  // small circles
  }

  SECTION("the dashed line alternates colour and gaps along its length") {
    int on = 0;
    int off = 0;
    double const y = layout.y_pixel(2.5);
    for (double px = layout.x_pixel(3.2); px < layout.x_pixel(4.8); px += 1) {
      auto const c = image.at(px, y);
      if (near(c, tab_orange, 6)) ++on;
      if (near(c, white, 6)) ++off;
    }
    CHECK(on > 20);
    CHECK(off > 5);
  }

  SECTION("the solid line passes through its points") {
    for (double x : {0.5, 1.7, 3.3}) {
      double const y = 2 * std::sin(x) + std::pow(x, 0.8);
      CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(y)), tab_blue, 30));
    }
  }

  SECTION("the legend sits where it covers no point and no line") {
    auto const& b = *layout.legend;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      CHECK_FALSE(b.contains(layout.x_pixel(xs[i]), layout.y_pixel(truth[i])));
      CHECK_FALSE(b.contains(layout.x_pixel(xs[i]), layout.y_pixel(2.5)));
    }
    CHECK(b.x >= layout.axes.x);
    CHECK(b.right() <= layout.axes.right());
    CHECK(b.y >= layout.axes.y);
    CHECK(b.bottom() <= layout.axes.bottom());
  }
}

TEST_CASE("plot: ranges, margins, ticks", "[viz][line_plot]") {
  SECTION("default y range: the data padded by 5%") {
    auto const layout = viz::layout_plot({{"a", {0, 1, 2}, {0, 10, 5}}});
    CHECK(layout.x_low == 0.0);
    CHECK(layout.x_high == 2.0);
    CHECK(layout.y_low == Approx(-0.5));
    CHECK(layout.y_high == Approx(10.5));
    REQUIRE(layout.legend);
  }
  SECTION("markers widen x by 5% too, so none is cut in half") {
    auto const layout = viz::layout_plot({{"", {0, 10}, {0, 1}, style::markers}});
    CHECK(layout.x_low == Approx(-0.5));
    CHECK(layout.x_high == Approx(10.5));
    CHECK_FALSE(layout.legend);  // no labelled series
  }
  SECTION("a single value is widened") {
    auto const layout = viz::layout_plot({{"", {3, 3}, {2, 2}}});
    CHECK(layout.x_low < 3.0);
    CHECK(layout.x_high > 3.0);
    CHECK(layout.y_low < 2.0);
    CHECK(layout.y_high > 2.0);
  }
  SECTION("no data: the unit square") {
    auto const layout = viz::layout_plot({});
    CHECK(layout.x_low == 0.0);
    CHECK(layout.x_high == 1.0);
    viz::plot({}, tmp() / "empty.png");
    CHECK(fs::exists(tmp() / "empty.png"));
  }
  SECTION("ticks are nice numbers inside the range, labels never collide") {
    viz::plot_options opts;
    opts.xlim = {{0, 5}};
    opts.ylim = {{-1, 5}};
    auto const layout = viz::layout_plot({}, opts);
    CHECK(layout.xticks.values == std::vector<double>{0, 1, 2, 3, 4, 5});
    CHECK(layout.xticks.labels == std::vector<std::string>{"0", "1", "2", "3", "4", "5"});
    CHECK(layout.yticks.values == std::vector<double>{-1, 0, 1, 2, 3, 4, 5});
    CHECK(layout.yticks.labels.front() == "\u22121");
    CHECK(layout.xticks.multiplier.empty());
    opts.width = 150;
    opts.xlim = {{0, 4000000}};
    auto const narrow = viz::layout_plot({}, opts);
    REQUIRE(narrow.xticks.values.size() >= 2);
    CHECK(narrow.xticks.values.size() <= 5);
    CHECK(narrow.xticks.multiplier == "1e6");  // labels 0, 2, 4 or the like, and "1e6" under the axis' end
    CHECK(narrow.xticks.labels.back().size() <= 3);
    viz::plot({}, tmp() / "narrow.png", opts);
    png const image(tmp() / "narrow.png");
    CHECK(image.width() == 150);
  }
  SECTION("log y: decades labelled 10^e, minor ticks between") {
    viz::plot_options opts;
    opts.log_y = true;
    auto xs = range(1, 100, 1);
    std::vector<double> loss;
    for (double x : xs) loss.push_back(3 * std::exp(-x / 10) + 0.005);
    auto const layout = viz::layout_plot({{"loss", xs, loss}}, opts);
    CHECK(layout.log_y);
    CHECK(layout.y_low < 0.005 + 3 * std::exp(-10.0));
    CHECK(layout.y_high > 3.0);
    REQUIRE(layout.yticks.values.size() >= 3);
    CHECK(layout.yticks.values.front() == Approx(0.01));
    CHECK(layout.yticks.labels.front() == "10");
    CHECK(layout.y_exponents.front() == "\u22122");
    CHECK_FALSE(layout.y_minor.empty());
    CHECK(layout.y_pixel(1.0) == Approx(layout.axes.bottom() - (0 - std::log10(layout.y_low)) /
                                                                   (std::log10(layout.y_high) - std::log10(layout.y_low)) *
                                                                   layout.axes.height));
    auto const file = tmp() / "loss.png";
    viz::plot({{"loss", xs, loss}}, file, opts);
    png const image(file);
    double const x = 20;
    CHECK(near(image.at(layout.x_pixel(x), layout.y_pixel(3 * std::exp(-x / 10) + 0.005)), tab_blue, 40));
  }
  SECTION("log y within one decade: plain numbers") {
    viz::plot_options opts;
    opts.log_y = true;
    opts.ylim = {{0.3, 0.9}};
    auto const layout = viz::layout_plot({}, opts);
    CHECK(layout.y_exponents.empty());
    REQUIRE(layout.yticks.values.size() >= 2);
    CHECK(layout.yticks.labels.front() == "0.3");
  }
}

TEST_CASE("plot: NaN breaks a line; SVG and PDF output", "[viz][line_plot]") {
  double const nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<viz::series> lines{{"gap", {0, 1, 2, 3, 4}, {1, 1, nan, 1, 1}}};
  viz::plot_options opts;
  opts.grid = false;
  opts.ylim = {{0, 2}};
  auto const layout = viz::layout_plot(lines, opts);
  auto const file = tmp() / "gap.png";
  viz::plot(lines, file, opts);
  png const image(file);
  CHECK(near(image.at(layout.x_pixel(0.5), layout.y_pixel(1)), tab_blue));
  CHECK(near(image.at(layout.x_pixel(3.5), layout.y_pixel(1)), tab_blue));
  CHECK(near(image.at(layout.x_pixel(2.0), layout.y_pixel(1)), white));

  opts.title = "Loss";
  auto const svg_file = tmp() / "gap.svg";
  viz::plot(lines, svg_file, opts);
  std::string const svg = read_bytes(svg_file);
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("width=\"460.8pt\"") != std::string::npos);  // 640 px at 100 dpi = 6.4 in
  CHECK(svg.find("height=\"316.8pt\"") != std::string::npos);
  CHECK(svg.find("glyph") != std::string::npos);              // the text, as glyph outlines
  CHECK(svg.find("rgb(12.156863%,46.666667%,70.588235%)") != std::string::npos);  // the tab10 blue stroke

  auto const pdf_file = tmp() / "gap.pdf";
  viz::plot(lines, pdf_file, opts);
  std::string const pdf = read_bytes(pdf_file);
  CHECK(pdf.rfind("%PDF-", 0) == 0);
  CHECK(pdf.find("/Title (Loss)") != std::string::npos);
  CHECK(pdf.find("/MediaBox [ 0 0 460.8 316.8 ]") != std::string::npos);
}

TEST_CASE("series_of: series from rank-1 expressions", "[viz][line_plot]") {
  auto const x = dt::arange<double, Points>(0, 1, 0.25);
  auto const s = viz::series_of("x squared", x, x * x, style::dashed);
  CHECK(s.label == "x squared");
  CHECK(s.x == std::vector<double>{0, 0.25, 0.5, 0.75});
  CHECK(s.y == std::vector<double>{0, 0.0625, 0.25, 0.5625});
  CHECK(s.kind == style::dashed);
  CHECK(s.color.empty());

  auto const ints = dt::tensor<std::int32_t, Steps>{3, 1, 2};
  auto const idx = viz::series_of("loss", ints);
  CHECK(idx.x == std::vector<double>{0, 1, 2});
  CHECK(idx.y == std::vector<double>{3, 1, 2});
  CHECK(idx.kind == style::line);

  auto const f = dt::tensor<float, Steps>{0.5f, 0.25f, 0.125f};
  auto const mixed = viz::series_of("mixed", ints, f, style::markers);
  CHECK(mixed.y == std::vector<double>{0.5, 0.25, 0.125});

  auto const longer = dt::arange<double, Points>(0, 5, 1);
  REQUIRE_THROWS_AS(viz::series_of("bad", x, longer), dt::shape_error);
  REQUIRE_THROWS_WITH(viz::series_of("bad", x, longer),
                      Catch::Contains("series_of") && Catch::Contains("Points") && Catch::Contains("4 (x)") &&
                          Catch::Contains("5 (y)"));

  // A sliced row of a matrix.
  auto const m = dt::tensor<double, Batch, Points>{{1, 2, 3}, {4, 5, 6}};
  auto const row = dt::squeeze<Batch>(dt::slice<Batch>(m, 1, 2));
  CHECK(viz::series_of("row", row).y == std::vector<double>{4, 5, 6});
}

TEST_CASE("plot: bad input is a clear error", "[viz][line_plot]") {
  SECTION("x and y of different lengths, named by the label") {
    std::vector<viz::series> lines{{"Truth", {1, 2, 3}, {1, 2}}};
    REQUIRE_THROWS_AS(viz::plot(lines, tmp() / "len.png"), dt::value_error);
    REQUIRE_THROWS_WITH(viz::plot(lines, tmp() / "len.png"),
                        Catch::Contains("series \"Truth\"") && Catch::Contains("3 x values") &&
                            Catch::Contains("2 y values"));
    REQUIRE_THROWS_WITH(viz::layout_plot({{"", {1}, {}}}), Catch::Contains("series 0"));
  }
  SECTION("non-positive values on a log axis") {
    viz::plot_options opts;
    opts.log_y = true;
    REQUIRE_THROWS_AS(viz::plot({{"loss", {1, 2}, {0.5, 0}}}, tmp() / "log.png", opts), dt::value_error);
    REQUIRE_THROWS_WITH(viz::plot({{"loss", {1, 2}, {0.5, 0}}}, tmp() / "log.png", opts),
                        Catch::Contains("log_y") && Catch::Contains("\"loss\"") && Catch::Contains("index 1"));
    opts.ylim = {{0, 1}};
    REQUIRE_THROWS_WITH(viz::layout_plot({}, opts), Catch::Contains("ylim"));
  }
  SECTION("bad ranges, colours, sizes") {
    viz::plot_options opts;
    opts.xlim = {{2, 1}};
    REQUIRE_THROWS_WITH(viz::layout_plot({}, opts), Catch::Contains("xlim (2.000000, 1.000000)"));
    REQUIRE_THROWS_WITH(viz::layout_plot({{"a", {1}, {1}, style::line, "blue"}}),
                        Catch::Contains("unknown colour \"blue\""));
    CHECK(viz::layout_plot({{"a", {1}, {1}, style::line, "C3"}}).colors[0] == viz::tab10[3]);
    viz::plot_options tiny;
    tiny.width = 10;
    REQUIRE_THROWS_AS(viz::layout_plot({}, tiny), dt::value_error);
    REQUIRE_THROWS_WITH(viz::layout_plot({}, tiny), Catch::Contains("10 x 440 pixels"));
  }
  SECTION("an unknown extension; an unwritable path") {
    REQUIRE_THROWS_AS(viz::plot({}, tmp() / "plot.gif"), dt::value_error);
    REQUIRE_THROWS_WITH(viz::plot({}, tmp() / "plot.gif"),
                        Catch::Contains("plot: cannot write") && Catch::Contains("plot.gif") &&
                            Catch::Contains(".png, .svg or .pdf"));
    auto const bad = tmp() / "missing" / "plot.png";
    REQUIRE_THROWS_AS(viz::plot({}, bad), dt::io_error);
    REQUIRE_THROWS_WITH(viz::plot({}, bad), Catch::Contains(bad.string()) &&
                                                Catch::Contains(cairo_status_to_string(CAIRO_STATUS_WRITE_ERROR)));
  }
}

}  // namespace line_plot_test
