// nn::module: a struct of submodules and parameters declared once with
// BOOST_HANA_DEFINE_STRUCT gets PyTorch's state_dict keys (const and
// mutable), train()/eval() reaching every member, and works with
// zero_grad, the optimizers and save/load; every library module has the
// mode protocol.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/files.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace module_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);

// A block as the Transformer's: a sub-struct with a layer, a norm and a dropout.
struct block : nn::module<block> {
  BOOST_HANA_DEFINE_STRUCT(block, (nn::linear<Hidden, Hidden>, dense), (nn::layer_norm<Hidden>, ln),
                           (nn::dropout, dropout));
  block(Hidden h, dt::generator& gen) : dense(h, h, true, gen), ln(h), dropout(0.5) {}
};

// A model of every kind of member: modules, a tensor parameter, a vector
// and an array of modules, and a setting kept outside the macro.
struct model : nn::module<model> {
  BOOST_HANA_DEFINE_STRUCT(model, (nn::embedding<Vocab, Embed>, embedding), (nn::gru<Steps, Batch, Embed, Hidden>, rnn),
                           (dt::tensor<float>, scale), (std::vector<block>, blks),
                           (std::array<nn::linear<Hidden, FFN>, 2>, heads));
  int num_blocks;

  explicit model(dt::generator& gen)
      : embedding(Vocab(5), Embed(3), gen),
        rnn(Embed(3), Hidden(4), 2, 0.1, gen),
        scale(dt::full<float>(2.0f)),
        heads{nn::linear<Hidden, FFN>(Hidden(4), FFN(2), true, gen),
              nn::linear<Hidden, FFN>(Hidden(4), FFN(2), false, gen)},
        num_blocks(2) {
    scale.requires_grad_();
    for (int i = 0; i < num_blocks; ++i) blks.emplace_back(Hidden(4), gen);
  }
};
}  // namespace module_test

using namespace module_test;

namespace {
// Whether two contiguous parameters hold the same numbers.
template <class A, class B>
bool same_values(A const& a, B const& b) {
  return std::vector<float>(a.data(), a.data() + a.size()) == std::vector<float>(b.data(), b.data() + b.size());
}

std::vector<std::string> const model_keys{
    "embedding.weight",    "rnn.weight_ih_l0",  "rnn.weight_hh_l0", "rnn.bias_ih_l0", "rnn.bias_hh_l0",
    "rnn.weight_ih_l1",    "rnn.weight_hh_l1",  "rnn.bias_ih_l1",   "rnn.bias_hh_l1", "scale",
    "blks.0.dense.weight", "blks.0.dense.bias", "blks.0.ln.weight", "blks.0.ln.bias", "blks.1.dense.weight",
    "blks.1.dense.bias",   "blks.1.ln.weight",  "blks.1.ln.bias",   "heads.0.weight", "heads.0.bias",
    "heads.1.weight"};
}  // namespace

TEST_CASE("module: a reflected struct lists its parameters under PyTorch's keys", "[nn][module]") {
  dt::generator gen(3);
  model m(gen);
  STATIC_REQUIRE(nn::Module<model>);
  STATIC_REQUIRE(nn::Module<block>);

  std::vector<std::string> keys;
  std::vector<void const*> addresses;
  m.for_each_parameter([&](std::string const& key, auto& p) {
    keys.push_back(key);
    addresses.push_back(&p);
  });
  CHECK(keys == model_keys);
  REQUIRE(addresses.size() == model_keys.size());
  // The parameters are the members themselves.
  CHECK(addresses[0] == &m.embedding.weight);
  CHECK(addresses[1] == &m.rnn.first_layer.weight_ih);
  CHECK(addresses[9] == &m.scale);
  CHECK(addresses[14] == &m.blks[1].dense.weight);
  CHECK(addresses[20] == &m.heads[1].weight);

  // Read-only, with a prefix, as a parent module passes it on.
  keys.clear();
  std::as_const(m).for_each_parameter([&](std::string const& key, auto const&) { keys.push_back(key); }, "model.");
  REQUIRE(keys.size() == model_keys.size());
  CHECK(keys.front() == "model.embedding.weight");
  CHECK(keys.back() == "model.heads.1.weight");
  CHECK(nn::parameter_names(m) == model_keys);

  // 5·3 + GRU (3·12 + 4·12 + 12 + 12) + (4·12 + 4·12 + 12 + 12) + 1 + 2·(16 + 4 + 4 + 4) + (8 + 2) + 8
  CHECK(nn::parameter_count(m) == 15 + 108 + 120 + 1 + 56 + 10 + 8);
}

TEST_CASE("module: train() and eval() reach every member, nested and in sequences", "[nn][module]") {
  dt::generator gen(3);
  model m(gen);
  CHECK(m.is_training());
  CHECK(m.rnn.is_training());
  CHECK(m.rnn.dropout.is_training());
  CHECK(m.blks[1].dropout.is_training());

  model& same = m.eval();
  CHECK(&same == &m);
  CHECK_FALSE(m.is_training());
  CHECK_FALSE(m.embedding.is_training());
  CHECK_FALSE(m.rnn.is_training());
  CHECK_FALSE(m.rnn.dropout.is_training());
  CHECK_FALSE(m.blks[0].is_training());
  CHECK_FALSE(m.blks[0].dropout.is_training());
  CHECK_FALSE(m.blks[1].dropout.is_training());
  CHECK_FALSE(m.heads[1].is_training());

  m.blks[1].train();  // a child alone
  CHECK(m.blks[1].dropout.is_training());
  CHECK_FALSE(m.blks[0].dropout.is_training());

  m.train();
  CHECK(m.blks[0].dropout.is_training());
  CHECK(m.rnn.dropout.is_training());

  // Evaluation mode changes what the members compute: the block's dropout is the identity.
  auto const x = dt::ones<float>(Batch(2), Hidden(4));
  m.eval();
  auto const y = m.blks[0].dropout(x);
  CHECK(same_values(y, x));
}

TEST_CASE("module: zero_grad, an optimizer and save/load walk the reflected parameters", "[nn][module]") {
  dt::generator gen(4);
  model m(gen);
  m.eval();
  dt::tensor<std::int64_t, Steps, Batch> const indices{{0, 1}, {2, 3}, {4, 0}};
  auto [outputs, state] = m.rnn(m.embedding(indices));
  (void)state;
  dt::sum(m.heads[0](outputs * m.scale)).backward();
  CHECK(m.scale.grad().item() != 0.0f);
  CHECK(m.embedding.weight.grad().size() == 15);

  dt::optim::sgd opt(m, 0.1);
  float const before = m.scale.item();
  opt.step();
  CHECK(m.scale.item() == Approx(before - 0.1f * m.scale.grad().item()));

  nn::zero_grad(m);
  bool any_grad = false;
  m.for_each_parameter([&](std::string const&, auto const& p) { any_grad = any_grad || p.has_grad(); });
  CHECK_FALSE(any_grad);

  test_support::temp_dir dir("module_test_");
  nn::save_parameters(m, dir.path() / "model.safetensors");
  dt::generator other_gen(99);
  model other(other_gen);
  CHECK(other.scale.item() == 2.0f);
  CHECK_FALSE(same_values(other.blks[1].dense.weight, m.blks[1].dense.weight));
  nn::load_parameters(other, dir.path() / "model.safetensors");
  CHECK(other.scale.item() == m.scale.item());
  CHECK(same_values(other.blks[1].dense.weight, m.blks[1].dense.weight));
  CHECK(same_values(other.rnn.upper_layers[0].bias_hh, m.rnn.upper_layers[0].bias_hh));
}

namespace {
template <class M>
constexpr bool has_mode_protocol = requires(M& m, M const& c) {
  { m.train() } -> std::same_as<M&>;
  { m.train(false) } -> std::same_as<M&>;
  { m.eval() } -> std::same_as<M&>;
  { c.is_training() } -> std::same_as<bool>;
};
}  // namespace

TEST_CASE("module: every library module has train(), eval() and is_training()", "[nn][module]") {
  STATIC_REQUIRE(has_mode_protocol<nn::linear<Embed, Hidden>>);
  STATIC_REQUIRE(has_mode_protocol<nn::embedding<Vocab, Embed>>);
  STATIC_REQUIRE(has_mode_protocol<nn::layer_norm<Hidden>>);
  STATIC_REQUIRE(has_mode_protocol<nn::dropout>);
  STATIC_REQUIRE(has_mode_protocol<nn::gru<Steps, Batch, Embed, Hidden>>);
  STATIC_REQUIRE(has_mode_protocol<nn::feed_forward<Hidden, FFN>>);
  STATIC_REQUIRE(has_mode_protocol<nn::dot_product_attention<Steps, Vocab, Hidden>>);
  STATIC_REQUIRE(has_mode_protocol<nn::additive_attention<Steps, Vocab, Embed, Hidden, FFN>>);
  STATIC_REQUIRE(has_mode_protocol<nn::multi_head_attention<Steps, Vocab, Hidden>>);
  STATIC_REQUIRE(has_mode_protocol<block>);

  // A composite's eval() reaches the dropout inside the attention inside it.
  nn::multi_head_attention<Steps, Vocab, Hidden> mha(Hidden(4), Hidden(4), Hidden(4), Hidden(4), nn::Heads(2), 0.5);
  CHECK(mha.attention.dropout.is_training());
  mha.eval();
  CHECK_FALSE(mha.attention.dropout.is_training());
  CHECK_FALSE(mha.W_o.is_training());
  CHECK(nn::parameter_names(mha) == std::vector<std::string>{"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"});
}
