// d2l's machine translation trained data-parallel: the models of
// examples/translation and one epoch of d2l's train_seq2seq in which every
// rank takes its rows of each batch (dist::shard_batches), the gradients
// are summed over the ranks (dist::all_reduce_gradients), then clipped to
// the global norm 1, and Adam steps on every rank alike.  With one rank it
// is d2l's train_seq2seq itself.  Shared by example_distributed_translation
// and tests/dist/equivalence_test.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <dimtensor/data.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
#include <dimtensor/nn/init.hpp>
#include <dimtensor/nn/seq2seq.hpp>
#include <dimtensor/nn/transformer.hpp>
#include <dimtensor/optim.hpp>

namespace distributed_translation {

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
namespace dist = dimtensor::dist;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
DIMTENSOR_DIM(SrcVocab);
DIMTENSOR_DIM(TgtVocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFNHidden);
DIMTENSOR_DIM(Pair);

using dataset_t = dt::data::nmt_dataset<Batch, EncSteps, DecSteps>;
// d2l's Seq2SeqEncoder + Seq2SeqAttentionDecoder, in float or double.
template <class T = float>
using bahdanau_t =
    nn::encoder_decoder<nn::seq2seq_encoder<Batch, EncSteps, SrcVocab, Embed, Hidden, T>,
                        nn::seq2seq_attention_decoder<Batch, DecSteps, EncSteps, TgtVocab, Embed, Hidden, T>>;
// d2l's TransformerEncoder + TransformerDecoder, in float or double.
template <class T = float>
using transformer_t =
    nn::encoder_decoder<nn::transformer_encoder<Batch, EncSteps, SrcVocab, Hidden, FFNHidden, T>,
                        nn::transformer_decoder<Batch, DecSteps, EncSteps, TgtVocab, Hidden, FFNHidden, T>>;

/// d2l's initialization: xavier_uniform_ on the weight matrices but the embeddings'.
template <class Net>
void init_weights(Net& net, dt::generator& gen) {
  net.for_each_parameter([&](std::string const& key, auto& p) {
    if constexpr (std::remove_cvref_t<decltype(p)>::rank == 2) {
      if (key.find("embedding") == std::string::npos) nn::xavier_uniform_(p, gen);
    }
  });
}

/// The loss and the number of tokens of some pairs, summed.
struct loss_sum {
  double loss = 0;
  double tokens = 0;
};

/// @brief Teacher forcing from <bos>, d2l's MaskedSoftmaxCELoss summed over
/// the pairs of @p part, and its backward pass: this rank's share of the
/// batch's gradient.
template <class Net, class Part>
loss_sum forward_backward(Net& net, Part const& part, std::int64_t bos) {
  auto const& [X, X_valid_len, Y, Y_valid_len] = part;
  dt::index_t const n = Y.template extent<DecSteps>();
  auto const bos_column = dt::full<std::int64_t>(bos, Batch(Y.template extent<Batch>()), DecSteps(1));
  auto const dec_input = dt::concat<DecSteps>(bos_column, dt::slice<DecSteps>(Y, 0, n - 1));
  auto const [Y_hat, state] = net(X, dec_input, X_valid_len);
  auto const l = dt::sum(nn::masked_softmax_ce_loss<DecSteps, TgtVocab>(Y_hat, Y, Y_valid_len));
  l.backward();
  return {static_cast<double>(l.item()), static_cast<double>(dt::sum(Y_valid_len).item())};
}

/// @brief One epoch of d2l's train_seq2seq over @p comm's ranks (at most
/// @p max_batches batches): the batches in the order @p shuffle draws
/// (seeded the same on every rank), each rank's rows forward and backward,
/// the gradients summed over the ranks, clipped to the global norm 1, one
/// Adam step.  Returns the loss per token of the whole batches.
template <class Net>
double train_epoch(Net& net, dt::optim::adam& optimizer, dataset_t const& data, std::size_t batch_size,
                   dt::generator& shuffle, dist::communicator const& comm,
                   std::size_t max_batches = static_cast<std::size_t>(-1)) {
  std::int64_t const bos = data.tgt_vocab()["<bos>"];
  auto const batches = dist::shard_batches(data.batches(batch_size, shuffle), comm);
  dt::tensor<double, Pair> sums{0.0, 0.0};  // loss, tokens
  std::size_t done = 0;
  for (auto it = batches.begin(); it != batches.end() && done < max_batches; ++it, ++done) {
    optimizer.zero_grad();
    if (!batches.part(done).empty()) {
      loss_sum const s = forward_backward(net, *it, bos);
      sums.data()[0] += s.loss;
      sums.data()[1] += s.tokens;
    }
    dist::all_reduce_gradients(net, comm);
    dt::optim::clip_grad_norm(net, 1.0);
    optimizer.step();
  }
  dist::all_reduce(sums, comm);
  return sums.data()[0] / sums.data()[1];
}

}  // namespace distributed_translation
