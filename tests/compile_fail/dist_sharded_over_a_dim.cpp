// A dim named where the mesh axis goes: Batch::sharded<Hidden>.
#include <dimtensor/dimtensor.hpp>
// EXPECT: D::sharded<Axis> needs a mesh axis declared with DIMTENSOR_AXIS
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_AXIS(Data);

int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, Batch::sharded<Hidden>, Hidden> const x(Batch(2), Hidden(3));  // the mistake
#else
  dt::tensor<float, Batch::sharded<Data>, Hidden> const x(Batch(2), Hidden(3));  // the fix
#endif
  (void)x;
}
