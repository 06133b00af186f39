// A series from a matrix [Batch, Points] instead of one of its rows.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/viz.hpp>
// EXPECT: series_needs_rank_1<dimtensor::call::series_of, dimtensor::dims<Batch, Points ?> ?>
// EXPECT: a series is made of rank-1 tensors
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch); DIMTENSOR_DIM(Points);
int main() {
  auto const y = dt::ones<double>(Batch(2), Points(5));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const s = dt::viz::series_of("y", y);
#else
  auto const s = dt::viz::series_of("y", dt::squeeze<Batch>(dt::slice<Batch>(y, 0, 1)));
#endif
  (void)s;
}
