// Two tensors whose Batch is cut over different mesh axes (data and
// pipeline groups): their parts are different rows.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
// EXPECT: sharded_differently<dimtensor::call::multiplies, Batch, dimtensor::diagnostic::left_axis<Data>, dimtensor::diagnostic::right_axis<Stage> >
// EXPECT: cut the dimension over different mesh axes
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);
DIMTENSOR_AXIS(Stage);

int main() {
  dt::tensor<float, Batch::sharded<Data>, Hidden> a(Batch(4), Hidden(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, Batch::sharded<Stage>, Hidden> b(Batch(4), Hidden(3));  // the mistake
#else
  dt::tensor<float, Batch::sharded<Data>, Hidden> b(Batch(4), Hidden(3));  // the fix
#endif
  auto const y = a * b;
  (void)y;
}
