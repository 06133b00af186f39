// The harness of docs/diagnostics.md: the dims its listings use.  Every
// listing of the page is a mistake (`rejected diagnostics ...`) that declares
// its own operands, so main() holds nothing of its own.
#include <cstdint>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
DIMTENSOR_DIM(BatchHeads);
DIMTENSOR_DIM(Score);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Vocab);
// @main
