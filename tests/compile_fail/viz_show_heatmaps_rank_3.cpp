// show_heatmaps of one batch of attention weights [Batch, Queries, KVPairs]:
// d2l's show_heatmaps wants a grid [rows, cols, Queries, KVPairs].
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/viz.hpp>
// EXPECT: heatmaps_need_rank_4
// EXPECT: show_heatmaps draws a rank-4 tensor
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch); DIMTENSOR_DIM(Queries); DIMTENSOR_DIM(KVPairs); DIMTENSOR_DIM(Grid);
int main() {
  auto const weights = dt::ones<float>(Batch(2), Queries(3), KVPairs(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::viz::show_heatmaps(weights, "weights.png");
#else
  dt::viz::show_heatmaps(dt::unsqueeze<Grid, 0>(weights), "weights.png");
#endif
}
