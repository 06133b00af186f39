// Translation with a Marian model from a transformers folder (the opus-mt
// models: config.json, model.safetensors, source.spm, target.spm,
// vocab.json): the sentences tokenized by its SentencePiece models, padded
// into one batch with their lengths, translated greedily and by beam search
// (4 beams, as generate(num_beams=4)) with the decoder's cache of keys and
// values, and decoded.
//
//     example_marian_translate OUT_DIR [MODEL_FOLDER]
//
// Without a folder it runs the tiny random Marian the parity tests load
// (tests/parity/data/models/marian: its translations mean nothing). With a
// real opus-mt folder (e.g. Helsinki-NLP/opus-mt-en-fr saved by
// transformers) it prints that model's translations. Either way the program
// checks that each sentence translated in the padded batch is what it gives
// alone, both ways, and exits non-zero otherwise.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/models/marian.hpp>
#include <dimtensor/text/marian_tokenizer.hpp>

namespace dt = dimtensor;
namespace models = dimtensor::models;
using models::Batch;
using models::TargetTokens;
using models::Tokens;

/// Each sentence's translation, greedy (beams 1) or by beam search (ids,
/// the start token first, padding after the end token).
std::vector<std::vector<std::int64_t>> translate(models::marian<>& net, dt::text::marian_tokenizer const& tok,
                                                 std::vector<std::string> const& sentences, dt::index_t max_new,
                                                 dt::index_t beams) {
  std::vector<std::vector<std::int64_t>> encoded;
  std::size_t longest = 0;
  for (auto const& s : sentences) {
    encoded.push_back(tok.encode(s));
    longest = std::max(longest, encoded.back().size());
  }
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> lens;
  for (auto const& e : encoded) {
    for (std::size_t t = 0; t < longest; ++t) ids.push_back(t < e.size() ? e[t] : tok.pad_id());
    lens.push_back(static_cast<std::int64_t>(e.size()));
  }
  auto const b = static_cast<dt::index_t>(sentences.size());
  auto const src = dt::from_range<std::int64_t>(ids, Batch(b), Tokens(static_cast<dt::index_t>(longest)));
  auto const src_lens = dt::from_range<std::int64_t>(lens, Batch(b));
  auto const out = beams == 1 ? models::translate_greedy(net, src, src_lens, max_new)
                              : models::translate_beam(net, src, src_lens, max_new, {.num_beams = beams});
  std::vector<std::vector<std::int64_t>> rows;
  for (dt::index_t r = 0; r < b; ++r) {
    rows.emplace_back();
    for (dt::index_t t = 0; t < out.extent<TargetTokens>(); ++t) rows.back().push_back(out(Batch(r), TargetTokens(t)));
  }
  return rows;
}

int main(int argc, char** argv) {
  std::filesystem::path const folder = argc > 2 ? std::filesystem::path(argv[2])
                                                : std::filesystem::path(DIMTENSOR_TEST_MODELS_DIR) / "marian";
  dt::text::marian_tokenizer const tok(folder);
  auto net = models::marian<>::from_pretrained(folder);
  std::cout << "model: " << folder.string() << " (" << net.config().encoder_layers << " + " << net.config().decoder_layers
            << " layers, d_model " << net.config().d_model << ")\n";
  std::vector<std::string> const sentences = {"The quick brown fox jumps over the lazy dog.", "Hello!",
                                              "I would like a cup of coffee, please."};
  bool same = true;
  for (dt::index_t beams : {1, 4}) {
    std::cout << (beams == 1 ? "greedy:\n" : "beam search, 4 beams:\n");
    auto const batch = translate(net, tok, sentences, 24, beams);
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      std::cout << sentences[i] << "\n  -> " << tok.decode(batch[i]) << '\n';
      // alone: no padding of other sentences; the batch may run longer, with padding after the end
      auto alone = translate(net, tok, {sentences[i]}, 24, beams).front();
      auto mine = batch[i];
      mine.resize(alone.size(), tok.pad_id());
      bool const rest_padding = std::all_of(batch[i].begin() + static_cast<std::ptrdiff_t>(std::min(alone.size(), batch[i].size())),
                                            batch[i].end(), [&](std::int64_t id) { return id == tok.pad_id(); });
      same = same && mine == alone && rest_padding;
    }
  }
  if (!same) {
    std::cerr << "marian_translate: a sentence translates differently in the batch and alone\n";
    return 1;
  }
  std::cout << "each sentence translates the same in the batch and alone\n";
}
