// Parity of training with PyTorch (tests/parity/goldens_training.py, torch
// 1.13): the losses and their gradients, the optimizers' updates over three
// steps, d2l's grad_clipping, and the Nadaraya-Watson regression trained as
// the book trains it (per-epoch losses, final w, predictions and attention
// weights).  Run with -s to see the largest difference of each comparison.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/loss.hpp>
#include <dimtensor/optim.hpp>

#include "../../examples/nadaraya_watson/nw_kernel_regression.hpp"
#include "parity/support.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
namespace optim = dimtensor::optim;

namespace training_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Class);
DIMTENSOR_DIM(Row);
DIMTENSOR_DIM(Col);
DIMTENSOR_DIM(Elem);
DIMTENSOR_DIM(Step);
DIMTENSOR_DIM(One);
DIMTENSOR_DIM(Epoch);
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);
DIMTENSOR_DIM(Pairs);
DIMTENSOR_DIM(Source);

using parity_support::check_close;
using parity_support::tolerance;

// The golden <role>.npy of the case data/training/<c>.
template <class Tensor>
Tensor load(std::string const& c, std::string const& role) {
  return parity_support::load<Tensor>(parity_support::data_dir("training", c), role);
}

// A golden scalar: numpy saves a 0-d array as shape (1,).
float load_scalar(std::string const& c, std::string const& role) {
  return load<dt::tensor<float, One>>(c, role).item();
}

// |got - want| <= tol relative to max(1, |want|), the difference shown.
void check_scalar(std::string const& what, double got, double want, double tol = tolerance) {
  INFO(what << ": dimtensor " << got << ", PyTorch " << want);
  CHECK(std::abs(got - want) <= tol * std::max(1.0, std::abs(want)));
}

TEST_CASE("mse_loss matches nn.MSELoss", "[parity][training][loss]") {
  using m_t = dt::tensor<float, Row, Col>;
  auto pred = load<m_t>("mse", "pred").clone();
  auto target = load<m_t>("mse", "target").clone();
  check_close("mse none", nn::mse_loss(pred, target, nn::reduction::none), load<m_t>("mse", "loss_none"));
  check_scalar("mse mean", nn::mse_loss(pred, target).item(), load_scalar("mse", "loss_mean"));
  check_scalar("mse sum", nn::mse_loss(pred, target, nn::reduction::sum).item(), load_scalar("mse", "loss_sum"));
  pred.requires_grad_();
  target.requires_grad_();
  nn::mse_loss(pred, target).backward();
  check_close("mse grad pred", pred.grad(), load<m_t>("mse", "grad_pred_mean"));
  check_close("mse grad target", target.grad(), load<m_t>("mse", "grad_target_mean"));
}

TEST_CASE("cross_entropy matches F.cross_entropy", "[parity][training][loss]") {
  using x_t = dt::tensor<float, Batch, Class, Steps>;
  using l_t = dt::tensor<std::int64_t, Batch, Steps>;
  using r_t = dt::tensor<float, Batch, Steps>;
  auto logits = load<x_t>("cross_entropy", "logits").clone();
  auto const labels = load<l_t>("cross_entropy", "labels");
  check_close("ce none", nn::cross_entropy<Class>(logits, labels, nn::reduction::none),
              load<r_t>("cross_entropy", "loss_none"));
  check_scalar("ce mean", nn::cross_entropy<Class>(logits, labels).item(), load_scalar("cross_entropy", "loss_mean"));
  check_scalar("ce sum", nn::cross_entropy<Class>(logits, labels, nn::reduction::sum).item(),
               load_scalar("cross_entropy", "loss_sum"));
  logits.requires_grad_();
  nn::cross_entropy<Class>(logits, labels).backward();
  check_close("ce grad", logits.grad(), load<x_t>("cross_entropy", "grad_mean"));

  auto const big = load<dt::tensor<float, Batch, Class>>("cross_entropy", "large_logits");
  auto const big_labels = load<dt::tensor<std::int64_t, Batch>>("cross_entropy", "large_labels");
  check_close("ce large logits", nn::cross_entropy<Class>(big, big_labels, nn::reduction::none),
              load<dt::tensor<float, Batch>>("cross_entropy", "large_loss_none"));
}

TEST_CASE("masked_softmax_ce_loss matches d2l's MaskedSoftmaxCELoss", "[parity][training][loss]") {
  using p_t = dt::tensor<float, Batch, Steps, Vocab>;
  using b_t = dt::tensor<float, Batch>;
  SECTION("d2l's check: ones, valid_len [4, 2, 0]") {
    auto const pred = dt::ones<float>(Batch(3), Steps(4), Vocab(10));
    auto const label = dt::ones<std::int64_t>(Batch(3), Steps(4));
    auto const valid_len = dt::tensor<std::int64_t, Batch>{4, 2, 0};
    check_close("d2l check", nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, valid_len),
                load<b_t>("masked_ce", "d2l_check"));
  }
  SECTION("random predictions, and the gradient of loss.sum()") {
    auto pred = load<p_t>("masked_ce", "pred").clone();
    auto const label = load<dt::tensor<std::int64_t, Batch, Steps>>("masked_ce", "label");
    auto const valid_len = load<dt::tensor<std::int64_t, Batch>>("masked_ce", "valid_len");
    pred.requires_grad_();
    auto const l = nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, valid_len);
    check_close("masked ce loss", l, load<b_t>("masked_ce", "loss"));
    dt::sum(l).backward();
    check_close("masked ce grad", pred.grad(), load<p_t>("masked_ce", "grad_pred"));
  }
}

// Row k of a stacked golden [Step, ...] as a tensor of the given extents.
template <class Stacked, class... Named>
auto step_of(Stacked const& stacked, dt::index_t k, Named const&... extents) {
  dt::index_t const n = stacked.size() / stacked.extents()[0];
  return dt::from_buffer<float>(stacked.data() + k * n, n, extents...);
}

// Three steps with fixed gradients (each set as the gradient of sum(p * g));
// b has no gradient at step 2, so the optimizer must skip it.
template <class MakeOptimizer>
void optimizer_case(std::string const& c, MakeOptimizer make) {
  using a_t = dt::tensor<float, Row, Col>;
  using b_t = dt::tensor<float, Elem>;
  using as_t = dt::tensor<float, Step, Row, Col>;
  using bs_t = dt::tensor<float, Step, Elem>;
  auto a = load<a_t>(c, "a0").clone();
  auto b = load<b_t>(c, "b0").clone();
  a.requires_grad_();
  b.requires_grad_();
  auto const grads_a = load<as_t>(c, "grads_a");
  auto const grads_b = load<bs_t>(c, "grads_b");
  auto const a_steps = load<as_t>(c, "a_steps");
  auto const b_steps = load<bs_t>(c, "b_steps");
  auto opt = make(optim::parameter_list(a, b));
  for (dt::index_t k = 0; k < 3; ++k) {
    INFO(c << ", step " << k + 1);
    opt.zero_grad();
    dt::sum(a * step_of(grads_a, k, Row(3), Col(4))).backward();
    if (k != 1) dt::sum(b * step_of(grads_b, k, Elem(5))).backward();
    opt.step();
    check_close(c + " a", a, step_of(a_steps, k, Row(3), Col(4)), 1e-6);
    check_close(c + " b", b, step_of(b_steps, k, Elem(5)), 1e-6);
  }
}

TEST_CASE("sgd matches torch.optim.SGD", "[parity][training][optim]") {
  optimizer_case("sgd", [](optim::parameter_list p) { return optim::sgd(std::move(p), 0.1); });
  optimizer_case("sgd_momentum", [](optim::parameter_list p) { return optim::sgd(std::move(p), 0.05, 0.9, 0.01); });
}

TEST_CASE("adam matches torch.optim.Adam", "[parity][training][optim]") {
  optimizer_case("adam", [](optim::parameter_list p) { return optim::adam(std::move(p), 0.01); });
  optimizer_case("adam_decay", [](optim::parameter_list p) {
    return optim::adam(std::move(p), 0.02, {0.8, 0.99}, 1e-6, 0.1);
  });
}

TEST_CASE("clip_grad_norm matches d2l's grad_clipping", "[parity][training][optim]") {
  using a_t = dt::tensor<float, Row, Col>;
  using b_t = dt::tensor<float, Elem>;
  for (auto const& [name, theta] : {std::pair<std::string, double>{"clipped", 1.0}, {"unclipped", 100.0}}) {
    INFO(name);
    auto a = dt::zeros<float>(Row(3), Col(4));
    auto b = dt::zeros<float>(Elem(5));
    a.requires_grad_();
    b.requires_grad_();
    dt::sum(a * load<a_t>("clip", "grad_a")).backward();
    dt::sum(b * load<b_t>("clip", "grad_b")).backward();
    double const norm = optim::clip_grad_norm(optim::parameter_list(a, b), theta);
    check_scalar("norm", norm, load_scalar("clip", "norm_" + name), 1e-6);
    check_close("clipped grad a", a.grad(), load<a_t>("clip", "grad_a_" + name), 1e-6);
    check_close("clipped grad b", b.grad(), load<b_t>("clip", "grad_b_" + name), 1e-6);
  }
}

TEST_CASE("Nadaraya-Watson trained as d2l trains it matches PyTorch", "[parity][training][nadaraya_watson]") {
  auto const attention_dir = parity_support::data_dir("attention", "nadaraya_watson");
  auto const x_train = parity_support::load<dt::tensor<float, Train>>(attention_dir, "x_train");
  auto const y_train = parity_support::load<dt::tensor<float, Train>>(attention_dir, "y_train");
  auto const x_test = parity_support::load<dt::tensor<float, Test>>(attention_dir, "x_test");
  float const w0 = load_scalar("nadaraya_watson", "w_initial");
  auto const losses = load<dt::tensor<float, Epoch>>("nadaraya_watson", "losses");
  auto const ws = load<dt::tensor<float, Epoch>>("nadaraya_watson", "w_per_epoch");

  // keys, values: x_train, y_train without the query's own pair (the eye mask).
  auto const keys = nw::leave_one_out<Pairs, Source>(x_train);
  auto const values = nw::leave_one_out<Pairs, Source>(y_train);
  REQUIRE(keys.extents() == std::array<dt::index_t, 2>{50, 49});
  CHECK(keys(Train(0), Pairs(0)) == x_train(Train(1)));
  CHECK(keys(Train(3), Pairs(2)) == x_train(Train(2)));
  CHECK(keys(Train(3), Pairs(3)) == x_train(Train(4)));
  CHECK(values(Train(49), Pairs(48)) == y_train(Train(48)));

  nw::nw_kernel_regression<Pairs> net(w0);
  std::vector<float> w_after;
  auto const got = nw::train(net, x_train, keys, values, y_train, 5, 0.5,
                             [&](int, float) { w_after.push_back(net.w.item()); });
  REQUIRE(got.size() == 5);
  for (dt::index_t e = 0; e < 5; ++e) {
    INFO("epoch " << e + 1 << ": loss " << got[e] << " vs PyTorch " << losses.data()[e] << ", w " << w_after[e]
                  << " vs " << ws.data()[e]);
    check_scalar("loss", got[e], losses.data()[e]);
    check_scalar("w", w_after[e], ws.data()[e]);
  }
  float const w_final = parity_support::load<dt::tensor<float, One>>(attention_dir, "w").item();
  check_scalar("final w", net.w.item(), w_final);

  // Prediction with keys x_train.repeat((n_test, 1)), values y_train.repeat((n_test, 1)).
  // The key-value pairs are now all 50 training points: Pairs of extent 50.
  auto const rows = dt::zeros<float>(Test(50), Pairs(50));
  auto const test_keys = dt::eval(rows + dt::rename<Train, Pairs>(x_train));
  auto const test_values = dt::eval(rows + dt::rename<Train, Pairs>(y_train));
  dt::tensor<float, Test> y_hat;
  {
    dt::autograd::no_grad const guard;
    y_hat = net(x_test, test_keys, test_values);
  }
  check_close("trained y_hat", y_hat, parity_support::load<dt::tensor<float, Test>>(attention_dir, "y_hat_w"));
  check_close("trained attention weights", net.attention_weights<Test>(),
              parity_support::load<dt::tensor<float, Test, Pairs>>(attention_dir, "attention_weights_w"));
}

}  // namespace training_parity
