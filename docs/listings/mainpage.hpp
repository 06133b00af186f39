// The harness of docs/mainpage.md's rejected line: the taste's dims, a dim
// the scores lack, and the taste's operands.
#include <dimtensor/dimtensor.hpp>
namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
// @main
dt::tensor<float, Batch, Queries, KVPairs> scores{
    {{0.50f, 0.77f, 0.09f, 0.13f}, {0.31f, 0.63f, 0.49f, 0.90f}},
    {{0.46f, 0.63f, 0.35f, 0.40f}, {0.02f, 0.17f, 0.29f, 0.52f}}};
dt::lengths<KVPairs, Batch> valid_lens{2, 3};
