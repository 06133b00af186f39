// Harness of docs/autograd.md's program `autograd_rule`: the listing is the
// end of an operation inside the library (namespace dimtensor), here the
// softmax along Feat of a [Batch, Feat] variable, computed as
// ops/softmax.hpp computes it before recording itself.
#include <type_traits>
#include <utility>

#include <dimtensor/dimtensor.hpp>
namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Feat);
// @main
using namespace dimtensor;  // where the library's operations are written
using Backend = cpu;
using T = double;
tensor<T, Batch, Feat> in{{1, 2, 3}, {4, 5, 6}};
in.requires_grad_();
tensor<T, Batch, Feat> out(uninitialized, in.extents());
kernel::lines const s = kernel::lines_along<1>(in.extents());
backend_softmax(Backend{}, in.data(), out.data(), s.outer, s.n, s.inner);
