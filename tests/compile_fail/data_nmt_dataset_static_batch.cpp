// A translation dataset with a static batch extent: the last minibatch of an
// epoch may be smaller, so the batch must be a run-time extent.
#include <dimtensor/data.hpp>
#include <dimtensor/dimtensor.hpp>
// EXPECT: nmt_dataset<Batch, Steps> needs a dimension tag Batch \(not Batch::fixed<N>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
#ifdef DIMTENSOR_COMPILE_FAIL
using dataset_t = dt::data::nmt_dataset<Batch::fixed<64>, Steps>;  // the mistake
#else
using dataset_t = dt::data::nmt_dataset<Batch, Steps>;  // the fix
#endif
int main() { return sizeof(dataset_t) > 0 ? 0 : 1; }
