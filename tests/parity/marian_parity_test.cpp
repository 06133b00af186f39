// Parity of models::marian with transformers' MarianMTModel
// (tests/parity/goldens_marian.py, transformers 5.25.0): a tiny random model
// written by save_pretrained is loaded from its folder by transformers' keys
// through marian_schema() (the shared embedding, final_logits_bias as a
// buffer) and run in eval mode on right-padded sources and whole targets:
// the encoder's states and the logits within 1e-5 in float32 and 1e-10 in
// float64; decoding target steps with the cache gives the whole targets'
// logits; greedy translation gives generate(do_sample=False, num_beams=1)'s
// ids, and beam search generate(num_beams=4)'s for seven cases of length
// penalty, early stopping and hypotheses ending at different lengths.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io.hpp>
#include <dimtensor/models/marian.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <cstdint>
#include <string>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
namespace models = dimtensor::models;

namespace marian_parity {

using models::Batch;
using models::Hidden;
using models::TargetTokens;
using models::Tokens;
using models::Vocab;
using parity_support::check_close;
using parity_support::data_dir;
using parity_support::load;

using src_t = dt::tensor<std::int64_t, Batch, Tokens>;
using tgt_t = dt::tensor<std::int64_t, Batch, TargetTokens>;

template <class T>
void check_model(std::string const& prefix, double tol) {
  auto const dir = data_dir("models", "marian");
  auto net = models::marian<Batch, Tokens, TargetTokens, T>::from_pretrained(dir);
  auto const src = load<src_t>(dir, "input_ids");
  auto const lens = models::lengths_from_mask(load<src_t>(dir, "attention_mask"));
  auto const tgt = load<tgt_t>(dir, "decoder_input_ids");
  auto const out = net(src, lens, tgt);
  check_close(prefix + "encoder_last_hidden_state", out.encoder_last_hidden_state,
              load<dt::tensor<T, Batch, Tokens, Hidden>>(dir, prefix + "encoder_last_hidden_state"), tol);
  check_close(prefix + "logits", out.logits, load<dt::tensor<T, Batch, TargetTokens, Vocab>>(dir, prefix + "logits"), tol);
}

}  // namespace marian_parity

using namespace marian_parity;

TEST_CASE("models::marian matches transformers' MarianMTModel: encoder states and logits", "[parity][models][marian]") {
  check_model<float>("f32_", 1e-5);
  check_model<double>("f64_", 1e-10);
}

TEST_CASE("models::marian decodes with a cache as the whole targets, and translates greedily as generate",
          "[parity][models][marian]") {
  auto const dir = data_dir("models", "marian");
  auto net = models::marian<>::from_pretrained(dir);
  CHECK(net.config().scale_embedding);
  CHECK(net.encoder.blks[0].ffn.act() == nn::activation::silu);
  CHECK_FALSE(net.final_logits_bias.requires_grad());
  auto const src = load<src_t>(dir, "input_ids");
  auto const lens = models::lengths_from_mask(load<src_t>(dir, "attention_mask"));
  auto const tgt = load<tgt_t>(dir, "decoder_input_ids");
  auto const whole = net(src, lens, tgt).logits;
  auto const memory = net.encode(src, lens);
  decltype(net)::cache c;
  dt::index_t from = 0;
  for (dt::index_t n : {2, 1, 2}) {
    auto const part = net.decode(tgt_t(dt::slice<TargetTokens>(tgt, from, from + n)), memory, lens, c);
    INFO("steps " << from << " to " << from + n);
    check_close("logits with the cache", part, dt::slice<TargetTokens>(whole, from, from + n));
    from += n;
  }
  CHECK(c.steps == 5);

  auto const want = load<tgt_t>(dir, "greedy");
  auto const got = models::translate_greedy(net, src, lens, 10);
  REQUIRE(got.extents() == want.extents());
  CHECK(dt::equal(got, want));

  // the end token everywhere first: decoding stops after one step
  net.final_logits_bias(models::BiasRow(0), Vocab(net.config().eos_token_id)) = 1e4f;
  auto const ended = models::translate_greedy(net, src, lens, 10);
  REQUIRE(ended.extent<TargetTokens>() == 2);
  for (dt::index_t b = 0; b < 3; ++b) {
    CHECK(ended(Batch(b), TargetTokens(0)) == net.config().decoder_start_token_id);
    CHECK(ended(Batch(b), TargetTokens(1)) == net.config().eos_token_id);
  }
}

TEST_CASE("models::translate_beam gives generate(num_beams=4)'s ids", "[parity][models][marian]") {
  auto const dir = data_dir("models", "marian");
  auto net = models::marian<>::from_pretrained(dir);
  auto const src = load<src_t>(dir, "input_ids");
  auto const lens = models::lengths_from_mask(load<src_t>(dir, "attention_mask"));
  // goldens_marian.py's BEAM_CASES: the end token's logit bias raised by
  // the first number, the length penalty, early stopping.
  struct beam_case {
    float eos_bias;
    double length_penalty;
    models::early_stopping stop;
  };
  using models::early_stopping;
  beam_case const cases[] = {{0.0f, 1.0, early_stopping::heuristic}, {2.0f, 1.0, early_stopping::heuristic},
                             {2.0f, 2.0, early_stopping::heuristic}, {2.0f, 0.5, early_stopping::on_full},
                             {2.0f, 1.0, early_stopping::never},     {3.0f, 2.0, early_stopping::heuristic},
                             {5.0f, 0.5, early_stopping::on_full}};
  auto const eos = Vocab(net.config().eos_token_id);
  float const bias = net.final_logits_bias(models::BiasRow(0), eos);
  int ended_early = 0;
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    INFO("beam_" << i);
    net.final_logits_bias(models::BiasRow(0), eos) = bias + cases[i].eos_bias;
    auto const want = load<tgt_t>(dir, "beam_" + std::to_string(i));
    auto const got = models::translate_beam(
        net, src, lens, 10, {.num_beams = 4, .length_penalty = cases[i].length_penalty, .early_stopping = cases[i].stop});
    REQUIRE(got.extents() == want.extents());
    CHECK(dt::equal(got, want));
    ended_early += want.extent<TargetTokens>() < 11;
  }
  CHECK(ended_early >= 1);  // the cases include an early stop
  // and beam search is not greedy decoding here
  net.final_logits_bias(models::BiasRow(0), eos) = bias;
  CHECK_FALSE(dt::equal(models::translate_beam(net, src, lens, 10), load<tgt_t>(dir, "greedy")));
}
