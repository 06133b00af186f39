// Harness of docs/autograd.md's program `autograd_nw`: d2l's NWKernelRegression
// and its data, as examples/nadaraya_watson builds them (the example's
// nw_kernel_regression.hpp, without the weights it keeps for the heatmap).
#include <algorithm>
#include <cstdint>
#include <iostream>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/loss.hpp>
#include <dimtensor/optim.hpp>
namespace dt = dimtensor;

DIMTENSOR_DIM(Train);   // the training points, each one a query
DIMTENSOR_DIM(Pairs);   // the other 49 training points: a query's keys and values
DIMTENSOR_DIM(Source);  // the training points leave_one_out gathers from

// self.w = nn.Parameter(torch.rand((1,))): rank 0, so that it broadcasts against [Train, Pairs].
struct nw_kernel_regression : dt::nn::module<nw_kernel_regression> {
  BOOST_HANA_DEFINE_STRUCT(nw_kernel_regression, (dt::tensor<float>, w));

  explicit nw_kernel_regression(dt::generator& gen) : w(dt::rand<float>(gen)) { w.requires_grad_(); }

  template <class Q, class K, class V>
  auto operator()(Q const& queries, K const& keys, V const& values) {
    return dt::contract<Pairs>(dt::nn::nadaraya_watson_weights<Pairs>(queries, keys, w), values);
  }
};

// X_tile[(1 - torch.eye(n_train)).type(torch.bool)].reshape((n_train, -1)): row i is x without x[i].
dt::tensor<float, Train, Pairs> leave_one_out(dt::tensor<float, Train> const& x) {
  auto const i = dt::unsqueeze<Pairs, 1>(dt::arange<std::int64_t>(Train(x.size())));  // [Train, Pairs(1)]
  auto const j = dt::arange<std::int64_t>(Pairs(x.size() - 1));
  dt::tensor<std::int64_t, Train, Pairs> const index = j + dt::cast<std::int64_t>(j >= i);
  return dt::index_select<Source>(dt::rename<Train, Source>(x), index);
}
// @main
dt::manual_seed(0);
dt::tensor<float, Train> x_train = dt::rand<float>(Train(50)) * 5.0f;
std::sort(x_train.data(), x_train.data() + x_train.size());
dt::tensor<float, Train> const y_train =
    2.0f * dt::sin(x_train) + dt::pow(x_train, 0.8f) + dt::normal<float>(0.0, 0.5, Train(50));
auto const keys = leave_one_out(x_train);
auto const values = leave_one_out(y_train);
nw_kernel_regression net(dt::default_generator());
