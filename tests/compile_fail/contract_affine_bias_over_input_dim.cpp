// A hand-written layer x · Wᵀ + b whose bias is over the input features
// (In), not the weight's output dim (Out) that the result ends with.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/contract.hpp>
// EXPECT: affine_bias_not_free_dim<dimtensor::dims<In ?>, dimtensor::dims<Out ?> ?>
// EXPECT: adds the bias along b's one free dim
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
int main() {
  auto const x = dt::ones<float>(Batch(2), In(4));
  auto const w = dt::ones<float>(Out(3), In(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const b = dt::zeros<float>(In(4));
#else
  auto const b = dt::zeros<float>(Out(3));
#endif
  auto const y = dt::contract_affine_checked<In>("layer", x, w, b);
  (void)y;
}
