#pragma once
// d2l's NWKernelRegression and its training loop, shared by the example
// (examples/nadaraya_watson/main.cpp) and the parity test
// (tests/parity/training_parity_test.cpp), which runs it on d2l's data and
// initial w and compares every epoch's loss with PyTorch's.
//
//   class NWKernelRegression(nn.Module):
//       def __init__(self, **kwargs):
//           super().__init__(**kwargs)
//           self.w = nn.Parameter(torch.rand((1,), requires_grad=True))
//       def forward(self, queries, keys, values):
//           queries = queries.repeat_interleave(keys.shape[1]).reshape((-1, keys.shape[1]))
//           self.attention_weights = nn.functional.softmax(
//               -((queries - keys) * self.w)**2 / 2, dim=1)
//           return torch.bmm(self.attention_weights.unsqueeze(1),
//                            values.unsqueeze(-1)).reshape(-1)
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/loss.hpp>
#include <dimtensor/optim.hpp>

namespace nw {

namespace dt = dimtensor;

// The kernel regression with one learned width w, over key-value pairs
// along KV: queries [Q], keys and values [Q, KV] (one row per query).
template <class KV>
class nw_kernel_regression : public dt::nn::module<nw_kernel_regression<KV>> {
 public:
  // d2l's self.w = nn.Parameter(torch.rand((1,))): here a rank-0 tensor, so
  // that it broadcasts against any [Q, KV] (a [One] tensor would meet KV at
  // the last position), made on the default backend by full() and marked as
  // a leaf that requires grad.  Declared once: the module's parameters are
  // its reflected members (key "w").
  BOOST_HANA_DEFINE_STRUCT(nw_kernel_regression, (dt::tensor<float>, w));

  explicit nw_kernel_regression(float w0) : w(dt::full<float>(w0)) { w.requires_grad_(); }
  explicit nw_kernel_regression(dt::generator& gen) : nw_kernel_regression(dt::rand<float>(gen).item()) {}

  // queries.repeat_interleave(n).reshape((-1, n)) is the queries broadcast
  // along KV, which nadaraya_watson_weights does with an unsqueeze; the
  // bmm of [Q, 1, KV] by [Q, KV, 1] is a contraction over KV, Q shared.
  template <class Queries, class Keys, class Values>
  auto operator()(Queries const& queries, Keys const& keys, Values const& values) {
    auto weights = dt::nn::nadaraya_watson_weights<KV>(queries, keys, w);
    auto y_hat = dt::contract<KV>(weights, values);
    weights_.set(weights.detach());
    return y_hat;
  }

  // This thread's last call's attention weights, as [Q, KV] (value_error if they are not).
  template <class Q>
  dt::tensor<float, Q, KV> attention_weights() const {
    return weights_.get<dt::tensor<float, Q, KV>>("nw_kernel_regression");
  }

 private:
  dt::nn::detail::weights_store weights_;
};

// The book's loop: the loss is MSELoss(reduction='none') summed, SGD with
// lr 0.5; returns float(l.sum()) of every epoch (computed before its step)
// and calls report(epoch, loss) after each.
//
//   for epoch in range(5):
//       trainer.zero_grad()
//       l = loss(net(x_train, keys, values), y_train)
//       l.sum().backward()
//       trainer.step()
template <class KV, class X, class Keys, class Values, class Y>
std::vector<float> train(nw_kernel_regression<KV>& net, X const& x_train, Keys const& keys, Values const& values,
                         Y const& y_train, int epochs, double lr,
                         std::function<void(int, float)> const& report = {}) {
  dt::optim::sgd trainer(net, lr);
  std::vector<float> losses;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    trainer.zero_grad();
    auto const l = dt::nn::mse_loss(net(x_train, keys, values), y_train, dt::nn::reduction::none);
    auto const total = dt::sum(l);
    total.backward();
    trainer.step();
    losses.push_back(total.item());
    if (report) report(epoch, losses.back());
  }
  return losses;
}

// X_tile[(1 - torch.eye(n)).type(torch.bool)].reshape((n, -1)): row i of
// the result is x without its element i ([D] → [D, KV], KV of extent n - 1).
// Written as a gather: element (i, j) is x[j + (j >= i)].
template <class KV, class Source, class D>
dt::tensor<float, D, KV> leave_one_out(dt::tensor<float, D> const& x) {
  dt::index_t const n = x.size();
  auto const i = dt::unsqueeze<KV, 1>(dt::arange<std::int64_t>(D(n)));  // [D, KV(1)]
  auto const j = dt::arange<std::int64_t>(KV(n - 1));                   // [KV]
  dt::tensor<std::int64_t, D, KV> const index = j + dt::cast<std::int64_t>(j >= i);
  return dt::index_select<Source>(dt::rename<D, Source>(x), index);
}

}  // namespace nw
