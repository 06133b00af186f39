// d2l's machine translation end to end, with Bahdanau attention and with the
// Transformer: the English-French corpus (examples/data/fra-eng/fra.txt), both
// models trained with d2l's settings, the book's four test sentences
// translated with their BLEU, BLEU on pairs held out from training, the loss
// curves and the attention heatmaps of the last sentence (the Transformer's
// per layer and head: encoder self-attention, decoder self-attention and
// attention over the encoder).
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
#include <dimtensor/nn/transformer.hpp>
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

DIMTENSOR_DIM(FFNHidden);
DIMTENSOR_DIM(Layer);

using dataset_t = data::nmt_dataset<Batch, EncSteps, DecSteps>;
// d2l's Seq2SeqEncoder + Seq2SeqAttentionDecoder.
using bahdanau_t = nn::encoder_decoder<nn::seq2seq_encoder<Batch, EncSteps, SrcVocab, Embed, Hidden>,
                                       nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, TgtVocab, Embed, Hidden>>;
// d2l's TransformerEncoder + TransformerDecoder.
using transformer_t = nn::encoder_decoder<nn::transformer_encoder<Batch, EncSteps, SrcVocab, Hidden, FFNHidden>,
                                          nn::transformer_decoder<Batch, DecSteps, EncSteps, TgtVocab, Hidden, FFNHidden>>;

int failures = 0;
void fail(std::string const& what) {
  std::cerr << "FAILED: " << what << '\n';
  ++failures;
}

// d2l's train_seq2seq: xavier_uniform_ on the linear and GRU weights, Adam,
// teacher forcing from <bos>, MaskedSoftmaxCELoss summed, gradients clipped
// to norm 1.  Returns the loss per token of every epoch.
template <class Net>
std::vector<double> train_seq2seq(Net& net, dataset_t const& data, double lr, int num_epochs, std::size_t batch_size,
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
      dt::index_t const n = Y.template extent<DecSteps>();
      auto const bos_column = dt::full<std::int64_t>(bos, Batch(Y.template extent<Batch>()), DecSteps(1));
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
template <class Net>
auto translate(Net& net, dataset_t const& data, std::string const& sentence) {
  auto const& src_vocab = data.src_vocab();
  auto const& tgt_vocab = data.tgt_vocab();
  std::vector<std::string> tokens;
  std::istringstream words(sentence);
  for (std::string w; words >> w;) tokens.push_back(w);
  auto indices = src_vocab.indices(tokens);
  indices.push_back(src_vocab["<eos>"]);
  auto const valid_len = static_cast<dt::index_t>(std::min(indices.size(), data.num_steps()));
  auto const src = data::truncate_pad(indices, data.num_steps(), src_vocab["<pad>"]);
  auto out = nn::predict_seq2seq(net, src, valid_len, tgt_vocab["<bos>"], tgt_vocab["<eos>"],
                                 static_cast<dt::index_t>(data.num_steps()), true);
  std::string text;
  for (auto const& t : tgt_vocab.to_tokens(out.tokens)) text += (text.empty() ? "" : " ") + t;
  return std::pair(text, std::move(out.attention_weights));
}

std::string joined(std::vector<std::string> const& tokens) {
  std::string s;
  for (auto const& t : tokens) s += (s.empty() ? "" : " ") + t;
  return s;
}

// The loss curve, every 10 epochs as d2l's animator draws it.
void plot_loss(std::vector<double> const& losses, std::filesystem::path const& out_dir, std::string const& stem) {
  std::vector<float> xs;
  std::vector<float> ys;
  for (std::size_t e = 9; e < losses.size(); e += 10) {
    xs.push_back(static_cast<float>(e + 1));
    ys.push_back(static_cast<float>(losses[e]));
  }
  if (xs.empty()) return;
  Epoch const points(static_cast<dt::index_t>(xs.size()));
  dt::viz::plot_options curve;
  curve.xlabel = "epoch";
  curve.ylabel = "loss";
  for (char const* extension : {".png", ".svg"}) {
    auto const file = out_dir / (stem + extension);
    dt::viz::plot({dt::viz::series_of("train", dt::from_range<float>(xs, points), dt::from_range<float>(ys, points))},
                  file, curve);
    std::cout << "wrote " << file.string() << '\n';
  }
}

template <class E>
void save_heatmaps(E const& matrices, std::filesystem::path const& out_dir, std::string const& stem,
                   std::vector<std::string> titles = {}) {
  dt::viz::heatmap_options options;
  options.xlabel = "Key positions";
  options.ylabel = "Query positions";
  options.titles = std::move(titles);
  for (char const* extension : {".png", ".svg"}) {
    auto const file = out_dir / (stem + extension);
    dt::viz::show_heatmaps(matrices, file, options);
    std::cout << "wrote " << file.string() << '\n';
  }
}

// The book's four sentences and the held-out pairs, translated and scored;
// returns the four sentences' mean BLEU.  `last` gets the last sentence's
// attention weights.
template <class Net, class Weights>
double evaluate(Net& net, dataset_t const& data, std::string const& name, Weights& last) {
  std::vector<std::string> const engs{"go .", "i lost .", "he's calm .", "i'm home ."};
  std::vector<std::string> const fras{"va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."};
  double book_bleu = 0;
  for (std::size_t i = 0; i < engs.size(); ++i) {
    auto [text, weights] = translate(net, data, engs[i]);
    double const b = data::bleu(text, fras[i], 2);
    book_bleu += b / static_cast<double>(engs.size());
    std::cout << engs[i] << " => " << text << ", bleu " << std::fixed << std::setprecision(3) << b << '\n';
    last = std::move(weights);
  }
  double held_out = 0;
  auto const& test = data.test_pairs();
  for (std::size_t i = 0; i < test.size(); ++i) {
    held_out += data::bleu(translate(net, data, joined(test.source[i])).first, joined(test.target[i]), 2);
  }
  if (test.size() > 0) held_out /= static_cast<double>(test.size());
  std::cout << name << ": the book's sentences mean bleu " << book_bleu << "; " << test.size()
            << " held-out pairs mean bleu " << held_out << '\n';
  return book_bleu;
}

void check_training(std::string const& name, std::vector<double> const& losses, double book_bleu, bool quick) {
  if (losses.empty() || !(losses.back() < 0.75 * losses.front())) {
    fail(name + ": the loss did not fall by a quarter");
  }
  if (!quick && book_bleu < 0.9) fail(name + ": the book's sentences average bleu " + std::to_string(book_bleu));
}

// The Transformer's weights of one call for the heatmaps: per block, [Batch=1,
// Queries, Heads, Keys] → [Layer, Heads, Queries, Keys].
template <class Q, class K, class W>
auto by_layer_and_head(std::vector<W> const& blocks) {
  std::vector<dt::tensor<float, nn::Heads, Q, K>> layers;
  for (auto const& w : blocks) layers.push_back(dt::permute<nn::Heads, Q, K>(dt::select<Batch>(w, 0)));
  return dt::stack<Layer>(layers);
}

// The decoder's weights of every predicted step, one query each, the keys
// padded with zeros to @p width: [Layer, Heads, DecSteps, K].
template <class K, class Steps>
dt::tensor<float, Layer, nn::Heads, DecSteps, K> steps_by_layer(Steps const& steps, dt::index_t width) {
  auto const& first = steps.front().self;
  auto const layers = static_cast<dt::index_t>(first.size());
  dt::index_t const heads = first.front().template extent<nn::Heads>();
  auto const rows = static_cast<dt::index_t>(steps.size());
  auto out = dt::zeros<float>(Layer(layers), nn::Heads(heads), DecSteps(rows), K(width));
  for (dt::index_t t = 0; t < rows; ++t) {
    for (dt::index_t l = 0; l < layers; ++l) {
      auto const& step = steps[static_cast<std::size_t>(t)];
      auto const w = [&] {
        if constexpr (std::is_same_v<K, nn::SelfKeys>) {
          return step.self[static_cast<std::size_t>(l)];
        } else {
          return step.cross[static_cast<std::size_t>(l)];
        }
      }();
      for (dt::index_t h = 0; h < heads; ++h) {
        for (dt::index_t k = 0; k < std::min(width, w.template extent<K>()); ++k) {
          out(Layer(l), nn::Heads(h), DecSteps(t), K(k)) = w(Batch(0), DecSteps(0), nn::Heads(h), K(k));
        }
      }
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path const out_dir = argc > 1 ? argv[1] : ".";
  std::filesystem::path const corpus = argc > 2 ? argv[2] : DIMTENSOR_EXAMPLES_DATA_DIR "/fra-eng/fra.txt";
  std::filesystem::create_directories(out_dir);
  bool const quick = std::getenv("DIMTENSOR_EXAMPLE_QUICK") != nullptr;

  // d2l: batch_size, num_steps = 64, 10, on the first 600 pairs.
  dataset_t const data(corpus, {.num_steps = 10, .num_examples = 600});
  std::cout << "corpus " << corpus.string() << ": " << data.size() << " training pairs, "
            << data.test_pairs().size() << " held out; vocabularies " << data.src_vocab().size() << " and "
            << data.tgt_vocab().size() << " tokens\n";
  SrcVocab const src_size(static_cast<dt::index_t>(data.src_vocab().size()));
  TgtVocab const tgt_size(static_cast<dt::index_t>(data.tgt_vocab().size()));
  dt::generator gen(0);

  {
    // Bahdanau: embed_size, num_hiddens, num_layers, dropout = 32, 32, 2, 0.1; lr, num_epochs = 0.005, 250.
    int const num_epochs = quick ? 20 : 250;
    bahdanau_t net({src_size, Embed(32), Hidden(32), 2, 0.1, gen}, {tgt_size, Embed(32), Hidden(32), 2, 0.1, gen});
    std::cout << "\nBahdanau seq2seq: " << nn::parameter_count(net) << " parameters; " << num_epochs << " epochs\n";
    auto const losses = train_seq2seq(net, data, 0.005, num_epochs, 64, gen);
    plot_loss(losses, out_dir, "bahdanau_loss");
    std::vector<decltype(net.decoder.attention_weights())> last;
    double const book_bleu = evaluate(net, data, "Bahdanau", last);
    // The last sentence's attention: one row per target step, over the source steps.
    if (!last.empty()) {
      auto const rows = dt::select<Batch>(dt::concat<DecSteps>(last), 0);  // [DecSteps, EncSteps]
      save_heatmaps(dt::unsqueeze<Layer, 0>(dt::unsqueeze<nn::Heads, 0>(rows)), out_dir, "bahdanau_attention");
    }
    check_training("Bahdanau", losses, book_bleu, quick);
  }
  {
    // Transformer: num_hiddens, num_layers, dropout = 32, 2, 0.1; ffn_num_hiddens, num_heads = 64, 4;
    // lr, num_epochs = 0.005, 200.
    int const num_epochs = quick ? 20 : 200;
    transformer_t net({src_size, Hidden(32), FFNHidden(64), 4, 2, 0.1, false, gen},
                      {tgt_size, Hidden(32), FFNHidden(64), 4, 2, 0.1, gen});
    std::cout << "\nTransformer: " << nn::parameter_count(net) << " parameters; " << num_epochs << " epochs\n";
    auto const losses = train_seq2seq(net, data, 0.005, num_epochs, 64, gen);
    plot_loss(losses, out_dir, "transformer_loss");
    std::vector<std::remove_cvref_t<decltype(net.decoder.attention_weights())>> last;
    double const book_bleu = evaluate(net, data, "Transformer", last);
    // The last sentence's weights per layer (rows) and head (columns), as d2l shows them.
    std::vector<std::string> const titles{"Head 1", "Head 2", "Head 3", "Head 4"};
    std::vector<dt::tensor<float, Batch, EncSteps, nn::Heads, nn::SelfKeys>> encoder;
    for (std::size_t i = 0; i < net.encoder.blks.size(); ++i) encoder.push_back(net.encoder.attention_weights(i));
    save_heatmaps(by_layer_and_head<EncSteps, nn::SelfKeys>(encoder), out_dir, "transformer_encoder_self_attention",
                  titles);
    if (!last.empty()) {
      auto const width = static_cast<dt::index_t>(data.num_steps());
      save_heatmaps(steps_by_layer<nn::SelfKeys>(last, width), out_dir, "transformer_decoder_self_attention",
                    titles);
      save_heatmaps(steps_by_layer<EncSteps>(last, width), out_dir, "transformer_decoder_cross_attention",
                    titles);
    }
    check_training("Transformer", losses, book_bleu, quick);
  }

  if (failures != 0) return 1;
  std::cout << "all checks passed\n";
  return 0;
}
