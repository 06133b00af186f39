// x and y of a series with different static extents.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/viz.hpp>
// EXPECT: extent_mismatch<dimtensor::call::series_of, Points, dimtensor::diagnostic::extents<4, 5> ?>
// EXPECT: static extents disagree
namespace dt = dimtensor;
DIMTENSOR_DIM(Points);
int main() {
  auto const x = dt::ones<double>(Points::fixed<4>{});
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y = dt::ones<double>(Points::fixed<5>{});
#else
  auto const y = dt::ones<double>(Points::fixed<4>{});
#endif
  auto const s = dt::viz::series_of("y", x, y);
  (void)s;
}
