// Parity of models::gpt2 with transformers' GPT2LMHeadModel
// (tests/parity/goldens_gpt2.py, transformers 5.25.0): a tiny random model
// written by save_pretrained is loaded from its folder by transformers' keys
// through gpt2_schema() (Conv1D weights transposed, c_attn split into the
// query, key and value projections, lm_head tied to wte) and run in eval
// mode on a right-padded batch.  Float32: the last hidden states and the
// logits within 1e-5, and greedy decoding gives generate(do_sample=False)'s
// ids.  Float64: both outputs, and the gradient of every parameter of
// sum(logits * R) within 1e-9 of its largest element.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io.hpp>
#include <dimtensor/models/gpt2.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
namespace models = dimtensor::models;

namespace gpt2_parity {

using models::Batch;
using models::Hidden;
using models::Tokens;
using models::Vocab;
using parity_support::check_close;
using parity_support::data_dir;
using parity_support::load;

using ids_t = dt::tensor<std::int64_t, Batch, Tokens>;


}  // namespace gpt2_parity

using namespace gpt2_parity;

TEST_CASE("models::gpt2 matches transformers' GPT2LMHeadModel in float32: outputs and greedy decoding",
          "[parity][models][gpt2]") {
  auto const dir = data_dir("models", "gpt2");
  auto net = models::gpt2<>::from_pretrained(dir);
  CHECK(net.config().n_inner == 37);
  CHECK(net.h.size() == 2);
  CHECK(net.h[0].pre_norm());
  CHECK(net.h[0].ffn.act() == nn::activation::gelu_tanh);
  auto const ids = load<ids_t>(dir, "input_ids");
  auto const out = net(ids, models::lengths_from_mask(load<ids_t>(dir, "attention_mask")));
  check_close("last_hidden_state", out.last_hidden_state,
              load<dt::tensor<float, Batch, Tokens, Hidden>>(dir, "f32_last_hidden_state"));
  check_close("logits", out.logits, load<dt::tensor<float, Batch, Tokens, Vocab>>(dir, "f32_logits"));

  // decoding with the cache: the first 5 tokens, then 1, then 3, give the
  // whole sequence's logits at their positions
  {
    decltype(net)::cache c;
    dt::tensor<float, Batch, Tokens, Vocab> const whole = net(ids).logits;
    dt::index_t from = 0;
    for (dt::index_t n : {5, 1, 3}) {
      auto const part = net(dt::tensor<std::int64_t, Batch, Tokens>(dt::slice<Tokens>(ids, from, from + n)), c);
      INFO("steps " << from << " to " << from + n);
      check_close("logits with the cache", part.logits, dt::slice<Tokens>(whole, from, from + n));
      from += n;
    }
    CHECK(c.steps == 9);
    CHECK(c.keys[1]->extent<nn::SelfKeys>() == 9);
  }

  auto const prompt = load<ids_t>(dir, "prompt");
  auto const want = load<ids_t>(dir, "greedy");
  auto const got = models::greedy(net, prompt, 12);
  REQUIRE(got.extents() == want.extents());
  CHECK(dt::equal(got, want));
}

TEST_CASE("models::gpt2 matches transformers' GPT2LMHeadModel in float64: outputs and every parameter's gradient",
          "[parity][models][gpt2]") {
  auto const dir = data_dir("models", "gpt2");
  using model_t = models::gpt2<Batch, Tokens, double>;
  auto net = model_t::from_pretrained(dir);
  auto const out = net(load<ids_t>(dir, "input_ids"), models::lengths_from_mask(load<ids_t>(dir, "attention_mask")));
  using h_t = dt::tensor<double, Batch, Tokens, Hidden>;
  using l_t = dt::tensor<double, Batch, Tokens, Vocab>;
  check_close("last_hidden_state", out.last_hidden_state, load<h_t>(dir, "f64_last_hidden_state"), 1e-10);
  check_close("logits", out.logits, load<l_t>(dir, "f64_logits"), 1e-10);

  dt::eval(dt::sum(out.logits * load<l_t>(dir, "f64_R"))).backward();
  model_t golden(net.config());
  nn::load_checkpoint(golden, dir / "f64_gradients.safetensors", models::gpt2_schema());
  // wte, wpe; per block 4 projections, 2 norms, 2 layers; ln_f
  parity_support::check_gradients(net, golden, 2 + 2 * 16 + 2, 1e-9);
}

TEST_CASE("models::gpt2: what the loader and the model refuse", "[parity][models][gpt2]") {
  auto const dir = data_dir("models", "gpt2");
  SECTION("the BERT schema on a GPT-2 checkpoint: every key accounted for in one error") {
    models::bert<> bert(models::bert_config{.vocab_size = 99, .hidden_size = 32, .num_hidden_layers = 2,
                                            .num_attention_heads = 4, .intermediate_size = 37,
                                            .max_position_embeddings = 32});
    CHECK_THROWS_WITH(nn::load_checkpoint(bert, dir, models::bert_schema()),
                      Catch::Contains("parameters of the module with no tensor in the file") &&
                          Catch::Contains("tensors of the file that no parameter takes") &&
                          Catch::Contains("transformer.h.0.attn.c_attn.weight"));
  }
  SECTION("more tokens than positions, a length past the tokens") {
    auto net = models::gpt2<>::from_pretrained(dir);
    CHECK_THROWS_WITH(net(dt::zeros<std::int64_t>(Batch(1), Tokens(33))), Catch::Contains("33 tokens but 32 positions"));
    dt::tensor<std::int64_t, Batch> const lens{3};
    CHECK_THROWS_WITH(net(dt::zeros<std::int64_t>(Batch(1), Tokens(2)), lens),
                      Catch::Contains("length 3 of sequence 0 outside [0, 2]"));
    CHECK_THROWS_WITH(models::greedy(net, dt::zeros<std::int64_t>(Batch(1), Tokens(30)), 5),
                      Catch::Contains("33 tokens but 32 positions"));
    decltype(net)::cache c;
    (void)net(dt::zeros<std::int64_t>(Batch(1), Tokens(30)), c);
    CHECK_THROWS_WITH(net(dt::zeros<std::int64_t>(Batch(1), Tokens(3)), c), Catch::Contains("33 tokens but 32 positions"));
  }
}
