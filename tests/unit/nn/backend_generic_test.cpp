// The modules, the losses and the optimizers on the Thrust backend's C++
// system, each run checked against the same run on the CPU backend: the same seed builds the same module, and the forward pass,
// the loss, the gradients, clip_grad_norm, SGD (with momentum and weight
// decay) and Adam steps agree within 1e-5.  Parameters saved from one
// backend load into the other.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/thrust.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <dimtensor/optim.hpp>

#include "unit/support/files.hpp"

namespace backend_generic_test {

namespace dt = dimtensor;
using dt::index_t;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFNHidden);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);

/// Named flat copies (on the host, in double) of what a run computed.
struct record {
  std::vector<std::pair<std::string, std::vector<double>>> entries;

  template <class X>
  void add(std::string name, X const& x) {
    dt::autograd::no_grad const quiet;
    auto const h = dt::to<dt::cpu>(x).contiguous();
    static_assert(std::is_same_v<typename decltype(h)::backend, dt::cpu>);
    std::vector<double> v;
    for (index_t i = 0; i < h.size(); ++i) v.push_back(static_cast<double>(h.data()[i]));
    entries.emplace_back(std::move(name), std::move(v));
  }
  void add(std::string name, double x) { entries.emplace_back(std::move(name), std::vector<double>{x}); }
};

/// Every entry of @p actual within @p tol of @p expected's (relative to its size above 1).
void compare(record const& expected, record const& actual, double tol = 1e-5) {
  REQUIRE(expected.entries.size() == actual.entries.size());
  for (std::size_t k = 0; k < expected.entries.size(); ++k) {
    auto const& [name, want] = expected.entries[k];
    auto const& [got_name, got] = actual.entries[k];
    INFO(name);
    REQUIRE(name == got_name);
    REQUIRE(want.size() == got.size());
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) {
      worst = std::max(worst, std::abs(want[i] - got[i]) / std::max(1.0, std::abs(want[i])));
    }
    CHECK(worst <= tol);
  }
}

/// A host draw moved to backend B: the same numbers on every backend.
template <class B, class X>
auto on(X const& x) {
  return dt::to<B>(x);
}

template <class M>
void add_parameters(record& r, M const& m, std::string const& prefix) {
  m.for_each_parameter([&](std::string const& key, auto const& p) { r.add(prefix + key, p); }, "");
}

template <class M>
void add_gradients(record& r, M const& m, std::string const& prefix) {
  m.for_each_parameter([&](std::string const& key, auto const& p) { r.add(prefix + key, p.grad()); }, "");
}

/// From the gradients in place: clipping (which must scale them), two SGD
/// steps with momentum and weight decay, two Adam steps with weight decay.
template <class Params>
void optimize(record& r, Params params, std::function<void(record&, std::string const&, bool)> const& dump) {
  double const norm = dt::optim::clip_grad_norm(params, 1e-2);
  CHECK(norm > 1e-2);
  r.add("norm", norm);
  dump(r, "clipped.", true);
  dt::optim::sgd sgd(params, 0.1, 0.9, 0.01);
  sgd.step();
  sgd.step();  // the momentum buffer now holds a step
  dump(r, "sgd.", false);
  dt::optim::adam adam(params, 0.01, {0.9, 0.999}, 1e-8, 0.01);
  adam.step();
  adam.step();
  dump(r, "adam.", false);
}

/// The training steps of a module with parameters.
template <class M>
void optimize_module(record& r, M& m) {
  optimize(r, dt::optim::parameter_list(m), [&m](record& rr, std::string const& prefix, bool grads) {
    if (grads) {
      add_gradients(rr, m, prefix);
    } else {
      add_parameters(rr, m, prefix);
    }
  });
}

template <class B>
record run_linear() {
  record r;
  dt::generator gen(21);
  dt::nn::linear<Feat, Hidden, float, B> lin(Feat(5), Hidden(3), true, gen);
  static_assert(std::is_same_v<typename decltype(lin.weight)::backend, B>);
  add_parameters(r, lin, "init.");
  dt::generator data(22);
  auto const x = on<B>(dt::randn<float>(data, Batch(2), Feat(5), Queries(4)));  // In in the middle
  auto const target = on<B>(dt::randn<float>(data, Batch(2), Hidden(3), Queries(4)));
  auto const y = lin(x);
  r.add("y", y);
  auto const loss = dt::sum(dt::nn::mse_loss(y, target, dt::nn::reduction::none));
  r.add("loss", loss);
  loss.backward();
  add_gradients(r, lin, "grad.");
  optimize_module(r, lin);
  return r;
}

template <class B>
record run_additive_attention() {
  record r;
  dt::generator gen(31);
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, float, B> attention(
      KeyFeat(2), QueryFeat(3), Hidden(4), 0.3, gen, 7);
  add_parameters(r, attention, "init.");
  dt::generator data(32);
  auto const queries = on<B>(dt::randn<float>(data, Batch(2), Queries(3), QueryFeat(3)));
  auto const keys = on<B>(dt::randn<float>(data, Batch(2), KVPairs(5), KeyFeat(2)));
  auto const values = on<B>(dt::randn<float>(data, Batch(2), KVPairs(5), ValueFeat(4)));
  auto const target = on<B>(dt::randn<float>(data, Batch(2), Queries(3), ValueFeat(4)));
  auto const valid_lens = on<B>(dt::tensor<std::int64_t, Batch>{2, 4});
  auto const out = attention(queries, keys, values, valid_lens);  // training mode: dropout masks
  r.add("out", out);
  r.add("weights", attention.template attention_weights<Batch, Queries, KVPairs>());
  static_assert(std::is_same_v<typename decltype(attention.template attention_weights<Batch, Queries, KVPairs>())::backend, B>);
  auto const loss = dt::nn::mse_loss(out, target);
  r.add("loss", loss);
  loss.backward();
  add_gradients(r, attention, "grad.");
  optimize_module(r, attention);
  return r;
}

template <class B>
record run_dot_product_attention() {
  record r;
  dt::nn::dot_product_attention<Queries, KVPairs, Feat, float, B> attention(0.25, 5);
  dt::generator data(41);
  auto q = on<B>(dt::randn<float>(data, Batch(2), Queries(3), Feat(4)));
  auto k = on<B>(dt::randn<float>(data, Batch(2), KVPairs(6), Feat(4)));
  auto v = on<B>(dt::randn<float>(data, Batch(2), KVPairs(6), ValueFeat(2)));
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  auto const valid_lens = on<B>(dt::tensor<std::int32_t, Batch, Queries>{{1, 2, 6}, {3, 4, 5}});
  auto const out = attention(q, k, v, valid_lens);
  r.add("out", out);
  r.add("weights", attention.template attention_weights<Batch, Queries, KVPairs>());
  auto const loss = dt::sum(out * out);
  r.add("loss", loss);
  loss.backward();
  // No parameters of its own: the operands are the variables.
  optimize(r, dt::optim::parameter_list(q, k, v), [&](record& rr, std::string const& prefix, bool grads) {
    rr.add(prefix + "q", grads ? q.grad() : q);
    rr.add(prefix + "k", grads ? k.grad() : k);
    rr.add(prefix + "v", grads ? v.grad() : v);
  });
  return r;
}

template <class B>
record run_multi_head_attention(bool d2l_form) {
  record r;
  dt::generator gen(51);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat, float, B> mha(
      KeyFeat(3), QueryFeat(4), ValueFeat(5), Hidden(6), dt::nn::Heads(2), 0.2, true, gen, 9);
  add_parameters(r, mha, "init.");
  dt::generator data(52);
  auto const queries = on<B>(dt::randn<float>(data, Batch(2), Queries(3), QueryFeat(4)));
  auto const keys = on<B>(dt::randn<float>(data, Batch(2), KVPairs(4), KeyFeat(3)));
  auto const values = on<B>(dt::randn<float>(data, Batch(2), KVPairs(4), ValueFeat(5)));
  auto const labels = on<B>(dt::randint<std::int64_t>(data, 0, 6, Batch(2), Queries(3)));
  auto const valid_lens = on<B>(dt::tensor<std::int64_t, Batch>{2, 3});
  if (d2l_form) {
    auto const out = mha.forward_d2l(queries, keys, values, valid_lens);
    r.add("out", out);
    r.add("weights", mha.attention.template attention_weights<dt::nn::BatchHeads, Queries, KVPairs>());
    auto const loss = dt::nn::cross_entropy<Hidden>(out, labels);
    r.add("loss", loss);
    loss.backward();
  } else {
    auto const out = mha(queries, keys, values, valid_lens);
    r.add("out", out);
    r.add("weights", mha.attention.template attention_weights<Batch, Queries, dt::nn::Heads, KVPairs>());
    auto const loss = dt::sum(dt::nn::masked_softmax_ce_loss<Queries, Hidden>(out, labels, valid_lens));
    r.add("loss", loss);
    loss.backward();
  }
  add_gradients(r, mha, "grad.");
  optimize_module(r, mha);
  return r;
}

template <class B>
record run_embedding() {
  record r;
  dt::generator gen(61);
  dt::nn::embedding<Vocab, Embed, float, B> emb(Vocab(7), Embed(3), gen);
  add_parameters(r, emb, "init.");
  dt::generator data(62);
  auto const ids = on<B>(dt::randint<std::int64_t>(data, 0, 7, Batch(2), Steps(5)));
  auto const labels = on<B>(dt::randint<std::int32_t>(data, 0, 3, Batch(2), Steps(5)));
  auto const out = emb(ids);
  r.add("out", out);
  auto const loss = dt::nn::cross_entropy<Embed>(out, labels, dt::nn::reduction::sum);
  r.add("loss", loss);
  loss.backward();
  add_gradients(r, emb, "grad.");
  optimize_module(r, emb);
  return r;
}

template <class B>
record run_layer_norm() {
  record r;
  dt::nn::layer_norm<Hidden, float, B> norm(Hidden(5));
  dt::generator data(71);
  auto x = on<B>(dt::randn<float>(data, Batch(2), Hidden(5), Steps(3)));  // Feat not last
  x.requires_grad_();
  auto const target = on<B>(dt::randn<float>(data, Batch(2), Hidden(5), Steps(3)));
  auto const y = norm(x);
  r.add("y", y);
  auto const loss = dt::nn::mse_loss(y, target, dt::nn::reduction::sum);
  r.add("loss", loss);
  loss.backward();
  r.add("x.grad", x.grad());
  add_gradients(r, norm, "grad.");
  optimize_module(r, norm);
  return r;
}

template <class B>
record run_feed_forward() {
  record r;
  dt::generator gen(81);
  dt::nn::feed_forward<Feat, FFNHidden, Feat, float, B> ffn(Feat(4), FFNHidden(6), Feat(4), gen);
  add_parameters(r, ffn, "init.");
  dt::generator data(82);
  auto const x = on<B>(dt::randn<float>(data, Batch(2), Steps(3), Feat(4)));
  auto const target = on<B>(dt::randn<float>(data, Batch(2), Steps(3), Feat(4)));
  auto const y = ffn(x);
  r.add("y", y);
  auto const loss = dt::nn::mse_loss(y, target);
  r.add("loss", loss);
  loss.backward();
  add_gradients(r, ffn, "grad.");
  optimize_module(r, ffn);
  return r;
}

template <class B>
record run_gru() {
  record r;
  dt::generator gen(91);
  dt::nn::gru<Steps, Batch, Embed, Hidden, float, B> rnn(Embed(3), Hidden(4), 2, 0.3, gen, 11);
  add_parameters(r, rnn, "init.");
  dt::generator data(92);
  auto const x = on<B>(dt::randn<float>(data, Batch(2), Steps(5), Embed(3)));  // batch-major
  auto h0 = on<B>(dt::randn<float>(data, dt::nn::Layers(2), Batch(2), Hidden(4)));
  h0.requires_grad_();
  auto const [y, state] = rnn(x, h0);
  static_assert(std::is_same_v<typename std::remove_cvref_t<decltype(state)>::backend, B>);
  r.add("y", y);
  r.add("state", state);
  auto const loss = dt::eval(dt::sum(y * y) + dt::sum(state));
  r.add("loss", loss);
  loss.backward();
  r.add("h0.grad", h0.grad());
  add_gradients(r, rnn, "grad.");
  optimize_module(r, rnn);
  return r;
}

template <class B>
record run_nadaraya_watson() {
  record r;
  dt::generator data(101);
  auto const x_train = on<B>(dt::rand<float>(data, Train(8)));
  auto const y_train = on<B>(dt::randn<float>(data, Train(8)));
  auto const x_test = on<B>(dt::rand<float>(data, Test(5)));
  auto const y_test = on<B>(dt::randn<float>(data, Test(5)));
  auto w = on<B>(dt::tensor<float, Train::fixed<1>>{2.5f});
  w.requires_grad_();
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train, w);
  r.add("y_hat", y_hat);
  auto const loss = dt::nn::mse_loss(y_hat, y_test);
  r.add("loss", loss);
  loss.backward();
  r.add("w.grad", w.grad());
  dt::optim::sgd sgd(w, 0.5);
  sgd.step();
  r.add("w", w);
  return r;
}

template <class B>
record run_dropout() {
  record r;
  dt::nn::dropout drop(0.4, 13);
  dt::generator data(111);
  auto x = on<B>(dt::randn<float>(data, Batch(3), Feat(7)));
  x.requires_grad_();
  auto const y = drop(x);
  r.add("y", y);
  dt::sum(y * y).backward();
  r.add("x.grad", x.grad());
  drop.eval();
  r.add("eval", drop(x));
  return r;
}

// One Thrust system: OpenMP's where it is (its kernels run in parallel, the
// stronger check), else the C++ system. The two systems share every line of
// the backend but the execution policy, and every kernel is checked on both
// against plain loops in backends/conformance/; a second instantiation of
// every module here would double this file's compile time (the heaviest of
// the unit tests) for no new check.
#if defined(_OPENMP)
#define BACKEND_GENERIC_TEST_BACKENDS dt::thrust_omp
#else
#define BACKEND_GENERIC_TEST_BACKENDS dt::thrust_cpp
#endif

TEMPLATE_TEST_CASE("modules: linear on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_linear<dt::cpu>(), run_linear<TestType>());
}

TEMPLATE_TEST_CASE("modules: additive attention on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_additive_attention<dt::cpu>(), run_additive_attention<TestType>());
}

TEMPLATE_TEST_CASE("modules: dot-product attention on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_dot_product_attention<dt::cpu>(), run_dot_product_attention<TestType>());
}

TEMPLATE_TEST_CASE("modules: multi-head attention (both forms) on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  auto const d2l_form = GENERATE(false, true);
  INFO("d2l form: " << d2l_form);
  compare(run_multi_head_attention<dt::cpu>(d2l_form), run_multi_head_attention<TestType>(d2l_form));
}

TEMPLATE_TEST_CASE("modules: embedding on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_embedding<dt::cpu>(), run_embedding<TestType>());
}

TEMPLATE_TEST_CASE("modules: layer_norm on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_layer_norm<dt::cpu>(), run_layer_norm<TestType>());
}

TEMPLATE_TEST_CASE("modules: feed_forward on another backend matches the cpu", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_feed_forward<dt::cpu>(), run_feed_forward<TestType>());
}

TEMPLATE_TEST_CASE("modules: gru (two layers, dropout, given state) on another backend matches the cpu",
                   "[nn][thrust]", BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_gru<dt::cpu>(), run_gru<TestType>());
}

TEMPLATE_TEST_CASE("modules: Nadaraya-Watson with a learned width on another backend matches the cpu",
                   "[nn][thrust]", BACKEND_GENERIC_TEST_BACKENDS) {
  compare(run_nadaraya_watson<dt::cpu>(), run_nadaraya_watson<TestType>());
}

TEMPLATE_TEST_CASE("modules: dropout draws the same masks on every backend", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  record const expected = run_dropout<dt::cpu>();
  compare(expected, run_dropout<TestType>(), 0.0);
  std::size_t dropped = 0;
  for (double v : expected.entries[0].second) dropped += v == 0.0 ? 1 : 0;
  CHECK(dropped > 0);  // the mask drops something
}

TEMPLATE_TEST_CASE("losses: a label out of range is named on every backend", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  auto const logits = on<TestType>(dt::zeros<float>(Batch(2), Vocab(3)));
  auto const labels = on<TestType>(dt::tensor<std::int64_t, Batch>{1, 5});
  CHECK_THROWS_WITH(dt::nn::cross_entropy<Vocab>(logits, labels),
                    Catch::Contains("label 5 at labels[Batch=1]") && Catch::Contains("Vocab"));
}

TEMPLATE_TEST_CASE("losses: a mean over no positions is NaN on every backend", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  auto const logits = on<TestType>(dt::zeros<float>(Batch(0), Vocab(3)));
  auto const labels = on<TestType>(dt::zeros<std::int64_t>(Batch(0)));
  CHECK(std::isnan(dt::nn::cross_entropy<Vocab>(logits, labels).item()));
  CHECK(dt::nn::cross_entropy<Vocab>(logits, labels, dt::nn::reduction::sum).item() == 0.0f);
}

TEMPLATE_TEST_CASE("optim: SGD and Adam on another backend keep the cpu's numbers exactly", "[optim][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  // Elementwise updates in the element type: the same operations on every
  // host system, so the same bits.
  auto const run = [](auto tag) {
    using B = decltype(tag);
    dt::generator data(121);
    auto w = on<B>(dt::randn<double>(data, Feat(37)));
    auto v = on<B>(dt::randn<float>(data, Batch(3), Feat(5)));
    w.requires_grad_();
    v.requires_grad_();
    record r;
    dt::optim::sgd sgd(dt::optim::parameter_list(w, v), 0.05, 0.8, 0.1);
    dt::optim::adam adam(dt::optim::parameter_list(w, v), 0.02, {0.8, 0.99}, 1e-6, 0.05);
    for (int step = 0; step < 3; ++step) {
      sgd.zero_grad();
      dt::eval(dt::sum(w * w * w) + dt::cast<double>(dt::sum(v * v))).backward();
      sgd.step();
      adam.step();
      r.add("w", w);
      r.add("v", v);
    }
    return r;
  };
  compare(run(dt::cpu{}), run(TestType{}), 0.0);
}

// The operands of the program tests below, on backend B: x [2, 3000] and
// b [3000] requiring gradients, and the result's gradient g (several blocks
// of the CPU's passes and a ragged last one).
template <class B>
struct program_operands {
  dt::generator data;
  dt::basic_tensor<B, float, Batch, Feat> x;
  dt::basic_tensor<B, float, Feat> b;
  dt::basic_tensor<B, float, Batch, Feat> g;
  explicit program_operands(std::uint64_t seed)
      : data(seed),
        x(on<B>(dt::randn<float>(data, Batch(2), Feat(3000)))),
        b(on<B>(dt::randn<float>(data, Feat(3000)))),
        g(on<B>(dt::randn<float>(data, Batch(2), Feat(3000)))) {
    x.requires_grad_();
    b.requires_grad_();
  }
};

TEMPLATE_TEST_CASE("a program's backward pass: the CPU's blocks and the interpreter agree on a tensor read often",
                   "[autograd][thrust]", BACKEND_GENERIC_TEST_BACKENDS) {
  // The CPU's runtime writes a leaf's gradients straight into the tensor's
  // gradient where that sums them in the interpreter's order, and keeps
  // them apart where it would not; a step read twice gets its gradient set
  // and then added to in place.  Over 2 x 3000 floats: several blocks and
  // a ragged last one.
  auto const run = [](auto tag, int which) {
    program_operands<decltype(tag)> in(131);
    auto &x = in.x, &b = in.b;
    auto const& g = in.g;
    if (which == 0) {
      // x read twice, each read's one gradient in the leaves' order: straight to x's gradient
      dt::eval(x * 0.5f * (x * x * 0.7f + 1.0f)).backward(g);
    } else if (which == 1) {
      // the reads' gradients in another order, and b broadcast: kept apart
      dt::eval(x * x * x * b + x * b * 2.0f).backward(g);
    } else {
      // a step read by two others (its gradient set, then added to)
      auto const y = x * x;
      dt::eval(y * y * b - y).backward(g);
    }
    record r;
    r.add("x", x.grad());
    if (which != 0) r.add("b", b.grad());
    return r;
  };
  for (int which = 0; which < 3; ++which) {
    INFO("case " << which);
    compare(run(dt::cpu{}, which), run(TestType{}, which), 1e-6);
  }
}

TEMPLATE_TEST_CASE("a program's steps that multiply by a scalar or add one: the CPU folds them into their readers, "
                   "and agrees with the interpreter, which runs them",
                   "[autograd][thrust]", BACKEND_GENERIC_TEST_BACKENDS) {
  // The CPU's runtime runs x * c and x + c (c a scalar) as a factor or an
  // addend of the steps that read them, forward and backward; the
  // interpreter runs every step.
  // Over 2 x 3000 floats, with costly functions so that the forward pass
  // runs in the runtime too.
  auto const run = [](auto tag, int which) {
    using B = decltype(tag);
    program_operands<B> in(137);
    auto &x = in.x, &b = in.b;
    auto const& g = in.g;
    dt::basic_tensor<B, float, Batch, Feat> y;
    if (which == 0) {
      // GELU as users write it: x * 0.5 and x * 0.7071 folded
      y = dt::eval(x * 0.5f * (dt::erf(x * 0.70710678f) + 1.0f));
    } else if (which == 1) {
      // a factor on an operand whose gradient passes (+), the scalar on the left
      y = dt::eval((x * 3.0f + b) * dt::sigmoid(2.0f * x));
    } else if (which == 2) {
      // x * 0.5 * 0.25: the second factor reads a folded step, so it runs
      y = dt::eval(dt::exp(x * 0.5f * 0.25f) * (x * b * 0.5f));
    } else if (which == 3) {
      // the result a product by a scalar: it runs
      y = dt::eval(dt::tanh(x * 1.5f) * 2.0f);
    } else {
      // addends: c + x, x - c, and + 0 (not nothing: -0 + 0 is +0)
      y = dt::eval(dt::exp(0.5f + x) * (x - 2.0f) * b + dt::cos(x * b + 0.0f));
    }
    y.backward(g);
    record r;
    r.add("y", y);
    r.add("x", x.grad());
    if (which != 0 && which != 3) r.add("b", b.grad());
    return r;
  };
  for (int which = 0; which < 5; ++which) {
    INFO("case " << which);
    compare(run(dt::cpu{}, which), run(TestType{}, which), 1e-5);
  }
}

TEMPLATE_TEST_CASE("optim: on the cpu, SGD and Adam are PyTorch's formulas bit for bit", "[optim]", float, double) {
  using T = TestType;
  dt::generator data(141);
  auto w = dt::randn<T>(data, Feat(29));
  w.requires_grad_();
  auto u = w.clone().detach();
  u.requires_grad_();
  std::vector<T> ref_w(w.data(), w.data() + w.size()), ref_u = ref_w;
  std::vector<T> buf(ref_w.size()), m(ref_w.size()), v(ref_w.size());
  dt::optim::sgd sgd(w, 0.05, 0.9, 0.01);
  dt::optim::adam adam(u, 0.01, {0.8, 0.99}, 1e-6, 0.02);
  for (int step = 1; step <= 3; ++step) {
    sgd.zero_grad();
    adam.zero_grad();
    dt::sum(w * w * w).backward();
    dt::sum(u * u * u).backward();
    T const* g = w.grad().data();
    T const* h = u.grad().data();
    for (std::size_t i = 0; i < ref_w.size(); ++i) {
      T d = g[i];
      d = d + static_cast<T>(0.01) * ref_w[i];
      buf[i] = step > 1 ? buf[i] * static_cast<T>(0.9) + d : d;
      d = buf[i];
      ref_w[i] = ref_w[i] + static_cast<T>(-0.05) * d;
    }
    double const c1 = 1 - std::pow(0.8, step);
    double const c2 = 1 - std::pow(0.99, step);
    for (std::size_t i = 0; i < ref_u.size(); ++i) {
      T x = h[i];
      x = x + static_cast<T>(0.02) * ref_u[i];
      m[i] = m[i] * static_cast<T>(0.8) + static_cast<T>(1 - 0.8) * x;
      v[i] = v[i] * static_cast<T>(0.99) + static_cast<T>(1 - 0.99) * (x * x);
      T const denom = std::sqrt(v[i]) / static_cast<T>(std::sqrt(c2)) + static_cast<T>(1e-6);
      ref_u[i] = ref_u[i] + static_cast<T>(-(0.01 / c1)) * (m[i] / denom);
    }
    sgd.step();
    adam.step();
    for (std::size_t i = 0; i < ref_w.size(); ++i) {
      INFO("step " << step << ", element " << i);
      CHECK(w.data()[i] == ref_w[i]);
      CHECK(u.data()[i] == ref_u[i]);
    }
  }
}

TEMPLATE_TEST_CASE("parameters: saved on one backend, loaded on another", "[nn][thrust]",
                   BACKEND_GENERIC_TEST_BACKENDS) {
  test_support::temp_dir const dir("dimtensor_backend_generic_");
  dt::generator g1(131), g2(132);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat, float, TestType> source(
      KeyFeat(3), QueryFeat(4), ValueFeat(5), Hidden(6), dt::nn::Heads(2), 0.0, true, g1);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat, float, dt::cpu> on_cpu(
      KeyFeat(3), QueryFeat(4), ValueFeat(5), Hidden(6), dt::nn::Heads(2), 0.0, true, g2);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat, float, TestType> back(
      KeyFeat(3), QueryFeat(4), ValueFeat(5), Hidden(6), dt::nn::Heads(2), 0.0, true, g2);
  record want;
  add_parameters(want, source, "");
  for (auto const& name : {std::string("folder"), std::string("weights.safetensors")}) {
    INFO(name);
    dt::nn::save_parameters(source, dir / name);
    dt::nn::load_parameters(on_cpu, dir / name);
    record got;
    add_parameters(got, on_cpu, "");
    compare(want, got, 0.0);
    dt::nn::save_parameters(on_cpu, dir / ("cpu_" + name));
    dt::nn::load_parameters(back, dir / ("cpu_" + name));
    record again;
    add_parameters(again, back, "");
    compare(want, again, 0.0);
    CHECK(back.W_q.weight.requires_grad());
  }
}

}  // namespace backend_generic_test
