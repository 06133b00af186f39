// Parity of models::bert with transformers' BertModel
// (tests/parity/goldens_bert.py, transformers 5.25.0): a tiny random model
// written by save_pretrained is loaded from its folder (config.json and
// model.safetensors, by transformers' keys through bert_schema()) and run in
// eval mode on a right-padded batch with token types.  Float32: the hidden
// states and the pooled output within 1e-5.  Float64 (the same weights):
// both outputs, and the gradient of every parameter of sum(h * R_h) +
// sum(pooled * R_p) within 1e-9 of its largest element (the padding row of
// the word embeddings gets none, as nn.Embedding's padding_idx).  Then what a user gets wrong:
// a config whose sizes are not the checkpoint's, a left-padded mask, a
// config the model cannot build.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io.hpp>
#include <dimtensor/models/bert.hpp>

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

namespace bert_parity {

using models::Batch;
using models::Hidden;
using models::Tokens;
using parity_support::check_close;
using parity_support::data_dir;
using parity_support::load;

using ids_t = dt::tensor<std::int64_t, Batch, Tokens>;


/// A copy of the golden folder with config.json's text @p from replaced by @p to.
std::filesystem::path edited_copy(std::string const& name, std::string const& from, std::string const& to) {
  auto const src = data_dir("models", "bert");
  auto const dir = std::filesystem::temp_directory_path() / ("dimtensor_bert_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(src / "model.safetensors", dir / "model.safetensors");
  std::ifstream in(src / "config.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto const at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(dir / "config.json") << text;
  return dir;
}

}  // namespace bert_parity

using namespace bert_parity;

TEST_CASE("models::bert matches transformers' BertModel in float32", "[parity][models][bert]") {
  auto const dir = data_dir("models", "bert");
  auto net = models::bert<>::from_pretrained(dir);
  CHECK(net.config().hidden_size == 32);
  CHECK(net.config().layer_norm_eps == 1e-12);
  CHECK(net.encoder.blks.size() == 2);
  CHECK(net.encoder.blks[0].ffn.act() == nn::activation::gelu);
  auto const ids = load<ids_t>(dir, "input_ids");
  auto const lens = models::lengths_from_mask(load<ids_t>(dir, "attention_mask"));
  auto const host_lens = dt::to<dt::cpu>(lens);
  CHECK(std::vector<std::int64_t>(host_lens.data(), host_lens.data() + 3) == std::vector<std::int64_t>{9, 6, 2});
  auto const out = net(ids, lens, load<ids_t>(dir, "token_type_ids"));
  check_close("last_hidden_state", out.last_hidden_state,
              load<dt::tensor<float, Batch, Tokens, Hidden>>(dir, "f32_last_hidden_state"));
  check_close("pooler_output", out.pooler_output, load<dt::tensor<float, Batch, Hidden>>(dir, "f32_pooler_output"));
}

TEST_CASE("models::bert matches transformers' BertModel in float64: outputs and every parameter's gradient",
          "[parity][models][bert]") {
  auto const dir = data_dir("models", "bert");
  using model_t = models::bert<Batch, Tokens, double>;
  auto net = model_t::from_pretrained(dir);
  auto const ids = load<ids_t>(dir, "input_ids");
  auto const out = net(ids, models::lengths_from_mask(load<ids_t>(dir, "attention_mask")),
                       load<ids_t>(dir, "token_type_ids"));
  using h_t = dt::tensor<double, Batch, Tokens, Hidden>;
  using p_t = dt::tensor<double, Batch, Hidden>;
  check_close("last_hidden_state", out.last_hidden_state, load<h_t>(dir, "f64_last_hidden_state"), 1e-10);
  check_close("pooler_output", out.pooler_output, load<p_t>(dir, "f64_pooler_output"), 1e-10);

  dt::eval(dt::sum(out.last_hidden_state * load<h_t>(dir, "f64_R_h")) +
           dt::sum(out.pooler_output * load<p_t>(dir, "f64_R_p")))
      .backward();
  // transformers' gradients under its own keys, through the same schema:
  // every one of them is some parameter's
  model_t golden(net.config());
  nn::load_checkpoint(golden, dir / "f64_gradients.safetensors", models::bert_schema());
  parity_support::check_gradients(net, golden, 39, 1e-9);
}

TEST_CASE("models::bert matches transformers' BertModel with masks of any pattern (left padding, holes)",
          "[parity][models][bert]") {
  auto const dir = data_dir("models", "bert");
  auto const ids = load<ids_t>(dir, "masked_input_ids");
  auto const mask = load<ids_t>(dir, "masked_attention_mask");
  {
    auto net = models::bert<>::from_pretrained(dir);
    // Every position, padding too: each query row reads the tokens the mask marks.
    check_close("masked last_hidden_state (float32)", net(ids, mask).last_hidden_state,
                load<dt::tensor<float, Batch, Tokens, Hidden>>(dir, "f32_masked_last_hidden_state"));
  }
  auto net = models::bert<Batch, Tokens, double>::from_pretrained(dir);
  auto const out = net(ids, mask, dt::zeros<std::int64_t>(Batch(3), Tokens(9)));
  check_close("masked last_hidden_state (float64)", out.last_hidden_state,
              load<dt::tensor<double, Batch, Tokens, Hidden>>(dir, "f64_masked_last_hidden_state"), 1e-10);
  // A mask of ones then zeros gives what its lengths give.
  auto const right = load<ids_t>(dir, "attention_mask");
  auto const by_lengths = net(load<ids_t>(dir, "input_ids"), models::lengths_from_mask(right));
  check_close("mask against lengths", net(load<ids_t>(dir, "input_ids"), right).last_hidden_state,
              by_lengths.last_hidden_state, 1e-13);
}

TEST_CASE("models::bert: a config that is not the checkpoint's, a mask it cannot take, a model it cannot build",
          "[parity][models][bert]") {
  SECTION("intermediate_size off by one: the loader names the parameter and the dims") {
    auto const dir = edited_copy("typo", "\"intermediate_size\": 37", "\"intermediate_size\": 38");
    CHECK_THROWS_WITH(models::bert<>::from_pretrained(dir),
                      Catch::Contains("encoder.blks.0.ffn.dense1.weight") && Catch::Contains("Intermediate 38"));
  }
  SECTION("a size that is no extent") {
    auto const dir = edited_copy("string", "\"hidden_size\": 32", "\"hidden_size\": \"32\"");
    CHECK_THROWS_AS(models::bert<>::from_pretrained(dir), dt::io_error);
    CHECK_THROWS_WITH(models::bert<>::from_pretrained(dir),
                      Catch::Contains("\"hidden_size\" is \"32\" where a positive integer (an extent) belongs"));
  }
  SECTION("heads that do not divide the hidden size") {
    auto const dir = edited_copy("heads", "\"num_attention_heads\": 4", "\"num_attention_heads\": 5");
    CHECK_THROWS_WITH(models::bert<>::from_pretrained(dir),
                      Catch::Contains("hidden_size 32 is not a multiple of num_attention_heads 5"));
  }
  SECTION("an activation the library lacks") {
    auto const dir = edited_copy("act", "\"hidden_act\": \"gelu\"", "\"hidden_act\": \"mish\"");
    CHECK_THROWS_WITH(models::bert<>::from_pretrained(dir), Catch::Contains("activation \"mish\""));
  }
  SECTION("relative position embeddings") {
    auto const dir = edited_copy("relative", "\"model_type\": \"bert\"",
                                 "\"model_type\": \"bert\", \"position_embedding_type\": \"relative_key\"");
    CHECK_THROWS_WITH(models::bert<>::from_pretrained(dir), Catch::Contains("position_embedding_type \"relative_key\""));
  }
  SECTION("no config.json") {
    auto const dir = std::filesystem::temp_directory_path() / "dimtensor_bert_empty";
    std::filesystem::create_directories(dir);
    CHECK_THROWS_WITH(models::bert<>::from_pretrained(dir), Catch::Contains("cannot open") && Catch::Contains("config.json"));
  }
  SECTION("a left-padded mask") {
    auto mask = dt::ones<std::int64_t>(Batch(2), Tokens(4));
    mask.data()[4] = 0;   // row 1: 0 1 1 1
    CHECK_THROWS_WITH(models::lengths_from_mask(mask), Catch::Contains("row 1 of the mask is not ones then zeros at Tokens 1"));
  }
  SECTION("a mask value other than 0 and 1") {
    auto net = models::bert<>::from_pretrained(data_dir("models", "bert"));
    auto const ids = dt::zeros<std::int64_t>(Batch(1), Tokens(3));
    auto mask = dt::ones<std::int64_t>(Batch(1), Tokens(3));
    mask.data()[2] = 2;
    CHECK_THROWS_WITH(net(ids, mask), Catch::Contains("attention_mask holds 2 at row 0, Tokens 2"));
  }
  SECTION("more tokens than positions") {
    auto net = models::bert<>::from_pretrained(data_dir("models", "bert"));
    auto const ids = dt::zeros<std::int64_t>(Batch(1), Tokens(65));
    CHECK_THROWS_WITH(net(ids), Catch::Contains("65 tokens but 64 positions"));
  }
}
