// Machine translation with d2l's two models, against the same models written
// in libtorch C++ (d2l's classes, module by module: Seq2SeqEncoder and
// Seq2SeqAttentionDecoder with AdditiveAttention; TransformerEncoder and
// TransformerDecoder with MultiHeadAttention, AddNorm, PositionWiseFFN and
// PositionalEncoding), on the same data, sizes, weights and threads:
//   train_<model>   one training epoch as d2l's train_seq2seq: the first 600
//                   pairs of examples/data/fra-eng/fra.txt less the held-out
//                   tenth (nmt_dataset), batches of 64, 10 steps, teacher
//                   forcing from <bos>, MaskedSoftmaxCELoss summed, backward,
//                   gradients clipped to norm 1, Adam lr 0.005; train mode
//                   (dropout 0.1). The batches are drawn once, so both
//                   libraries see the same ones in the same order.
//   decode_<model>  greedy decoding of "i'm home ." (predict_seq2seq), one
//                   decoder step per token, eval mode; the time is per
//                   sentence, the counter per_token per decoder step and
//                   the counter steps the steps per sentence (both libraries
//                   make the same steps: the check below compares the
//                   tokens, so the ratio per sentence is the ratio per token).
// Models: bahdanau (embed 32, hidden 32, 2 GRU layers) and transformer
// (hidden 32, 2 layers, 4 heads, FFN 64), d2l's settings.
//
// Before the timings, the two libraries must agree: the same weights (copied
// from dimtensor by their state_dict keys) give the same loss and gradient on
// a batch in eval mode, and the same decoded tokens.
//
// Peak memory: each library trains one epoch of each model in a child
// process of its own (fork before either library has started a thread); the
// child reports its peak resident set (VmHWM, reset after the fork through
// /proc/self/clear_refs) less its resident set when it began, so the figure
// is what the model, its optimizer state and one epoch's activations and
// gradients took.
//
// DIMTENSOR_BENCH_INPUTS=DIR writes, before timing, what the PyTorch 2 peer
// (benchmarks/peers/torch2_translation.py) needs to run the same: under
// DIR/translation/, the epoch's batches (X_<k>, X_valid_len_<k>, Y_<k>,
// Y_valid_len_<k>), the sentence (src, src_valid_len), <bos> and <eos>, and
// per model (bahdanau, transformer, and their decoding copies) the first
// weights under <model>/params/ with, for the check, the eval-mode loss of
// the first batch, the gradient of decoder.dense.weight, and the decoded
// tokens.
//
// The ratios at the end are libtorch time / dimtensor time (ratio_reporter.hpp).

#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <filesystem>

#include <dimtensor/data.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/io/state_dict.hpp>
#include <dimtensor/nn/init.hpp>
#include <dimtensor/nn/seq2seq.hpp>
#include <dimtensor/nn/transformer.hpp>
#include <dimtensor/optim.hpp>

#include "d2l_libtorch.hpp"
#include "ratio_reporter.hpp"

#ifndef DIMTENSOR_EXAMPLES_DATA_DIR
#define DIMTENSOR_EXAMPLES_DATA_DIR "examples/data"
#endif

namespace {

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
DIMTENSOR_DIM(FFNHidden);

using dataset_t = data::nmt_dataset<Batch, EncSteps, DecSteps>;
using batch_t = data::nmt_batch<Batch, EncSteps, DecSteps>;
using bahdanau_t = nn::encoder_decoder<nn::seq2seq_encoder<Batch, EncSteps, SrcVocab, Embed, Hidden>,
                                       nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, TgtVocab, Embed, Hidden>>;
using transformer_t = nn::encoder_decoder<nn::transformer_encoder<Batch, EncSteps, SrcVocab, Hidden, FFNHidden>,
                                          nn::transformer_decoder<Batch, DecSteps, EncSteps, TgtVocab, Hidden, FFNHidden>>;

constexpr double learning_rate = 0.005;
constexpr std::size_t batch_size = 64;
constexpr std::size_t num_steps = 10;
constexpr double dropout = 0.1;
char const* const sentence = "i'm home .";

/// The corpus, its batches for one epoch (drawn once) and the sentence to decode.
struct corpus {
  dataset_t data{DIMTENSOR_EXAMPLES_DATA_DIR "/fra-eng/fra.txt", {.num_steps = num_steps, .num_examples = 600}};
  std::vector<batch_t> batches;
  std::vector<std::int64_t> src;  // the sentence's indices, <eos> appended, padded
  dt::index_t src_valid_len = 0;
  std::int64_t bos = data.tgt_vocab()["<bos>"];
  std::int64_t eos = data.tgt_vocab()["<eos>"];

  corpus() {
    dt::generator gen(0);
    for (auto const& b : data.batches(batch_size, gen)) batches.push_back(b);
    std::vector<std::string> tokens;
    std::istringstream words(sentence);
    for (std::string w; words >> w;) tokens.push_back(w);
    auto indices = data.src_vocab().indices(tokens);
    indices.push_back(data.src_vocab()["<eos>"]);
    src_valid_len = static_cast<dt::index_t>(std::min(indices.size(), num_steps));
    src = data::truncate_pad(indices, num_steps, data.src_vocab()["<pad>"]);
  }
  std::int64_t src_count() const { return static_cast<std::int64_t>(data.src_vocab().size()); }
  std::int64_t tgt_count() const { return static_cast<std::int64_t>(data.tgt_vocab().size()); }
  SrcVocab src_size() const { return SrcVocab(src_count()); }
  TgtVocab tgt_size() const { return TgtVocab(tgt_count()); }
  static corpus const& get() {
    static corpus const c;
    return c;
  }
};

bahdanau_t make_bahdanau(dt::generator& gen) {
  auto const& c = corpus::get();
  return bahdanau_t({c.src_size(), Embed(32), Hidden(32), 2, dropout, gen},
                    {c.tgt_size(), Embed(32), Hidden(32), 2, dropout, gen});
}

transformer_t make_transformer(dt::generator& gen) {
  auto const& c = corpus::get();
  return transformer_t({c.src_size(), Hidden(32), FFNHidden(64), 4, 2, dropout, false, gen},
                       {c.tgt_size(), Hidden(32), FFNHidden(64), 4, 2, dropout, gen});
}

/// d2l's train_seq2seq's initialization: xavier_uniform_ on every matrix
/// but the embeddings.
template <class Net>
void xavier_init(Net& net, dt::generator& gen) {
  net.for_each_parameter([&](std::string const& key, auto& p) {
    if constexpr (std::remove_cvref_t<decltype(p)>::rank == 2) {
      if (key.find("embedding") == std::string::npos) nn::xavier_uniform_(p, gen);
    }
  });
}

/// The teacher-forced decoder input: <bos>, then Y less its last step.
template <class Y>
auto teacher_forcing(Y const& y, std::int64_t bos) {
  dt::index_t const n = y.template extent<DecSteps>();
  auto const bos_column = dt::full<std::int64_t>(bos, Batch(y.template extent<Batch>()), DecSteps(1));
  return dt::concat<DecSteps>(bos_column, dt::slice<DecSteps>(y, 0, n - 1));
}

/// The summed loss of batch @p b (d2l's train_seq2seq body before backward).
template <class Net>
auto batch_loss(Net& net, batch_t const& b, std::int64_t bos) {
  auto const [Y_hat, state] = net(b.X, teacher_forcing(b.Y, bos), b.X_valid_len);
  return dt::sum(nn::masked_softmax_ce_loss<DecSteps, TgtVocab>(Y_hat, b.Y, b.Y_valid_len));
}

/// A dimtensor model in training, with its optimizer.
template <class Net>
struct dimtensor_trainer {
  Net net;
  dt::optim::adam optimizer;
  explicit dimtensor_trainer(Net n) : net(std::move(n)), optimizer(net, learning_rate) { net.train(); }

  /// One batch of d2l's train_seq2seq; returns the summed loss.
  double step(batch_t const& b, std::int64_t bos) {
    optimizer.zero_grad();
    auto const l = batch_loss(net, b, bos);
    l.backward();
    dt::optim::clip_grad_norm(net, 1.0);
    optimizer.step();
    return l.item();
  }
  double epoch() {
    auto const& c = corpus::get();
    double loss = 0;
    for (auto const& b : c.batches) loss += step(b, c.bos);
    return loss;
  }
};

template <class Net>
std::vector<std::int64_t> dimtensor_decode(Net& net) {
  auto const& c = corpus::get();
  return nn::predict_seq2seq(net, c.src, c.src_valid_len, c.bos, c.eos, static_cast<dt::index_t>(num_steps)).tokens;
}

#if DIMTENSOR_HAVE_LIBTORCH
// ---------------------------------------------------------------------------
// d2l's models in libtorch, the modules registered under d2l's names (the
// blocks as a ModuleList, "blks.0...", as dimtensor numbers them).
namespace peer {

using torch::Tensor;
using namespace torch::indexing;

torch::nn::Linear linear(std::int64_t in, std::int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

struct AdditiveAttentionImpl : torch::nn::Module {
  torch::nn::Linear W_k{nullptr}, W_q{nullptr}, w_v{nullptr};
  torch::nn::Dropout drop{nullptr};
  AdditiveAttentionImpl(std::int64_t key_size, std::int64_t query_size, std::int64_t hiddens, double p)
      : W_k(register_module("W_k", linear(key_size, hiddens, false))),
        W_q(register_module("W_q", linear(query_size, hiddens, false))),
        w_v(register_module("w_v", linear(hiddens, 1, false))),
        drop(register_module("dropout", torch::nn::Dropout(p))) {}
  Tensor forward(Tensor const& queries, Tensor const& keys, Tensor const& values, Tensor const& valid_lens) {
    auto const features = torch::tanh(W_q(queries).unsqueeze(2) + W_k(keys).unsqueeze(1));
    auto const scores = w_v(features).squeeze(-1);
    return torch::bmm(drop(dimtensor_bench::masked_softmax(scores, valid_lens)), values);
  }
};
TORCH_MODULE(AdditiveAttention);

struct Seq2SeqEncoderImpl : torch::nn::Module {
  torch::nn::Embedding embedding{nullptr};
  torch::nn::GRU rnn{nullptr};
  Seq2SeqEncoderImpl(std::int64_t vocab, std::int64_t embed, std::int64_t hiddens, std::int64_t layers, double p)
      : embedding(register_module("embedding", torch::nn::Embedding(vocab, embed))),
        rnn(register_module("rnn", torch::nn::GRU(torch::nn::GRUOptions(embed, hiddens).num_layers(layers).dropout(p)))) {}
  // d2l's forward(X, *args): the valid lengths are not used.
  std::tuple<Tensor, Tensor> forward(Tensor const& X, Tensor const& /*valid_lens*/) {
    return rnn(embedding(X).permute({1, 0, 2}));
  }
};
TORCH_MODULE(Seq2SeqEncoder);

struct Seq2SeqAttentionDecoderImpl : torch::nn::Module {
  AdditiveAttention attention{nullptr};
  torch::nn::Embedding embedding{nullptr};
  torch::nn::GRU rnn{nullptr};
  torch::nn::Linear dense{nullptr};
  struct state {
    Tensor enc_outputs, hidden, enc_valid_lens;
  };
  Seq2SeqAttentionDecoderImpl(std::int64_t vocab, std::int64_t embed, std::int64_t hiddens, std::int64_t layers,
                              double p)
      : attention(register_module("attention", AdditiveAttention(hiddens, hiddens, hiddens, p))),
        embedding(register_module("embedding", torch::nn::Embedding(vocab, embed))),
        rnn(register_module("rnn", torch::nn::GRU(
                                       torch::nn::GRUOptions(embed + hiddens, hiddens).num_layers(layers).dropout(p)))),
        dense(register_module("dense", torch::nn::Linear(hiddens, vocab))) {}
  state init_state(std::tuple<Tensor, Tensor> const& enc, Tensor const& valid_lens) {
    return {std::get<0>(enc).permute({1, 0, 2}), std::get<1>(enc), valid_lens};
  }
  std::pair<Tensor, state> forward(Tensor const& X, state s) {
    auto const steps = embedding(X).permute({1, 0, 2});
    std::vector<Tensor> outputs;
    for (std::int64_t t = 0; t < steps.size(0); ++t) {
      auto const query = s.hidden[-1].unsqueeze(1);
      auto const context = attention(query, s.enc_outputs, s.enc_outputs, s.enc_valid_lens);
      auto const x = torch::cat({context, steps[t].unsqueeze(1)}, -1);
      auto [out, hidden] = rnn(x.permute({1, 0, 2}), s.hidden);
      outputs.push_back(out);
      s.hidden = hidden;
    }
    return {dense(torch::cat(outputs, 0)).permute({1, 0, 2}), std::move(s)};
  }
};
TORCH_MODULE(Seq2SeqAttentionDecoder);

struct MultiHeadAttentionImpl : torch::nn::Module {
  std::int64_t heads;
  torch::nn::Dropout drop{nullptr};
  torch::nn::Linear W_q{nullptr}, W_k{nullptr}, W_v{nullptr}, W_o{nullptr};
  MultiHeadAttentionImpl(std::int64_t hiddens, std::int64_t num_heads, double p, bool bias)
      : heads(num_heads),
        drop(register_module("dropout", torch::nn::Dropout(p))),
        W_q(register_module("W_q", linear(hiddens, hiddens, bias))),
        W_k(register_module("W_k", linear(hiddens, hiddens, bias))),
        W_v(register_module("W_v", linear(hiddens, hiddens, bias))),
        W_o(register_module("W_o", linear(hiddens, hiddens, bias))) {}
  Tensor forward(Tensor const& queries, Tensor const& keys, Tensor const& values, Tensor valid_lens) {
    using dimtensor_bench::transpose_qkv;
    auto const q = transpose_qkv(W_q(queries), heads);
    auto const k = transpose_qkv(W_k(keys), heads);
    auto const v = transpose_qkv(W_v(values), heads);
    if (valid_lens.defined()) valid_lens = torch::repeat_interleave(valid_lens, heads, 0);
    auto const scores = torch::bmm(q, k.transpose(1, 2)) / std::sqrt(static_cast<double>(q.size(-1)));
    auto const output = torch::bmm(drop(dimtensor_bench::masked_softmax(scores, valid_lens)), v);
    return W_o(dimtensor_bench::transpose_output(output, heads));
  }
};
TORCH_MODULE(MultiHeadAttention);

struct AddNormImpl : torch::nn::Module {
  torch::nn::Dropout drop{nullptr};
  torch::nn::LayerNorm ln{nullptr};
  AddNormImpl(std::int64_t features, double p)
      : drop(register_module("dropout", torch::nn::Dropout(p))),
        ln(register_module("ln", torch::nn::LayerNorm(torch::nn::LayerNormOptions({features})))) {}
  Tensor forward(Tensor const& X, Tensor const& Y) { return ln(drop(Y) + X); }
};
TORCH_MODULE(AddNorm);

struct PositionWiseFFNImpl : torch::nn::Module {
  torch::nn::Linear dense1{nullptr}, dense2{nullptr};
  PositionWiseFFNImpl(std::int64_t in, std::int64_t hiddens, std::int64_t out)
      : dense1(register_module("dense1", torch::nn::Linear(in, hiddens))),
        dense2(register_module("dense2", torch::nn::Linear(hiddens, out))) {}
  Tensor forward(Tensor const& X) { return dense2(torch::relu(dense1(X))); }
};
TORCH_MODULE(PositionWiseFFN);

// d2l's PositionalEncoding; `offset` lets one-token decoding continue the
// positions (dimtensor's choice; d2l adds row 0 at every step).
struct PositionalEncodingImpl : torch::nn::Module {
  torch::nn::Dropout drop{nullptr};
  Tensor P;
  PositionalEncodingImpl(std::int64_t hiddens, double p, std::int64_t max_len = 1000)
      : drop(register_module("dropout", torch::nn::Dropout(p))) {
    P = torch::zeros({1, max_len, hiddens});
    auto const X = torch::arange(max_len, torch::kFloat32).reshape({-1, 1}) /
                   torch::pow(10000, torch::arange(0, hiddens, 2, torch::kFloat32) / static_cast<double>(hiddens));
    P.index_put_({Slice(), Slice(), Slice(0, None, 2)}, torch::sin(X));
    P.index_put_({Slice(), Slice(), Slice(1, None, 2)}, torch::cos(X));
  }
  Tensor forward(Tensor const& X, std::int64_t offset = 0) {
    return drop(X + P.index({Slice(), Slice(offset, offset + X.size(1)), Slice()}));
  }
};
TORCH_MODULE(PositionalEncoding);

struct EncoderBlockImpl : torch::nn::Module {
  MultiHeadAttention attention{nullptr};
  AddNorm addnorm1{nullptr};
  PositionWiseFFN ffn{nullptr};
  AddNorm addnorm2{nullptr};
  EncoderBlockImpl(std::int64_t hiddens, std::int64_t ffn_hiddens, std::int64_t heads, double p, bool bias)
      : attention(register_module("attention", MultiHeadAttention(hiddens, heads, p, bias))),
        addnorm1(register_module("addnorm1", AddNorm(hiddens, p))),
        ffn(register_module("ffn", PositionWiseFFN(hiddens, ffn_hiddens, hiddens))),
        addnorm2(register_module("addnorm2", AddNorm(hiddens, p))) {}
  Tensor forward(Tensor const& X, Tensor const& valid_lens) {
    auto const Y = addnorm1(X, attention(X, X, X, valid_lens));
    return addnorm2(Y, ffn(Y));
  }
};
TORCH_MODULE(EncoderBlock);

struct TransformerEncoderImpl : torch::nn::Module {
  std::int64_t hiddens;
  torch::nn::Embedding embedding{nullptr};
  PositionalEncoding pos_encoding{nullptr};
  torch::nn::ModuleList blks{nullptr};
  std::vector<EncoderBlock> blocks;
  TransformerEncoderImpl(std::int64_t vocab, std::int64_t num_hiddens, std::int64_t ffn_hiddens, std::int64_t heads,
                         std::int64_t layers, double p, bool bias)
      : hiddens(num_hiddens),
        embedding(register_module("embedding", torch::nn::Embedding(vocab, num_hiddens))),
        pos_encoding(register_module("pos_encoding", PositionalEncoding(num_hiddens, p))),
        blks(register_module("blks", torch::nn::ModuleList())) {
    for (std::int64_t i = 0; i < layers; ++i) {
      blocks.emplace_back(num_hiddens, ffn_hiddens, heads, p, bias);
      blks->push_back(blocks.back());
    }
  }
  Tensor forward(Tensor const& X, Tensor const& valid_lens) {
    auto Y = pos_encoding(embedding(X) * std::sqrt(static_cast<double>(hiddens)));
    for (auto& blk : blocks) Y = blk(Y, valid_lens);
    return Y;
  }
};
TORCH_MODULE(TransformerEncoder);

struct TransformerState {
  Tensor enc_outputs, enc_valid_lens;
  std::vector<Tensor> key_values;
  std::int64_t steps = 0;  // decoded so far (the positions' offset)
};

struct DecoderBlockImpl : torch::nn::Module {
  std::size_t i;
  MultiHeadAttention attention1{nullptr};
  AddNorm addnorm1{nullptr};
  MultiHeadAttention attention2{nullptr};
  AddNorm addnorm2{nullptr};
  PositionWiseFFN ffn{nullptr};
  AddNorm addnorm3{nullptr};
  DecoderBlockImpl(std::int64_t hiddens, std::int64_t ffn_hiddens, std::int64_t heads, double p, std::size_t index)
      : i(index),
        attention1(register_module("attention1", MultiHeadAttention(hiddens, heads, p, false))),
        addnorm1(register_module("addnorm1", AddNorm(hiddens, p))),
        attention2(register_module("attention2", MultiHeadAttention(hiddens, heads, p, false))),
        addnorm2(register_module("addnorm2", AddNorm(hiddens, p))),
        ffn(register_module("ffn", PositionWiseFFN(hiddens, ffn_hiddens, hiddens))),
        addnorm3(register_module("addnorm3", AddNorm(hiddens, p))) {}
  Tensor forward(Tensor const& X, TransformerState& state) {
    auto& cached = state.key_values[i];
    Tensor const key_values = cached.defined() ? torch::cat({cached, X}, 1) : X;
    cached = key_values;
    Tensor dec_valid_lens;
    if (is_training()) dec_valid_lens = torch::arange(1, X.size(1) + 1).repeat({X.size(0), 1});
    auto const Y = addnorm1(X, attention1(X, key_values, key_values, dec_valid_lens));
    auto const Z = addnorm2(Y, attention2(Y, state.enc_outputs, state.enc_outputs, state.enc_valid_lens));
    return addnorm3(Z, ffn(Z));
  }
};
TORCH_MODULE(DecoderBlock);

struct TransformerDecoderImpl : torch::nn::Module {
  std::int64_t hiddens;
  torch::nn::Embedding embedding{nullptr};
  PositionalEncoding pos_encoding{nullptr};
  torch::nn::ModuleList blks{nullptr};
  std::vector<DecoderBlock> blocks;
  torch::nn::Linear dense{nullptr};
  using state = TransformerState;
  TransformerDecoderImpl(std::int64_t vocab, std::int64_t num_hiddens, std::int64_t ffn_hiddens, std::int64_t heads,
                         std::int64_t layers, double p)
      : hiddens(num_hiddens),
        embedding(register_module("embedding", torch::nn::Embedding(vocab, num_hiddens))),
        pos_encoding(register_module("pos_encoding", PositionalEncoding(num_hiddens, p))),
        blks(register_module("blks", torch::nn::ModuleList())) {
    for (std::int64_t i = 0; i < layers; ++i) {
      blocks.emplace_back(num_hiddens, ffn_hiddens, heads, p, static_cast<std::size_t>(i));
      blks->push_back(blocks.back());
    }
    dense = register_module("dense", torch::nn::Linear(num_hiddens, vocab));
  }
  state init_state(Tensor const& enc_outputs, Tensor const& enc_valid_lens) {
    return {enc_outputs, enc_valid_lens, std::vector<Tensor>(blocks.size()), 0};
  }
  std::pair<Tensor, state> forward(Tensor const& X, state s) {
    auto Y = pos_encoding(embedding(X) * std::sqrt(static_cast<double>(hiddens)), s.steps);
    for (auto& blk : blocks) Y = blk(Y, s);
    s.steps += X.size(1);
    return {dense(Y), std::move(s)};
  }
};
TORCH_MODULE(TransformerDecoder);

// d2l's EncoderDecoder.
template <class Encoder, class Decoder>
struct EncoderDecoderImpl : torch::nn::Module {
  Encoder encoder;
  Decoder decoder;
  EncoderDecoderImpl(Encoder enc, Decoder dec)
      : encoder(register_module("encoder", std::move(enc))), decoder(register_module("decoder", std::move(dec))) {}
  /// The decoder's state after the source @p X.
  auto encode(Tensor const& X, Tensor const& valid_lens) {
    return decoder->init_state(encoder(X, valid_lens), valid_lens);
  }
  Tensor forward(Tensor const& enc_X, Tensor const& dec_X, Tensor const& valid_lens) {
    return decoder(dec_X, encode(enc_X, valid_lens)).first;
  }
};

using BahdanauImpl = EncoderDecoderImpl<Seq2SeqEncoder, Seq2SeqAttentionDecoder>;
TORCH_MODULE(Bahdanau);
using TransformerImpl = EncoderDecoderImpl<TransformerEncoder, TransformerDecoder>;
TORCH_MODULE(Transformer);

Bahdanau make_bahdanau() {
  auto const& c = corpus::get();
  return Bahdanau(Seq2SeqEncoder(c.src_count(), 32, 32, 2, dropout),
                  Seq2SeqAttentionDecoder(c.tgt_count(), 32, 32, 2, dropout));
}

Transformer make_transformer() {
  auto const& c = corpus::get();
  return Transformer(TransformerEncoder(c.src_count(), 32, 64, 4, 2, dropout, false),
                     TransformerDecoder(c.tgt_count(), 32, 64, 4, 2, dropout));
}

// d2l's MaskedSoftmaxCELoss.
Tensor masked_softmax_ce_loss(Tensor const& pred, Tensor const& label, Tensor const& valid_len) {
  auto weights = dimtensor_bench::sequence_mask(torch::ones_like(label, torch::kFloat32), valid_len, 0.0F);
  auto const unweighted = torch::nn::functional::cross_entropy(
      pred.permute({0, 2, 1}), label, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  return (unweighted * weights).mean(1);
}

/// The libtorch batches, copies of the dimtensor ones.
struct torch_batch {
  Tensor X, X_valid_len, Y, Y_valid_len;
};
std::vector<torch_batch> const& batches() {
  static std::vector<torch_batch> const out = [] {
    std::vector<torch_batch> b;
    for (auto const& d : corpus::get().batches) {
      using dimtensor_bench::to_torch;
      b.push_back({to_torch(d.X), to_torch(d.X_valid_len), to_torch(d.Y), to_torch(d.Y_valid_len)});
    }
    return b;
  }();
  return out;
}

/// The summed loss of one batch (d2l's train_seq2seq body before backward).
template <class Net>
Tensor batch_loss(Net& net, torch_batch const& b) {
  auto const bos = torch::full({b.Y.size(0), 1}, corpus::get().bos, torch::kInt64);
  auto const dec_input = torch::cat({bos, b.Y.index({Slice(), Slice(None, -1)})}, 1);
  return masked_softmax_ce_loss(net->forward(b.X, dec_input, b.X_valid_len), b.Y, b.Y_valid_len).sum();
}

template <class Net>
struct trainer {
  Net net;
  torch::optim::Adam optimizer;
  explicit trainer(Net n) : net(std::move(n)), optimizer(net->parameters(), torch::optim::AdamOptions(learning_rate)) {
    net->train();
  }
  double epoch() {
    double loss = 0;
    for (auto const& b : batches()) {
      optimizer.zero_grad();
      auto const l = batch_loss(net, b);
      l.backward();
      torch::nn::utils::clip_grad_norm_(net->parameters(), 1.0);
      optimizer.step();
      loss += l.template item<double>();
    }
    return loss;
  }
};

/// d2l's predict_seq2seq.
template <class Net>
std::vector<std::int64_t> decode(Net& net) {
  torch::NoGradGuard const no_grad;
  net->eval();
  auto const& c = corpus::get();
  auto const enc_X = torch::tensor(c.src, torch::kInt64).unsqueeze(0);
  auto state = net->encode(enc_X, torch::tensor({static_cast<std::int64_t>(c.src_valid_len)}, torch::kInt64));
  std::vector<std::int64_t> tokens;
  std::int64_t token = c.bos;
  for (std::size_t k = 0; k < num_steps; ++k) {
    auto [Y, next] = net->decoder(torch::full({1, 1}, token, torch::kInt64), std::move(state));
    state = std::move(next);
    token = Y.argmax(2).template item<std::int64_t>();
    if (token == c.eos) break;
    tokens.push_back(token);
  }
  return tokens;
}

/// Copies @p from's parameters into @p to's by key; false (saying which) when the keys differ.
template <class DtNet, class TorchNet>
bool copy_weights(DtNet const& from, TorchNet& to) {
  torch::NoGradGuard const no_grad;
  auto params = to->named_parameters();
  std::set<std::string> seen;
  bool ok = true;
  from.for_each_parameter([&](std::string const& key, auto const& p) {
    auto* target = params.find(key);
    if (target == nullptr) {
      std::fprintf(stderr, "translation_bench: libtorch model has no parameter %s\n", key.c_str());
      ok = false;
      return;
    }
    auto const source = dimtensor_bench::to_torch(p);
    if (source.sizes() != target->sizes()) {
      std::fprintf(stderr, "translation_bench: %s has other sizes in libtorch\n", key.c_str());
      ok = false;
      return;
    }
    target->copy_(source);
    seen.insert(key);
  });
  for (auto const& item : params) {
    if (seen.count(item.key()) == 0) {
      std::fprintf(stderr, "translation_bench: dimtensor model has no parameter %s\n", item.key().c_str());
      ok = false;
    }
  }
  return ok;
}

}  // namespace peer
#endif

// ---------------------------------------------------------------------------
// The models of the timings, built once: dimtensor's drawn from a generator,
// xavier-initialized as train_seq2seq does; libtorch's with the same weights.
template <class Net>
Net initialized(Net (*make)(dt::generator&), std::uint64_t seed) {
  dt::generator gen(seed);
  auto net = make(gen);
  xavier_init(net, gen);
  return net;
}

struct models {
  dimtensor_trainer<bahdanau_t> bahdanau{initialized(make_bahdanau, 1)};
  bahdanau_t bahdanau_decoding = initialized(make_bahdanau, 2);
  dimtensor_trainer<transformer_t> transformer{initialized(make_transformer, 3)};
  transformer_t transformer_decoding = initialized(make_transformer, 4);
#if DIMTENSOR_HAVE_LIBTORCH
  peer::trainer<peer::Bahdanau> torch_bahdanau{peer::make_bahdanau()};
  peer::Bahdanau torch_bahdanau_decoding = peer::make_bahdanau();
  peer::trainer<peer::Transformer> torch_transformer{peer::make_transformer()};
  peer::Transformer torch_transformer_decoding = peer::make_transformer();
  bool same_weights = peer::copy_weights(bahdanau.net, torch_bahdanau.net) &&
                      peer::copy_weights(bahdanau_decoding, torch_bahdanau_decoding) &&
                      peer::copy_weights(transformer.net, torch_transformer.net) &&
                      peer::copy_weights(transformer_decoding, torch_transformer_decoding);
#endif
  static models& get() {
    static models m;
    return m;
  }
};

void dimtensor_train_bahdanau(benchmark::State& state) {
  auto& m = models::get();
  for (auto _ : state) benchmark::DoNotOptimize(m.bahdanau.epoch());
}

void dimtensor_train_transformer(benchmark::State& state) {
  auto& m = models::get();
  for (auto _ : state) benchmark::DoNotOptimize(m.transformer.epoch());
}

template <class Decode>
void decoding(benchmark::State& state, Decode decode) {
  std::size_t steps = 0;
  for (auto _ : state) {
    auto const out = decode();
    steps += std::min(out.size() + 1, num_steps);  // a step per token, and one for <eos> unless cut off
    benchmark::DoNotOptimize(out.data());
  }
  // Decoder steps per sentence, and seconds per step.
  state.counters["steps"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kAvgIterations);
  state.counters["per_token"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void dimtensor_decode_bahdanau(benchmark::State& state) {
  decoding(state, [] { return dimtensor_decode(models::get().bahdanau_decoding); });
}

void dimtensor_decode_transformer(benchmark::State& state) {
  decoding(state, [] { return dimtensor_decode(models::get().transformer_decoding); });
}

#if DIMTENSOR_HAVE_LIBTORCH
void libtorch_train_bahdanau(benchmark::State& state) {
  auto& m = models::get();
  for (auto _ : state) benchmark::DoNotOptimize(m.torch_bahdanau.epoch());
}

void libtorch_train_transformer(benchmark::State& state) {
  auto& m = models::get();
  for (auto _ : state) benchmark::DoNotOptimize(m.torch_transformer.epoch());
}

void libtorch_decode_bahdanau(benchmark::State& state) {
  decoding(state, [] { return peer::decode(models::get().torch_bahdanau_decoding); });
}

void libtorch_decode_transformer(benchmark::State& state) {
  decoding(state, [] { return peer::decode(models::get().torch_transformer_decoding); });
}

/// The largest relative difference between a dimtensor tensor and a libtorch one.
template <class Tensor>
double relative_difference(Tensor const& ours, torch::Tensor const& theirs) {
  auto const t = dimtensor_bench::to_torch(ours);
  return (t - theirs).abs().max().template item<double>() / std::max(1e-6, theirs.abs().max().template item<double>());
}

/// Same weights, eval mode: the first batch's loss and one gradient agree.
template <class DtNet, class TorchNet>
bool same_model(char const* name, DtNet& net, TorchNet& torch_net) {
  auto const& c = corpus::get();
  auto const& b = c.batches.front();
  net.eval();
  torch_net->eval();
  net.for_each_parameter([](auto const&, auto& p) { p.zero_grad(); });
  auto const l = batch_loss(net, b, c.bos);
  l.backward();
  torch_net->zero_grad();
  auto const tl = peer::batch_loss(torch_net, peer::batches().front());
  tl.backward();
  std::string const what = std::string("translation_bench: ") + name;
  return dimtensor_bench::agrees((what + ": loss").c_str(), std::fabs(l.item() - tl.template item<double>()) / tl.template item<double>(),
                                 1e-5) &&
         dimtensor_bench::agrees((what + ": gradient of decoder.dense.weight").c_str(),
                                 relative_difference(net.decoder.dense.weight.grad(),
                                                     torch_net->named_parameters()["decoder.dense.weight"].grad()),
                                 1e-4);
}
#endif

// The two libraries must run the same models, or the timing means nothing.
bool results_agree() {
  auto& m = models::get();
  bool ok = true;
#if DIMTENSOR_HAVE_LIBTORCH
  if (!m.same_weights) return false;
  // Fresh models with the timed ones' first weights (the timed ones stay untouched).
  auto bahdanau = initialized(make_bahdanau, 1);
  auto transformer = initialized(make_transformer, 3);
  auto torch_bahdanau = peer::make_bahdanau();
  auto torch_transformer = peer::make_transformer();
  ok = peer::copy_weights(bahdanau, torch_bahdanau) && peer::copy_weights(transformer, torch_transformer);
  ok = ok && same_model("bahdanau", bahdanau, torch_bahdanau) && same_model("transformer", transformer, torch_transformer);
  auto const tokens_agree = [](char const* name, std::vector<std::int64_t> const& a,
                               std::vector<std::int64_t> const& b) {
    if (a == b) return true;
    std::fprintf(stderr, "translation_bench: %s: the two libraries decode different tokens\n", name);
    return false;
  };
  ok = ok &&
       tokens_agree("bahdanau", dimtensor_decode(m.bahdanau_decoding), peer::decode(m.torch_bahdanau_decoding)) &&
       tokens_agree("transformer", dimtensor_decode(m.transformer_decoding),
                    peer::decode(m.torch_transformer_decoding));
#else
  static_cast<void>(m);  // nothing to compare with
#endif
  return ok;
}

// ---------------------------------------------------------------------------
// The inputs of the PyTorch 2 peer (DIMTENSOR_BENCH_INPUTS).

template <class T>
dt::tensor<std::int64_t, Batch> scalar_column(std::vector<T> const& values) {
  dt::tensor<std::int64_t, Batch> t(dt::tensor<std::int64_t, Batch>::extents_type{
      static_cast<dt::index_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<std::int64_t>(values[i]);
  return t;
}

/// A model's first weights, and what the peer checks: the eval-mode loss of
/// the first batch, the gradient of decoder.dense.weight and the decoded tokens.
template <class Net>
void write_model(std::filesystem::path const& dir, Net net) {
  auto const& c = corpus::get();
  nn::save_parameters(net, dir / "params");
  net.eval();
  nn::zero_grad(net);
  auto const l = dt::eval(batch_loss(net, c.batches.front(), c.bos));
  l.backward();
  dt::save_npy(dir / "loss.npy", l);
  dt::save_npy(dir / "grad_dense.npy", net.decoder.dense.weight.grad());
  dt::save_npy(dir / "tokens.npy", scalar_column(dimtensor_decode(net)));
}

void write_inputs(std::filesystem::path const& root) {
  auto const dir = root / "translation";
  auto const& c = corpus::get();
  std::filesystem::create_directories(dir);
  for (std::size_t k = 0; k < c.batches.size(); ++k) {
    std::string const n = std::to_string(k);
    dt::save_npy(dir / ("X_" + n + ".npy"), c.batches[k].X);
    dt::save_npy(dir / ("X_valid_len_" + n + ".npy"), c.batches[k].X_valid_len);
    dt::save_npy(dir / ("Y_" + n + ".npy"), c.batches[k].Y);
    dt::save_npy(dir / ("Y_valid_len_" + n + ".npy"), c.batches[k].Y_valid_len);
  }
  dt::save_npy(dir / "src.npy", scalar_column(c.src));
  dt::save_npy(dir / "meta.npy", scalar_column(std::vector<std::int64_t>{
                                     c.src_valid_len, c.bos, c.eos, c.src_count(), c.tgt_count(),
                                     static_cast<std::int64_t>(num_steps), static_cast<std::int64_t>(c.batches.size())}));
  write_model(dir / "bahdanau", initialized(make_bahdanau, 1));
  write_model(dir / "bahdanau_decoding", initialized(make_bahdanau, 2));
  write_model(dir / "transformer", initialized(make_transformer, 3));
  write_model(dir / "transformer_decoding", initialized(make_transformer, 4));
}

// ---------------------------------------------------------------------------
// Peak memory of one training epoch, each library and model in a child process.

long status_kb(char const* field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stol(line.substr(std::strlen(field)));
  }
  return -1;
}

/// The resident memory @p run adds at its peak, in MB, measured in a child
/// process; nullopt when the child fails or the figure cannot be read.
std::optional<double> peak_mb(int threads, std::function<void()> const& run) {
  int fds[2];
  if (pipe(fds) != 0) return std::nullopt;
  pid_t const child = fork();
  if (child < 0) return std::nullopt;
  if (child == 0) {
    close(fds[0]);
    dt::set_num_threads(threads);
#if DIMTENSOR_HAVE_LIBTORCH
    torch::set_num_threads(threads);
#endif
    long const before = status_kb("VmRSS:");
    { std::ofstream("/proc/self/clear_refs") << "5"; }  // the peak (VmHWM) starts again from here
    run();
    long const peak = status_kb("VmHWM:");
    double const mb = before < 0 || peak < 0 ? -1.0 : static_cast<double>(peak - before) / 1024.0;
    [[maybe_unused]] auto const written = write(fds[1], &mb, sizeof mb);
    _exit(0);
  }
  close(fds[1]);
  double mb = -1;
  auto const got = read(fds[0], &mb, sizeof mb);
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  if (got != sizeof mb || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || mb < 0) return std::nullopt;
  return mb;
}

std::vector<std::string> memory_lines;

void measure_memory(int threads) {
  corpus::get();  // read before the fork, as both libraries get it
  auto const line = [](char const* what, std::optional<double> mb) {
    char text[128];
    if (mb) {
      std::snprintf(text, sizeof text, "  %-36s %8.1f MB", what, *mb);
    } else {
      std::snprintf(text, sizeof text, "  %-36s (not measured)", what);
    }
    memory_lines.emplace_back(text);
  };
  line("dimtensor/train_bahdanau", peak_mb(threads, [] {
         dimtensor_trainer<bahdanau_t> t(initialized(make_bahdanau, 1));
         benchmark::DoNotOptimize(t.epoch());
       }));
  line("dimtensor/train_transformer", peak_mb(threads, [] {
         dimtensor_trainer<transformer_t> t(initialized(make_transformer, 3));
         benchmark::DoNotOptimize(t.epoch());
       }));
#if DIMTENSOR_HAVE_LIBTORCH
  line("libtorch/train_bahdanau", peak_mb(threads, [] {
         peer::trainer<peer::Bahdanau> t(peer::make_bahdanau());
         benchmark::DoNotOptimize(t.epoch());
       }));
  line("libtorch/train_transformer", peak_mb(threads, [] {
         peer::trainer<peer::Transformer> t(peer::make_transformer());
         benchmark::DoNotOptimize(t.epoch());
       }));
#endif
}

}  // namespace

int main(int argc, char** argv) {
  bool listing = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]).rfind("--benchmark_list_tests", 0) == 0) listing = true;
  }
  if (!listing) {
    int threads = dt::get_num_threads();
    if (char const* env = std::getenv("DIMTENSOR_BENCH_THREADS"); env != nullptr && std::atoi(env) > 0) {
      threads = std::atoi(env);
    }
    measure_memory(threads);
    if (char const* dir = std::getenv("DIMTENSOR_BENCH_INPUTS")) write_inputs(dir);
  }
  dimtensor_bench::register_timed("dimtensor/train_bahdanau", dimtensor_train_bahdanau);
  dimtensor_bench::register_timed("dimtensor/train_transformer", dimtensor_train_transformer);
  dimtensor_bench::register_timed("dimtensor/decode_bahdanau", dimtensor_decode_bahdanau);
  dimtensor_bench::register_timed("dimtensor/decode_transformer", dimtensor_decode_transformer);
#if DIMTENSOR_HAVE_LIBTORCH
  dimtensor_bench::register_timed("libtorch/train_bahdanau", libtorch_train_bahdanau);
  dimtensor_bench::register_timed("libtorch/train_transformer", libtorch_train_transformer);
  dimtensor_bench::register_timed("libtorch/decode_bahdanau", libtorch_decode_bahdanau);
  dimtensor_bench::register_timed("libtorch/decode_transformer", libtorch_decode_transformer);
#endif
  int const rc = dimtensor_bench::run_main(argc, argv, results_agree);
  if (rc == 0 && !listing) {
    std::printf("\npeak memory of one training epoch (resident set added, one child process each)\n");
    for (auto const& l : memory_lines) std::printf("%s\n", l.c_str());
  }
  return rc;
}
