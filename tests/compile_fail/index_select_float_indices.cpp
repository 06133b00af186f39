// index_select with float indices: the indices must be std::int32_t or std::int64_t.
#include <cstdint>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/index_select.hpp>
// EXPECT: indices_not_integer<dimtensor::call::index_select, float ?>
// EXPECT: the indices must hold std::int32_t or std::int64_t
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
int main() {
  auto const weight = dt::ones<float>(Vocab(10), Embed(4));
  auto const tokens = dt::zeros<float>(Batch(2), Steps(3));
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const e = dt::index_select<Vocab>(weight, tokens);
#else
  auto const e = dt::index_select<Vocab>(weight, dt::cast<std::int64_t>(tokens));
#endif
  (void)e;
}
