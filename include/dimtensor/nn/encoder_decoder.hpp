#pragma once
/// @file
/// @brief The encoder-decoder frame both sequence models share (d2l's
/// `EncoderDecoder` and `predict_seq2seq`): `nn::encoder_decoder`,
/// `nn::predict_seq2seq`, and the checks of the tokens and the sources'
/// valid lengths that the decoders of nn/seq2seq.hpp (Bahdanau) and
/// nn/transformer.hpp make.

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// Tokens of dims @p Dims given to a seq2seq module @p Call that reads
/// tokens of exactly the dims @p Expected (`dims<Batch, Steps>`).
template <class Call, class Expected, class Dims>
struct seq2seq_tokens_dims {
  static_assert(always_false<Call, Expected, Dims>,
                "dimtensor: a seq2seq module was given tokens of other dims than its own batch and steps (see "
                "seq2seq_tokens_dims<call, dims expected, dims of the tokens> above); the encoder reads the source "
                "(EncSteps), the decoder the target (DecSteps)");
};

/// Valid lengths of dims @p Dims given to a seq2seq decoder whose sources'
/// valid lengths are [Batch].
template <class Call, class Batch, class Dims>
struct seq2seq_valid_lens_dims {
  static_assert(always_false<Call, Batch, Dims>,
                "dimtensor: the sources' valid lengths are one number per sequence, [Batch] (see "
                "seq2seq_valid_lens_dims<call, Batch, dims of the lengths> above)");
};

}  // namespace diagnostic

namespace nn {

namespace detail {
/// What is wrong with tokens of type X for a module reading [Batch, Steps]:
/// a diagnostic class, `ill_formed`, or void.
template <class Call, class Batch, class Steps, class X>
constexpr auto tokens_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    using L = typename expr_t<X>::specs;
    if constexpr (expr_t<X>::rank != 2 || !meta::contains_v<Batch, L> ||
                  !meta::contains_v<Steps, L>) {
      return std::type_identity<diagnostic::seq2seq_tokens_dims<Call, dims<Batch, Steps>, L>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

/// @brief Stores the sources' valid lengths @p lens (none, a [Batch] tensor,
/// or a `std::optional` of one) in @p dst as int64; lengths of other dims
/// are the compile error `Diagnostic<Call, Batch, their dims>`, typed
/// lengths of another dim than @p Measured (the sources' steps)
/// `valid_lens_measure_another_dim`.  What both decoders' `init_state` do
/// with d2l's `enc_valid_lens`.
template <class Call, class Batch, class Measured, template <class, class, class> class Diagnostic, class Dst>
void store_valid_lens(Dst&, std::nullopt_t) {}
template <class Call, class Batch, class Measured, template <class, class, class> class Diagnostic, class Dst, class L>
requires(Expression<expr_t<L>>) auto store_valid_lens(Dst& dst, L const& lens) {
  using specs = typename expr_t<L>::specs;
  if constexpr (expr_t<L>::rank != 1 || !meta::contains_v<Batch, specs>) {
    (void)diagnostic::fire<Diagnostic<Call, Batch, specs>>;
  } else if constexpr (!measures_v<L, Measured>) {
    (void)diagnostic::fire<lens_measure_diagnosis_t<Call, L, Measured>>;
  } else {
    dst = cast<std::int64_t>(lens);
  }
}
template <class Call, class Batch, class Measured, template <class, class, class> class Diagnostic, class Dst, class L>
auto store_valid_lens(Dst& dst, std::optional<L> const& lens) {
  if (lens) store_valid_lens<Call, Batch, Measured, Diagnostic>(dst, *lens);
}

}  // namespace detail

/// @brief d2l's `EncoderDecoder(encoder, decoder)`: the encoder's outputs
/// initialize the decoder's state.  Members: `encoder`, `decoder`.
template <class Encoder, class Decoder>
class encoder_decoder : public module<encoder_decoder<Encoder, Decoder>> {
 public:
  BOOST_HANA_DEFINE_STRUCT(encoder_decoder, (Encoder, encoder), (Decoder, decoder));

  /// Takes both halves.
  encoder_decoder(Encoder enc, Decoder dec) : encoder(std::move(enc)), decoder(std::move(dec)) {}

  /// @brief d2l's `forward(enc_X, dec_X, *args)`: the decoder's output for
  /// the target tokens @p dec_x after the source @p enc_x, with the
  /// sources' valid lengths (none, a tensor, or a `std::optional`).
  template <class EX, class DX, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(EX const& enc_x, DX const& dec_x, L const&... enc_valid_lens) {
    auto const enc_outputs = encoder(enc_x, enc_valid_lens...);
    return decoder(dec_x, decoder.init_state(enc_outputs, enc_valid_lens...));
  }
};

/// @brief A translation by `predict_seq2seq`: the target tokens' indices
/// (without `<eos>`) and, when asked for, the decoder's attention weights
/// after each step.
template <class Weights>
struct seq2seq_prediction {
  /// The predicted target indices, `<eos>` excluded.
  std::vector<std::int64_t> tokens;
  /// The decoder's `attention_weights()` after each step (empty unless asked for).
  std::vector<Weights> attention_weights;
};

/// @brief d2l's `predict_seq2seq`: greedy decoding of the source indices
/// @p src (already ending in `<eos>` and padded to the encoder's steps)
/// with @p valid_len of them valid: from `<bos>`, one decoder step per
/// token, each the argmax of the last, until `<eos>` or @p num_steps
/// tokens.
///
/// The model is put in eval mode (as d2l's `net.eval()`); no graph is
/// recorded.  `value_error` when @p src is empty or @p valid_len is not in
/// [1, src.size()].
template <class Net>
auto predict_seq2seq(Net& net, std::vector<std::int64_t> const& src, index_t valid_len, std::int64_t bos,
                     std::int64_t eos, index_t num_steps, bool save_attention_weights = false) {
  using enc_t = std::remove_cvref_t<decltype(net.encoder)>;
  using dec_t = std::remove_cvref_t<decltype(net.decoder)>;
  using backend = typename dec_t::backend;
  using EB = typename enc_t::batch_dim;
  using ES = typename enc_t::steps_dim;
  using DB = typename dec_t::batch_dim;
  using DS = typename dec_t::steps_dim;
  using weights_t = std::remove_cvref_t<decltype(net.decoder.attention_weights())>;
  if (src.empty() || valid_len < 1 || valid_len > static_cast<index_t>(src.size())) {
    throw value_error("predict_seq2seq: valid_len " + std::to_string(valid_len) + " for " +
                      std::to_string(src.size()) + " source tokens (need 1 <= valid_len <= the number of tokens)");
  }
  autograd::no_grad const predicting;
  net.eval();
  basic_tensor<cpu, std::int64_t, EB, ES> enc_host(typename basic_tensor<cpu, std::int64_t, EB, ES>::extents_type{
      1, static_cast<index_t>(src.size())});
  for (std::size_t i = 0; i < src.size(); ++i) enc_host.data()[i] = src[i];
  basic_tensor<cpu, std::int64_t, EB> lens_host(typename basic_tensor<cpu, std::int64_t, EB>::extents_type{1});
  lens_host.data()[0] = valid_len;
  auto const enc_x = to<backend>(enc_host);
  auto const lens = to<backend>(lens_host);
  auto state = net.decoder.init_state(net.encoder(enc_x, lens), lens);
  seq2seq_prediction<weights_t> result;
  std::int64_t token = bos;
  for (index_t k = 0; k < num_steps; ++k) {
    basic_tensor<cpu, std::int64_t, DB, DS> dec_host(typename basic_tensor<cpu, std::int64_t, DB, DS>::extents_type{1, 1});
    dec_host.data()[0] = token;
    auto [logits, next] = net.decoder(to<backend>(dec_host), std::move(state));
    state = std::move(next);
    token = to<cpu>(argmax<typename dec_t::vocab_dim>(logits)).data()[0];
    if (save_attention_weights) result.attention_weights.push_back(net.decoder.attention_weights());
    if (token == eos) break;
    result.tokens.push_back(token);
  }
  return result;
}

}  // namespace nn

}  // namespace dimtensor
