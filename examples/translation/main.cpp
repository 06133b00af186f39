// d2l's machine translation with Bahdanau attention, end to end: the
// English-French corpus (examples/data/fra-eng/fra.txt), the seq2seq model
// with additive attention trained with d2l's settings, the book's four test
// sentences translated with their BLEU, BLEU on pairs held out from
// training, the loss curve and the attention heatmap of the last sentence.
//
//   example_translation <output dir> [corpus]
//
// With DIMTENSOR_EXAMPLE_QUICK set (as CTest sets it) it trains fewer
// epochs and checks only that training works: the loss falls.  Without it,
// the book's full run, checked against the book's result: the four
// sentences average BLEU >= 0.9.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <dimtensor/data.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/init.hpp>
#include <dimtensor/nn/seq2seq.hpp>
#include <dimtensor/optim.hpp>
#include <dimtensor/viz.hpp>

// The shipped corpora; CMake gives their absolute path.
#ifndef DIMTENSOR_EXAMPLES_DATA_DIR
#define DIMTENSOR_EXAMPLES_DATA_DIR "examples/data"
#endif

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
namespace data = dimtensor::data;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(SrcVocab);
DIMTENSOR_DIM(TgtVocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Epoch);

namespace {

using dataset_t = data::nmt_dataset<Batch, EncSteps, DecSteps>;
using encoder_t = nn::seq2seq_encoder<Batch, EncSteps, SrcVocab, Embed, Hidden>;
using decoder_t = nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, TgtVocab, Embed, Hidden>;
using net_t = nn::encoder_decoder<encoder_t, decoder_t>;

int failures = 0;
void fail(std::string const& what) {
  std::cerr << "FAILED: " << what << '\n';
  ++failures;
}

// d2l's train_seq2seq: xavier_uniform_ on the linear and GRU weights, Adam,
// teacher forcing from <bos>, MaskedSoftmaxCELoss summed, gradients clipped
// to norm 1.  Returns the loss per token of every epoch.
std::vector<double> train_seq2seq(net_t& net, dataset_t const& data, double lr, int num_epochs, std::size_t batch_size,
                                  dt::generator& gen) {
  net.for_each_parameter([&](std::string const& key, auto& p) {
    if constexpr (std::remove_cvref_t<decltype(p)>::rank == 2) {
      if (key.find("embedding") == std::string::npos) nn::xavier_uniform_(p, gen);
    }
  });
  dt::optim::adam optimizer(net, lr);
  std::int64_t const bos = data.tgt_vocab()["<bos>"];
  net.train();
  dt::optim::progress_options every_10;
  every_10.every = 10;
  dt::optim::progress bar(num_epochs, std::cout, every_10);
  std::vector<double> losses;
  for (int epoch = 1; epoch <= num_epochs; ++epoch) {
    double loss_sum = 0;
    double tokens = 0;
    for (auto const& [X, X_valid_len, Y, Y_valid_len] : data.batches(batch_size, gen)) {
      optimizer.zero_grad();
      dt::index_t const n = Y.extent<DecSteps>();
      auto const bos_column = dt::full<std::int64_t>(bos, Batch(Y.extent<Batch>()), DecSteps(1));
      auto const dec_input = dt::concat<DecSteps>(bos_column, dt::slice<DecSteps>(Y, 0, n - 1));  // teacher forcing
      auto const [Y_hat, state] = net(X, dec_input, X_valid_len);
      auto const l = dt::sum(nn::masked_softmax_ce_loss<DecSteps, TgtVocab>(Y_hat, Y, Y_valid_len));
      l.backward();
      dt::optim::clip_grad_norm(net, 1.0);
      optimizer.step();
      loss_sum += l.item();
      tokens += static_cast<double>(dt::sum(Y_valid_len).item());
    }
    losses.push_back(loss_sum / tokens);
    bar.update(epoch, losses.back());
  }
  return losses;
}

// d2l's predict_seq2seq: the sentence through the source vocabulary, <eos>
// appended, padded; greedy decoding; the tokens back through the target's.
struct translation {
  std::string text;
  std::vector<decoder_t::weights_type> attention;
};
translation translate(net_t& net, dataset_t const& data, std::string const& sentence) {
  auto const& src_vocab = data.src_vocab();
  auto const& tgt_vocab = data.tgt_vocab();
  std::vector<std::string> tokens;
  std::istringstream words(sentence);
  for (std::string w; words >> w;) tokens.push_back(w);
  auto indices = src_vocab.indices(tokens);
  indices.push_back(src_vocab["<eos>"]);
  auto const valid_len = static_cast<dt::index_t>(std::min(indices.size(), data.num_steps()));
  auto const src = data::truncate_pad(indices, data.num_steps(), src_vocab["<pad>"]);
  auto const out = nn::predict_seq2seq(net, src, valid_len, tgt_vocab["<bos>"], tgt_vocab["<eos>"],
                                       static_cast<dt::index_t>(data.num_steps()), true);
  std::string text;
  for (auto const& t : tgt_vocab.to_tokens(out.tokens)) text += (text.empty() ? "" : " ") + t;
  return {text, out.attention_weights};
}

std::string joined(std::vector<std::string> const& tokens) {
  std::string s;
  for (auto const& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path const out_dir = argc > 1 ? argv[1] : ".";
  std::filesystem::path const corpus = argc > 2 ? argv[2] : DIMTENSOR_EXAMPLES_DATA_DIR "/fra-eng/fra.txt";
  std::filesystem::create_directories(out_dir);
  bool const quick = std::getenv("DIMTENSOR_EXAMPLE_QUICK") != nullptr;

  // d2l: embed_size, num_hiddens, num_layers, dropout = 32, 32, 2, 0.1;
  // batch_size, num_steps = 64, 10; lr, num_epochs = 0.005, 250.
  int const num_epochs = quick ? 20 : 250;
  dataset_t const data(corpus, {.num_steps = 10, .num_examples = 600});
  std::cout << "corpus " << corpus.string() << ": " << data.size() << " training pairs, "
            << data.test_pairs().size() << " held out; vocabularies " << data.src_vocab().size() << " and "
            << data.tgt_vocab().size() << " tokens\n";

  dt::generator gen(0);
  SrcVocab const src_size(static_cast<dt::index_t>(data.src_vocab().size()));
  TgtVocab const tgt_size(static_cast<dt::index_t>(data.tgt_vocab().size()));
  net_t net(encoder_t(src_size, Embed(32), Hidden(32), 2, 0.1, gen), decoder_t(tgt_size, Embed(32), Hidden(32), 2, 0.1, gen));
  std::cout << "Bahdanau seq2seq: " << nn::parameter_count(net) << " parameters; " << num_epochs << " epochs\n";
  auto const losses = train_seq2seq(net, data, 0.005, num_epochs, 64, gen);

  // The loss curve, every 10 epochs as d2l's animator draws it.
  std::vector<float> xs;
  std::vector<float> ys;
  for (std::size_t e = 9; e < losses.size(); e += 10) {
    xs.push_back(static_cast<float>(e + 1));
    ys.push_back(static_cast<float>(losses[e]));
  }
  if (!xs.empty()) {
    Epoch const points(static_cast<dt::index_t>(xs.size()));
    dt::viz::plot_options curve;
    curve.xlabel = "epoch";
    curve.ylabel = "loss";
    for (char const* extension : {".png", ".svg"}) {
      auto const file = out_dir / (std::string("bahdanau_loss") + extension);
      dt::viz::plot({dt::viz::series_of("train", dt::from_range<float>(xs, points), dt::from_range<float>(ys, points))},
                    file, curve);
      std::cout << "wrote " << file.string() << '\n';
    }
  }

  // The book's four sentences.
  std::vector<std::string> const engs{"go .", "i lost .", "he's calm .", "i'm home ."};
  std::vector<std::string> const fras{"va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."};
  double book_bleu = 0;
  translation last;
  for (std::size_t i = 0; i < engs.size(); ++i) {
    last = translate(net, data, engs[i]);
    double const b = data::bleu(last.text, fras[i], 2);
    book_bleu += b / static_cast<double>(engs.size());
    std::cout << engs[i] << " => " << last.text << ", bleu " << std::fixed << std::setprecision(3) << b << '\n';
  }
  std::cout << "the book's sentences: mean bleu " << book_bleu << '\n';

  // The attention of the last sentence: one row per target step, over the source steps.
  if (!last.attention.empty()) {
    std::vector<decoder_t::weights_type> rows(last.attention.begin(), last.attention.end());
    auto const steps = dt::concat<DecSteps>(rows);  // [Batch=1, DecSteps, EncSteps]
    auto const heatmap = dt::select<Batch>(steps, 0);
    dt::viz::heatmap_options options;
    options.xlabel = "Key positions";
    options.ylabel = "Query positions";
    for (char const* extension : {".png", ".svg"}) {
      auto const file = out_dir / (std::string("bahdanau_attention") + extension);
      dt::viz::show_heatmap(heatmap, file, options);
      std::cout << "wrote " << file.string() << '\n';
    }
  }

  // Held out: pairs never trained on.
  double held_out_bleu = 0;
  auto const& test = data.test_pairs();
  for (std::size_t i = 0; i < test.size(); ++i) {
    held_out_bleu += data::bleu(translate(net, data, joined(test.source[i])).text, joined(test.target[i]), 2);
  }
  if (test.size() > 0) held_out_bleu /= static_cast<double>(test.size());
  std::cout << "held-out pairs: " << test.size() << ", mean bleu " << held_out_bleu << '\n';

  if (losses.empty() || !(losses.back() < 0.75 * losses.front())) {
    fail("the loss did not fall by a quarter: first epoch " + std::to_string(losses.front()) + ", last " +
         std::to_string(losses.back()));
  }
  if (!quick && book_bleu < 0.9) fail("the book's sentences average bleu " + std::to_string(book_bleu) + " < 0.9");
  if (failures != 0) return 1;
  std::cout << "all checks passed\n";
  return 0;
}
