// dimtensor quick start: d2l's masked softmax demos, with every shape checked.
//
// d2l (attention-scoring-functions) draws X = torch.rand(2, 2, 4) after
// torch.manual_seed(0) and masks it with valid lengths [2, 3] (one per batch
// row) and [[1, 3], [2, 4]] (one per query).  The same inputs are written
// out below so the printed weights are the book's numbers; the program
// checks them against PyTorch's output and exits non-zero on a mismatch.
#include <algorithm>
#include <cstdint>
#include <iostream>

#include <dimtensor/dimtensor.hpp>

namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

using scores_t = dt::tensor<float, Batch, Queries, KVPairs>;

int main() {
  // masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))
  scores_t const x1{{{0.4962566f, 0.7682218f, 0.08847743f, 0.13203049f},
                     {0.30742282f, 0.6340787f, 0.4900934f, 0.89644474f}},
                    {{0.45562798f, 0.6323063f, 0.34889346f, 0.4017173f},
                     {0.02232575f, 0.16885895f, 0.29388845f, 0.5185218f}}};
  // Lengths of KVPairs (masked_softmax<Queries> with them would not compile).
  dt::lengths<KVPairs, Batch> const lens_per_row{2, 3};
  scores_t const w1 = dt::masked_softmax<KVPairs>(x1, lens_per_row);
  std::cout << "masked_softmax(X, [2, 3]) =\n" << w1 << "\n\n";

  // masked_softmax(torch.rand(2, 2, 4), d2l.tensor([[1, 3], [2, 4]]))
  scores_t const x2{{{0.6976676f, 0.8000114f, 0.16102946f, 0.28226858f},
                     {0.68160856f, 0.915194f, 0.3970999f, 0.8741559f}},
                    {{0.41940832f, 0.55290705f, 0.9527381f, 0.03616482f},
                     {0.18523103f, 0.37341738f, 0.30510002f, 0.9320004f}}};
  dt::lengths<KVPairs, Batch, Queries> const lens_per_query{{1, 3}, {2, 4}};
  scores_t const w2 = dt::masked_softmax<KVPairs>(x2, lens_per_query);
  std::cout << "masked_softmax(X, [[1, 3], [2, 4]]) =\n" << w2 << "\n\n";

  // A mistake the compiler catches: softmax over a dim the scores do not have.
  //   auto wrong = dt::masked_softmax<Hidden>(x1, lens_per_row);
  // g++ 12 reports one error:
  //   In instantiation of 'struct dimtensor::diagnostic::not_a_dimension_of<
  //       dimtensor::call::masked_softmax, Hidden, dimtensor::dims<Batch, Queries, KVPairs> >':
  //   error: static assertion failed: dimtensor: the named dimension is not a
  //       dimension of the tensor (see not_a_dimension_of<call, dimension, dims of the tensor> above)

  // PyTorch 1.13 running d2l's masked_softmax on the same inputs.
  scores_t const torch1{{{0.4324247f, 0.5675753f, 0.f, 0.f}, {0.41905454f, 0.5809455f, 0.f, 0.f}},
                        {{0.3234141f, 0.38591293f, 0.290673f, 0.f}, {0.28819886f, 0.33368048f, 0.3781207f, 0.f}}};
  scores_t const torch2{{{1.f, 0.f, 0.f, 0.f}, {0.33161947f, 0.4188754f, 0.2495051f, 0.f}},
                        {{0.4666748f, 0.5333252f, 0.f, 0.f}, {0.18366891f, 0.2216991f, 0.20705898f, 0.38757294f}}};
  double const err = std::max(dt::max_abs_diff(w1, torch1), dt::max_abs_diff(w2, torch2));
  std::cout << "largest difference from PyTorch: " << err << '\n';
  if (err > 1e-6) {
    std::cerr << "quickstart: results differ from PyTorch's by " << err << '\n';
    return 1;
  }
  return 0;
}
