// show_heatmap (one matrix) given a grid [rows, cols, Y, X].
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/viz.hpp>
// EXPECT: heatmap_needs_rank_2
// EXPECT: show_heatmap draws one rank-2 matrix
namespace dt = dimtensor;
DIMTENSOR_DIM(Rows); DIMTENSOR_DIM(Heads); DIMTENSOR_DIM(Queries); DIMTENSOR_DIM(KVPairs);
int main() {
  auto const grid = dt::ones<float>(Rows(1), Heads(2), Queries(3), KVPairs(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::viz::show_heatmap(grid, "grid.png");
#else
  dt::viz::show_heatmaps(grid, "grid.png");
#endif
}
