// A series whose x runs along Points but whose y runs along Steps.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/viz.hpp>
// EXPECT: series_dims_differ<dimtensor::call::series_of, dimtensor::diagnostic::left_has<Points ?>, dimtensor::diagnostic::right_has<Steps ?> ?>
// EXPECT: the x and y of a series must run along the same dimension
namespace dt = dimtensor;
DIMTENSOR_DIM(Points); DIMTENSOR_DIM(Steps);
int main() {
  auto const x = dt::arange<double, Points>(0, 5, 0.1);
  auto const y = dt::arange<double, Steps>(0, 5, 0.1);
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::viz::plot({dt::viz::series_of("y", x, y)}, "y.png");
#else
  dt::viz::plot({dt::viz::series_of("y", x, dt::rename<Steps, Points>(y))}, "y.png");
#endif
}
