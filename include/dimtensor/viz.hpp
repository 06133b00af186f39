#pragma once
/// @file
/// @brief The pictures: `#include <dimtensor/viz.hpp>` for heatmaps
/// (`viz::show_heatmaps`, `viz::show_heatmap`) and line plots (`viz::plot`,
/// `viz::series_of`), written as PNG, SVG or PDF with cairo.  Link
/// `dimtensor::viz` (which brings cairo).

#include <dimtensor/viz/figure.hpp>
#include <dimtensor/viz/heatmap.hpp>
#include <dimtensor/viz/line_plot.hpp>
