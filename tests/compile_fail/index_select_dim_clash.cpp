// index_select whose index dims clash with the tensor's other dims: the
// result [Batch, Embed, Embed] would name Embed twice.
#include <cstdint>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/index_select.hpp>
// EXPECT: duplicate_dimension<Embed, dimtensor::dims<Batch, Embed, Embed> ?>
// EXPECT: duplicate dimension in a shape
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
int main() {
  auto const weight = dt::ones<float>(Vocab(10), Embed(4));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const tokens = dt::zeros<std::int64_t>(Batch(2), Embed(3));
#else
  auto const tokens = dt::zeros<std::int64_t>(Batch(2), Steps(3));
#endif
  auto const e = dt::index_select<Vocab>(weight, tokens);
  (void)e;
}
