#pragma once
/// @file
/// @brief d2l's sequence-to-sequence models with Bahdanau attention:
/// `nn::seq2seq_encoder` (`Seq2SeqEncoder`) and `nn::seq2seq_attention_decoder`
/// (`Seq2SeqAttentionDecoder`); the frame that joins them, `nn::encoder_decoder`
/// (`EncoderDecoder`), and greedy decoding, `nn::predict_seq2seq`, are in
/// nn/encoder_decoder.hpp, which this header includes.
///
/// The models name what PyTorch leaves to comments: the batch, the source
/// steps (EncSteps), the target steps (DecSteps), the vocabularies, the
/// embedding and the hidden features are dims of their own, so feeding the
/// encoder's steps where the decoder's are expected, attending over the
/// decoder's own steps, or forgetting d2l's `permute(1, 0, 2)` are compile
/// errors, not silently wrong tensors.  The members are d2l's, under its
/// names, so `state_dict` keys match (`encoder.rnn.weight_ih_l0`,
/// `decoder.attention.W_k.weight`, …).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/attention/additive_attention.hpp>
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/encoder_decoder.hpp>
#include <dimtensor/nn/gru.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/ops/select.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::seq2seq_encoder::operator()`.
struct seq2seq_encoder : named<"seq2seq_encoder"> {};
/// `nn::seq2seq_attention_decoder::operator()` and `init_state`.
struct seq2seq_attention_decoder : named<"seq2seq_attention_decoder"> {};
}  // namespace call

namespace nn {

/// The Bahdanau decoder's attention features: d2l's
/// `AdditiveAttention(num_hiddens, num_hiddens, num_hiddens)` maps the
/// hidden state into a space of num_hiddens features of its own.
DIMTENSOR_DIM(AttentionHidden);
/// The Bahdanau decoder's GRU input: the context (Hidden) then the embedded
/// token (Embed), d2l's `torch.cat((context, x), dim=-1)`.
DIMTENSOR_DIM(DecoderInput);

/// @brief d2l's `Seq2SeqEncoder(vocab_size, embed_size, num_hiddens,
/// num_layers, dropout)`: an embedding and a GRU over the source tokens.
///
/// Tokens are [Batch, Steps] indices (int32 or int64, any order of the two
/// dims); the call returns the GRU's outputs [Batch, Steps, Hidden] and its
/// final state [Layers, Batch, Hidden] as a pair (d2l's `(output, state)`,
/// without its time-major permute: dims are found by name).
/// Members, in d2l's order: `embedding`, `rnn`.
template <class Batch, class Steps, class Vocab, class Embed, class Hidden, class T = float,
          class Backend = default_backend>
class seq2seq_encoder : public module<seq2seq_encoder<Batch, Steps, Vocab, Embed, Hidden, T, Backend>> {
 public:
  /// The dims of the source: batch and steps.
  using batch_dim = Batch;
  /// The source steps.
  using steps_dim = Steps;
  /// The hidden features of the outputs and the state.
  using hidden_dim = Hidden;
  /// The element type.
  using value_type = T;
  /// The backend of the parameters and of the tokens.
  using backend = Backend;

  // d2l's members: the token embedding [Vocab, Embed] and the GRU reading it.
  BOOST_HANA_DEFINE_STRUCT(seq2seq_encoder, (nn::embedding<Vocab, Embed, T, Backend>, embedding),
                           (nn::gru<Steps, Batch, Embed, Hidden, T, Backend>, rnn));

  /// The layers drawn from @p gen in d2l's order (embedding, rnn).
  seq2seq_encoder(Vocab vocab_size, Embed embed_size, Hidden num_hiddens, index_t num_layers, double dropout,
                  generator& gen)
      : embedding(vocab_size, embed_size, gen), rnn(embed_size, num_hiddens, num_layers, dropout, gen) {}
  /// As above, drawing from `default_generator()`.
  seq2seq_encoder(Vocab vocab_size, Embed embed_size, Hidden num_hiddens, index_t num_layers, double dropout = 0)
      : seq2seq_encoder(vocab_size, embed_size, num_hiddens, num_layers, dropout, default_generator()) {}

  /// @brief The GRU's outputs [Batch, Steps, Hidden] and final state
  /// [Layers, Batch, Hidden] for the tokens @p x, [Batch, Steps]; valid
  /// lengths, if given, are ignored (as d2l's `forward(X, *args)`).
  template <class X, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(X const& x, L const&...) {
    if constexpr (rejects(detail::tokens_diagnosis<call::seq2seq_encoder, Batch, Steps, X>())) {
      return ill_formed{};
    } else {
      return checked<call::seq2seq_encoder>([&](auto const& x) { return rnn(embedding(x)); }, x);
    }
  }
};

/// @brief The decoder's state between calls: the encoder's outputs (keys
/// and values of the attention), the GRU's state, and the source's valid
/// lengths (none: every step counts).
template <class Batch, class EncSteps, class Hidden, class T = float, class Backend = default_backend>
struct seq2seq_state {
  /// The encoder's outputs, [Batch, EncSteps, Hidden].
  basic_tensor<Backend, T, Batch, EncSteps, Hidden> enc_outputs;
  /// The GRU's state, [Layers, Batch, Hidden].
  basic_tensor<Backend, T, Layers, Batch, Hidden> hidden;
  /// The valid lengths of the sources, [Batch].
  std::optional<basic_tensor<Backend, std::int64_t, Batch>> enc_valid_lens;
};

/// @brief d2l's `Seq2SeqAttentionDecoder(vocab_size, embed_size,
/// num_hiddens, num_layers, dropout)`: at each target step, additive
/// attention of the top layer's state over the encoder's outputs, the
/// context joined to the embedded token, one GRU step, then a dense layer
/// to the vocabulary.
///
/// Tokens are [Batch, DecSteps] indices; a call returns the logits
/// [Batch, DecSteps, Vocab] and the next state, as a pair, and keeps the
/// per-step attention weights, `attention_weights()`, [Batch, DecSteps,
/// EncSteps].  Members, in d2l's order: `attention` (W_k, W_q, w_v over
/// AttentionHidden), `embedding`, `rnn` (reading DecoderInput = Hidden +
/// Embed), `dense`.
template <class Batch, class DecSteps, class EncSteps, class Vocab, class Embed, class Hidden, class T = float,
          class Backend = default_backend>
class seq2seq_attention_decoder
    : public module<seq2seq_attention_decoder<Batch, DecSteps, EncSteps, Vocab, Embed, Hidden, T, Backend>> {
  static_assert(!std::is_same_v<DecSteps, EncSteps>,
                "dimtensor: seq2seq_attention_decoder needs the target steps and the source steps to be different "
                "dims (DecSteps and EncSteps), so that attention over the wrong steps is a compile error");

 public:
  /// The batch dim.
  using batch_dim = Batch;
  /// The target steps.
  using steps_dim = DecSteps;
  /// The target vocabulary.
  using vocab_dim = Vocab;
  /// The element type.
  using value_type = T;
  /// The backend.
  using backend = Backend;
  /// The state between calls.
  using state_type = seq2seq_state<Batch, EncSteps, Hidden, T, Backend>;
  /// The kept attention weights, [Batch, DecSteps, EncSteps].
  using weights_type = basic_tensor<Backend, T, Batch, DecSteps, EncSteps>;

  // d2l's members, in its order.
  BOOST_HANA_DEFINE_STRUCT(seq2seq_attention_decoder,
                           (additive_attention<DecSteps, EncSteps, Hidden, Hidden, AttentionHidden, T, Backend>,
                            attention),
                           (nn::embedding<Vocab, Embed, T, Backend>, embedding),
                           (nn::gru<DecSteps, Batch, DecoderInput, Hidden, T, Backend>, rnn),
                           (linear<Hidden, Vocab, T, Backend>, dense));

  /// The layers drawn from @p gen in d2l's order (attention, embedding,
  /// rnn, dense).
  seq2seq_attention_decoder(Vocab vocab_size, Embed embed_size, Hidden num_hiddens, index_t num_layers,
                            double dropout, generator& gen)
      : attention(num_hiddens, num_hiddens, AttentionHidden(num_hiddens.value), dropout, gen),
        embedding(vocab_size, embed_size, gen),
        rnn(DecoderInput(checked_sum(embed_size, num_hiddens)), num_hiddens, num_layers, dropout, gen),
        dense(num_hiddens, vocab_size, true, gen) {}
  /// As above, drawing from `default_generator()`.
  seq2seq_attention_decoder(Vocab vocab_size, Embed embed_size, Hidden num_hiddens, index_t num_layers,
                            double dropout = 0)
      : seq2seq_attention_decoder(vocab_size, embed_size, num_hiddens, num_layers, dropout, default_generator()) {}

  /// @brief d2l's `init_state(enc_outputs, enc_valid_lens)`: the encoder's
  /// (outputs, state) pair and the sources' valid lengths ([Batch], or
  /// none).
  template <class EncOutputs, class... L>
    requires(sizeof...(L) <= 1)
  state_type init_state(EncOutputs const& enc_outputs, L const&... enc_valid_lens) const {
    state_type state{enc_outputs.first, enc_outputs.second, std::nullopt};
    (detail::store_valid_lens<call::seq2seq_attention_decoder, Batch, EncSteps, diagnostic::seq2seq_valid_lens_dims>(
         state.enc_valid_lens, enc_valid_lens),
     ...);
    return state;
  }

  /// @brief The logits [Batch, DecSteps, Vocab] for the target tokens @p x
  /// ([Batch, DecSteps]) from @p state, and the state after them.
  ///
  /// Each step attends with the top layer's state (`select<Layers>(hidden,
  /// -1)`, one query step) over the encoder's outputs, masked by the valid
  /// lengths, and runs the GRU one step on (context, embedded token).
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x, state_type state) {
    if constexpr (rejects(detail::tokens_diagnosis<call::seq2seq_attention_decoder, Batch, DecSteps, X>())) {
      return ill_formed{};
    } else {
      return checked<call::seq2seq_attention_decoder>([&](auto const& x) { return run(x, std::move(state)); }, x);
    }
  }

  /// This thread's last call's attention weights, [Batch, DecSteps,
  /// EncSteps], one row per target step (d2l's `attention_weights`
  /// stacked); `value_error` before the first call.
  weights_type attention_weights() const { return weights_.get<weights_type>("seq2seq_attention_decoder"); }

 private:
  detail::weights_store weights_;

  template <class X>
  auto run(X const& x, state_type state) {
    auto const embedded = embedding(x);  // [Batch, DecSteps, Embed]
    index_t const steps = embedded.template extent<DecSteps>();
    using step_output = std::remove_cvref_t<decltype(step(embedded, state, 0))>;
    std::vector<step_output> outputs;
    std::vector<weights_type> weights;
    outputs.reserve(static_cast<std::size_t>(steps));
    weights.reserve(static_cast<std::size_t>(steps));
    for (index_t t = 0; t < steps; ++t) {
      outputs.push_back(step(embedded, state, t));
      weights.push_back(attention.template attention_weights<Batch, DecSteps, EncSteps>());
    }
    weights_.set(concat<DecSteps>(weights));
    auto logits = dense(concat<DecSteps>(outputs));
    return std::pair<decltype(logits), state_type>(std::move(logits), std::move(state));
  }

  static index_t checked_sum(Embed embed_size, Hidden num_hiddens) {
    if (embed_size.value <= 0 || num_hiddens.value <= 0) {
      throw value_error("seq2seq_attention_decoder: extents must be positive, got " + std::string(dim_name_v<Embed>) +
                        " " + std::to_string(embed_size.value) + " and " + std::string(dim_name_v<Hidden>) + " " +
                        std::to_string(num_hiddens.value));
    }
    return checked_extent_sum("seq2seq_attention_decoder", embed_size.value, num_hiddens.value,
                                                 [] { return std::string("the GRU's input (Embed + Hidden)"); });
  }


  /// Step @p t: the GRU's output [Batch, DecSteps=1, Hidden]; updates
  /// state.hidden.
  template <class E>
  auto step(E const& embedded, state_type& state, index_t t) {
    // query: the top layer's state, one query step: [Batch, DecSteps=1, Hidden].
    auto const query = unsqueeze<DecSteps, 1>(select<Layers>(state.hidden, -1));
    auto const context = attention(query, state.enc_outputs, state.enc_outputs, state.enc_valid_lens);
    auto const token = unsqueeze<DecSteps, 1>(select<DecSteps>(embedded, t));  // [Batch, DecSteps=1, Embed]
    auto [out, hidden] = rnn(concat_as<DecoderInput, Hidden, Embed>(context, token), state.hidden);
    state.hidden = std::move(hidden);
    return out;
  }
};

}  // namespace nn

}  // namespace dimtensor
