#pragma once
/// @file
/// @brief d2l's Transformer: `nn::positional_encoding`, `nn::add_norm`,
/// `nn::transformer_encoder_block`, `nn::transformer_encoder`,
/// `nn::transformer_decoder_block` and `nn::transformer_decoder`, on the
/// chapter's multi-head attention and position-wise FFN.
///
/// Self-attention attends from a sequence to itself; the keys' copy of the
/// steps is the dim `SelfKeys` (the same positions under another name), so
/// that the attention weights [Batch, Steps, Heads, SelfKeys] keep the query
/// and key positions apart.  The decoder's self-attention in training masks
/// the future with per-query valid lengths (query i sees keys 0..i), as d2l;
/// in prediction each block caches its keys and values and a step attends
/// over every step so far.  Members are d2l's, under its names (`blks`
/// numbered as `nn.ModuleList`: `blks.0.attention.W_q.weight`, where d2l's
/// `nn.Sequential` says `blks.block0.…`).

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
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
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/nn/attention/multi_head_attention.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/encoder_decoder.hpp>
#include <dimtensor/nn/feed_forward.hpp>
#include <dimtensor/nn/layer_norm.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::positional_encoding::operator()`.
struct positional_encoding : named<"positional_encoding"> {};
/// `nn::transformer_encoder::operator()`.
struct transformer_encoder : named<"transformer_encoder"> {};
/// `nn::transformer_decoder::operator()`.
struct transformer_decoder : named<"transformer_decoder"> {};
}  // namespace call

namespace diagnostic {

/// Positional encoding added to a tensor of dims @p Dims that lack the
/// steps @p Steps or the features @p Hidden it encodes.
template <class Call, class Steps, class Hidden, class Dims>
struct positions_not_in_tensor {
  static_assert(always_false<Call, Steps, Hidden, Dims>,
                "dimtensor: positional_encoding<Steps, Hidden> adds one row of its table per step along Steps, "
                "over the features Hidden; the tensor lacks one of them (see positions_not_in_tensor<call, Steps, "
                "Hidden, dims of the tensor> above)");
};

/// Valid lengths of dims @p Dims given to a Transformer whose valid lengths
/// are one per sequence, [Batch].
template <class Call, class Batch, class Dims>
struct transformer_valid_lens_dims {
  static_assert(always_false<Call, Batch, Dims>,
                "dimtensor: the Transformer's valid lengths of the sources are one number per sequence, [Batch] "
                "(see transformer_valid_lens_dims<call, Batch, dims of the lengths> above); the decoder's causal "
                "lengths per query are made inside it");
};

}  // namespace diagnostic

namespace nn {

namespace detail {
/// The lengths tensor type of @p L, or of the tensor a `std::optional` @p L holds.
/// @brief Lengths @p lens as the self-attention's keys see them: typed
/// lengths of @p From (the sequence's steps) become lengths of @p To (the
/// same steps renamed as keys), also inside a `std::optional`; anything
/// else as it is.
template <class From, class To, class L>
auto relabel_lengths(L const& lens) {
  if constexpr (!std::is_same_v<measured_dim_t<L>, dim_of<From>>) {
    return lens;
  } else if constexpr (is_lengths_v<L>) {
    return lengths_of<dim_of<To>>(lens);
  } else {
    using out_t = decltype(lengths_of<dim_of<To>>(*lens));
    return lens ? std::optional<out_t>(lengths_of<dim_of<To>>(*lens)) : std::optional<out_t>();
  }
}

template <class L>
struct lens_type {
  using type = L;
};
template <class L>
struct lens_type<std::optional<L>> {
  using type = L;
};
}  // namespace detail

/// The keys' copy of a sequence's steps in self-attention.
DIMTENSOR_DIM(SelfKeys);
/// The rows of the positional-encoding table.
DIMTENSOR_DIM(Positions);

/// @brief How `positional_encoding` lays out the sines and cosines of its
/// table: for position i and frequency j, the angle i / 10000^(2j/d).
enum class positional_layout {
  /// d2l's: P[i, 2j] the sine, P[i, 2j+1] the cosine, computed in T step
  /// by step as d2l computes them in float32.
  interleaved,
  /// `transformers`' sinusoidal embeddings (Marian's, …): the sines in the
  /// first half of the features, the cosines in the second, computed in
  /// double and rounded to float, as `transformers` does.
  halves,
};

/// @brief Options of `positional_encoding`, by name.
struct positional_options {
  /// The table's layout.
  positional_layout layout = positional_layout::interleaved;
  /// The table's rows: the longest sequence it takes.
  index_t max_len = 1000;
};

/// @brief d2l's `PositionalEncoding(num_hiddens, dropout, max_len)`:
/// X + P[offset : offset + steps] through dropout, P[i, 2j] = sin(i /
/// 10000^(2j/d)), P[i, 2j+1] = cos(the same); or, with
/// `positional_options{.layout = positional_layout::halves}`, the
/// sinusoidal embeddings of `transformers`' models (sines, then cosines).
/// Learned positions are an `nn::embedding` (BERT's and GPT-2's).
///
/// The table `P` [Positions, Hidden] is a buffer, not a parameter (it is
/// not in the reflected members).  `offset` is the position of x's first
/// step (0 for whole sequences; the steps so far when decoding one token at
/// a time, where d2l adds row 0 every time).  A tensor without Steps or
/// Hidden is a compile error (`positions_not_in_tensor`); more steps than
/// the table has rows is a `value_error`.
template <class Steps, class Hidden, class T = float, class Backend = default_backend>
class positional_encoding : public module<positional_encoding<Steps, Hidden, T, Backend>> {
 public:
  /// The table's type, [Positions, Hidden].
  using table_type = basic_tensor<Backend, T, Positions, Hidden>;

  // d2l's member: the dropout after the addition.
  BOOST_HANA_DEFINE_STRUCT(positional_encoding, (nn::dropout, dropout));

  /// d2l's table of @p max_len rows, computed in T as d2l computes it in float32.
  positional_encoding(Hidden num_hiddens, double p, index_t max_len = 1000)
      : positional_encoding(num_hiddens, p, positional_options{.max_len = max_len}) {}
  /// The table of options @p o (layout, rows).
  positional_encoding(Hidden num_hiddens, double p, positional_options const& o)
      : dropout(p), P(make_table(num_hiddens, o)) {}

  /// The table, [Positions, Hidden].
  table_type const& table() const noexcept { return P; }

  /// @brief dropout(x + P[offset : offset + steps]), x's dims.
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x, index_t offset = 0) {
    if constexpr (is_ill_formed_v<X>) {
      return ill_formed{};
    } else if constexpr (!meta::contains_v<Steps, typename expr_t<X>::specs> ||
                         !meta::contains_v<Hidden, typename expr_t<X>::specs>) {
      (void)diagnostic::fire<
          diagnostic::positions_not_in_tensor<call::positional_encoding, Steps, Hidden, typename expr_t<X>::specs>>;
      return ill_formed{};
    } else {
      auto const xt = dimtensor::eval(x);
      index_t const steps = xt.template extent<Steps>();
      index_t const rows = P.template extent<Positions>();
      if (offset < 0 || steps > rows - offset) {
        throw value_error("positional_encoding: positions " + std::to_string(offset) + " to " +
                          std::to_string(offset + steps) + " past the table's " + std::to_string(rows) +
                          " rows (max_len)");
      }
      auto const rows_used = rename<Positions, Steps>(slice<Positions>(P, offset, offset + steps));
      return dropout(xt + rows_used);
    }
  }

 private:
  table_type P;

  static table_type make_table(Hidden num_hiddens, positional_options const& o) {
    index_t const d = num_hiddens.value;
    index_t const max_len = o.max_len;
    if (d <= 0 || max_len <= 0) {
      throw value_error("positional_encoding: num_hiddens and max_len must be positive, got " + std::to_string(d) +
                        " and " + std::to_string(max_len));
    }
    basic_tensor<cpu, T, Positions, Hidden> host(typename basic_tensor<cpu, T, Positions, Hidden>::extents_type{max_len, d});
    if (o.layout == positional_layout::halves) {
      index_t const half = (d + 1) / 2;
      for (index_t i = 0; i < max_len; ++i) {
        for (index_t j = 0; j < d; ++j) {
          double const angle =
              static_cast<double>(i) / std::pow(10000.0, 2.0 * static_cast<double>(j / 2) / static_cast<double>(d));
          index_t const col = j % 2 == 0 ? j / 2 : half + j / 2;
          host.data()[i * d + col] = static_cast<T>(static_cast<float>(j % 2 == 0 ? std::sin(angle) : std::cos(angle)));
        }
      }
      return to<Backend>(host);
    }
    for (index_t i = 0; i < max_len; ++i) {
      for (index_t j = 0; j < d; j += 2) {
        // torch.arange(max_len) / torch.pow(10000, torch.arange(0, d, 2) / d), each step in T.
        T const exponent = static_cast<T>(j) / static_cast<T>(d);
        T const scale = static_cast<T>(std::pow(static_cast<T>(10000), exponent));
        T const angle = static_cast<T>(i) / scale;
        host.data()[i * d + j] = static_cast<T>(std::sin(angle));
        if (j + 1 < d) host.data()[i * d + j + 1] = static_cast<T>(std::cos(angle));
      }
    }
    return to<Backend>(host);
  }
};

/// @brief d2l's `AddNorm(normalized_shape, dropout)`: ln(dropout(y) + x)
/// over the features Feat.  Members: `dropout`, `ln`.
template <class Feat, class T = float, class Backend = default_backend>
class add_norm : public module<add_norm<Feat, T, Backend>> {
 public:
  BOOST_HANA_DEFINE_STRUCT(add_norm, (nn::dropout, dropout), (layer_norm<Feat, T, Backend>, ln));

  /// Over @p features, dropout @p p, the layer norm's @p eps added to the
  /// variance (PyTorch's 1e-5; BERT's 1e-12).
  add_norm(Feat features, double p, double eps = 1e-5) : dropout(p), ln(features, eps) {}

  /// ln(dropout(y) + x): the residual connection then layer normalization.
  template <class X, class Y>
  auto operator()(X const& x, Y const& y) {
    return ln(dropout(y) + x);
  }
};

/// @brief A Transformer block's options, by name (`{.act =
/// nn::activation::gelu, .attention_bias = true, .eps = 1e-12}` is BERT's
/// layer); the defaults are d2l's block.
struct transformer_block_options {
  /// The FFN's activation.
  activation act = activation::relu;
  /// Whether the attention's four projections have a bias (d2l's `use_bias`).
  bool attention_bias = false;
  /// Whether the FFN's two layers have a bias.
  bool ffn_bias = true;
  /// The layer norms' eps.
  double eps = 1e-5;
  /// The dropout on each sublayer's output, before the residual connection.
  double dropout = 0;
  /// The dropout on the attention weights.
  double attention_dropout = 0;
  /// Pre-LN (GPT-2's block: x + dropout(sublayer(ln(x))), each add & norm's
  /// layer norm applied to the sublayer's input) instead of d2l's post-LN
  /// (ln(x + dropout(sublayer(x)))).
  bool pre_norm = false;
};

/// @brief d2l's `EncoderBlock`: multi-head self-attention and add & norm,
/// then the position-wise FFN and add & norm.  Members: `attention`,
/// `addnorm1`, `ffn`, `addnorm2`.  With `transformer_block_options`, also
/// BERT's layer (biases, GELU, eps) and, pre-LN with causal masking,
/// GPT-2's.
template <class Steps, class Hidden, class FFNHidden, class T = float, class Backend = default_backend>
class transformer_encoder_block : public module<transformer_encoder_block<Steps, Hidden, FFNHidden, T, Backend>> {
 public:
  /// The self-attention: queries over Steps, keys over SelfKeys.
  using attention_type = multi_head_attention<Steps, SelfKeys, Hidden, Hidden, Hidden, Hidden, T, Backend>;

  BOOST_HANA_DEFINE_STRUCT(transformer_encoder_block, (attention_type, attention),
                           (add_norm<Hidden, T, Backend>, addnorm1),
                           (feed_forward<Hidden, FFNHidden, Hidden, T, Backend>, ffn),
                           (add_norm<Hidden, T, Backend>, addnorm2));

  /// d2l's `EncoderBlock(h, h, h, h, [h], h, ffn_num_hiddens, num_heads,
  /// dropout, use_bias)`, the layers drawn from @p gen in d2l's order.
  transformer_encoder_block(Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads, double p, bool use_bias,
                            generator& gen)
      : attention(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, p, use_bias, gen),
        addnorm1(num_hiddens, p),
        ffn(num_hiddens, ffn_num_hiddens, num_hiddens, gen),
        addnorm2(num_hiddens, p) {}
  /// With @p options (activation, biases, eps, dropouts) and @p num_heads
  /// heads, the layers drawn from @p gen in the same order.
  transformer_encoder_block(Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                            transformer_block_options const& options, generator& gen)
      : attention(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, options.attention_dropout,
                  options.attention_bias, gen),
        addnorm1(num_hiddens, options.dropout, options.eps),
        ffn(num_hiddens, ffn_num_hiddens, num_hiddens, {.act = options.act, .bias = options.ffn_bias}, gen),
        addnorm2(num_hiddens, options.dropout, options.eps),
        pre_norm_(options.pre_norm) {}
  /// As above, drawing from `default_generator()`.
  transformer_encoder_block(Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                            transformer_block_options const& options)
      : transformer_encoder_block(num_hiddens, ffn_num_hiddens, num_heads, options, default_generator()) {}

  /// @brief The block on @p x ([Batch, Steps, Hidden]) with the valid
  /// lengths @p valid_lens of its sequences ([Batch], or none).
  template <class X, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(X const& x, L const&... valid_lens) {
    auto const xt = dimtensor::eval(x);
    auto const in = attention_input(xt);
    auto const keys = rename<Steps, SelfKeys>(in);
    return after_attention(xt, attention(in, keys, keys, detail::relabel_lengths<Steps, SelfKeys>(valid_lens)...));
  }

  /// Whether the block is pre-LN.
  bool pre_norm() const noexcept { return pre_norm_; }

  /// @brief The block on the next steps @p x ([Batch, Steps, Hidden]) of
  /// sequences whose earlier steps' keys and values (split into heads,
  /// [Batch, SelfKeys, Heads, HeadFeat]) are in @p keys and @p values: the
  /// new steps' are appended to them, and each new step attends to the
  /// steps up to its own (a decoder-only stack decoding with a cache):
  /// @p causal is `causal<Steps>(masking_of<SelfKeys>())`, whose last query
  /// reads the last key (or lengths per query, [Batch, Steps], the steps so
  /// far plus its own position plus one).  The same numbers as the whole
  /// sequence through operator() with causal masking.
  template <class X, class KV, class L>
  auto step(X const& x, std::optional<KV>& keys, std::optional<KV>& values, L const& causal) {
    auto const xt = dimtensor::eval(x);
    auto const in = attention_input(xt);
    attention.append_key_value_heads(rename<Steps, SelfKeys>(in), keys, values);
    return after_attention(xt, attention.attend_heads(attention.query_heads(in), *keys, *values, causal));
  }

 private:
  bool pre_norm_ = false;

  // What the attention reads of the evaluated input @p x: ln(x) pre-LN, x post-LN.
  template <class X>
  X attention_input(X const& x) {
    return pre_norm_ ? X(addnorm1.ln(x)) : x;
  }

  // The rest of the block after the attention's output @p a: the residual
  // connections, the norms and the FFN, in the block's order.
  template <class X, class A>
  auto after_attention(X const& x, A const& a) {
    using y_t = std::remove_cvref_t<decltype(addnorm1(x, a))>;
    using out_t = std::remove_cvref_t<decltype(addnorm2(std::declval<y_t const&>(), ffn(std::declval<y_t const&>())))>;
    if (pre_norm_) {
      auto const h = dimtensor::eval(x + addnorm1.dropout(a));
      return out_t(h + addnorm2.dropout(ffn(addnorm2.ln(h))));
    }
    auto const y = addnorm1(x, a);
    return out_t(addnorm2(y, ffn(y)));
  }
};

/// @brief d2l's `TransformerEncoder(vocab_size, …, num_hiddens, …,
/// ffn_num_hiddens, num_heads, num_layers, dropout, use_bias)`: the tokens'
/// embedding scaled by √num_hiddens, positional encoding, then the blocks.
/// Members: `embedding`, `pos_encoding`, `blks`.
template <class Batch, class Steps, class Vocab, class Hidden, class FFNHidden, class T = float,
          class Backend = default_backend>
class transformer_encoder
    : public module<transformer_encoder<Batch, Steps, Vocab, Hidden, FFNHidden, T, Backend>> {
 public:
  /// The batch dim.
  using batch_dim = Batch;
  /// The source steps.
  using steps_dim = Steps;
  /// The element type.
  using value_type = T;
  /// The backend.
  using backend = Backend;
  /// One block.
  using block_type = transformer_encoder_block<Steps, Hidden, FFNHidden, T, Backend>;
  /// A block's attention weights, [Batch, Steps, Heads, SelfKeys].
  using weights_type = basic_tensor<Backend, T, Batch, Steps, Heads, SelfKeys>;

  BOOST_HANA_DEFINE_STRUCT(transformer_encoder, (nn::embedding<Vocab, Hidden, T, Backend>, embedding),
                           (positional_encoding<Steps, Hidden, T, Backend>, pos_encoding),
                           (std::vector<block_type>, blks));

  /// The layers drawn from @p gen in d2l's order.
  transformer_encoder(Vocab vocab_size, Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                      index_t num_layers, double p, bool use_bias, generator& gen)
      : embedding(vocab_size, num_hiddens, gen), pos_encoding(num_hiddens, p), scale_(scale_of(num_hiddens)) {
    if (num_layers <= 0) throw value_error("transformer_encoder: num_layers must be positive");
    for (index_t i = 0; i < num_layers; ++i) blks.emplace_back(num_hiddens, ffn_num_hiddens, num_heads, p, use_bias, gen);
  }
  /// As above, drawing from `default_generator()`.
  transformer_encoder(Vocab vocab_size, Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                      index_t num_layers, double p = 0, bool use_bias = false)
      : transformer_encoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, p, use_bias,
                            default_generator()) {}

  /// @brief The encoded tokens [Batch, Steps, Hidden] of @p x ([Batch,
  /// Steps] indices), the self-attention masked by @p valid_lens ([Batch],
  /// a `std::optional` of it, or none).
  template <class X, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(X const& x, L const&... valid_lens) {
    if constexpr (rejects(first_diagnosis(detail::tokens_diagnosis<call::transformer_encoder, Batch, Steps, X>(),
                                          lens_diagnosis<L>()...))) {
      return ill_formed{};
    } else {
      return checked<call::transformer_encoder>(
          [&](auto const& x, auto const&... valid_lens) {
            using hidden_t = basic_tensor<Backend, T, Batch, Steps, Hidden>;
            hidden_t h = pos_encoding(embedding(x) * scale_);
            for (auto& blk : blks) h = hidden_t(blk(h, valid_lens...));
            return h;
          },
          x, valid_lens...);
    }
  }

  /// This thread's last call's self-attention weights of block @p i,
  /// [Batch, Steps, Heads, SelfKeys] (d2l's `attention_weights[i]`, heads a
  /// dim of their own).
  weights_type attention_weights(std::size_t i) const {
    return blks.at(i).attention.attention.template attention_weights<Batch, Steps, Heads, SelfKeys>();
  }

 private:
  T scale_;

  static T scale_of(Hidden h) { return static_cast<T>(std::sqrt(static_cast<double>(h.value))); }

  // What is wrong with valid lengths of type L: [Batch] lengths of the
  // steps (typed ones of Steps), or none; a diagnostic class, or void.
  template <class L>
  static constexpr auto lens_diagnosis() {
    using lens_t = std::remove_cvref_t<L>;
    if constexpr (std::is_same_v<lens_t, std::nullopt_t> || is_ill_formed_v<lens_t>) {
      return std::type_identity<void>{};
    } else {
      using specs = typename expr_t<typename detail::lens_type<lens_t>::type>::specs;
      if constexpr (meta::rank_v<specs> != 1 || !meta::contains_v<Batch, specs>) {
        return std::type_identity<diagnostic::transformer_valid_lens_dims<call::transformer_encoder, Batch, specs>>{};
      } else {
        return std::type_identity<lens_measure_diagnosis_t<call::transformer_encoder, lens_t, Steps>>{};
      }
    }
  }
};

/// @brief What the Transformer decoder carries between calls: the encoder's
/// outputs, the sources' valid lengths, each block's cached keys and values
/// (the decoder's steps so far, as SelfKeys), and how many steps came before.
template <class Batch, class EncSteps, class Hidden, class T = float, class Backend = default_backend>
struct transformer_state {
  /// The encoder's outputs, [Batch, EncSteps, Hidden].
  basic_tensor<Backend, T, Batch, EncSteps, Hidden> enc_outputs;
  /// The sources' valid lengths, [Batch].
  std::optional<basic_tensor<Backend, std::int64_t, Batch>> enc_valid_lens;
  /// Per block, the steps so far, [Batch, SelfKeys, Hidden] (none before the first call).
  std::vector<std::optional<basic_tensor<Backend, T, Batch, SelfKeys, Hidden>>> key_values;
  /// The number of decoder steps before the next call's first.
  index_t steps_so_far = 0;
};

/// @brief d2l's `DecoderBlock`: masked multi-head self-attention over the
/// steps so far, add & norm, attention over the encoder's outputs, add &
/// norm, FFN, add & norm.  Members: `attention1`, `addnorm1`, `attention2`,
/// `addnorm2`, `ffn`, `addnorm3`.
template <class Batch, class DecSteps, class EncSteps, class Hidden, class FFNHidden, class T = float,
          class Backend = default_backend>
class transformer_decoder_block
    : public module<transformer_decoder_block<Batch, DecSteps, EncSteps, Hidden, FFNHidden, T, Backend>> {
 public:
  /// The self-attention: queries over DecSteps, keys over SelfKeys.
  using self_attention_type = multi_head_attention<DecSteps, SelfKeys, Hidden, Hidden, Hidden, Hidden, T, Backend>;
  /// The attention over the encoder's outputs.
  using cross_attention_type = multi_head_attention<DecSteps, EncSteps, Hidden, Hidden, Hidden, Hidden, T, Backend>;
  /// The state.
  using state_type = transformer_state<Batch, EncSteps, Hidden, T, Backend>;

  BOOST_HANA_DEFINE_STRUCT(transformer_decoder_block, (self_attention_type, attention1),
                           (add_norm<Hidden, T, Backend>, addnorm1), (cross_attention_type, attention2),
                           (add_norm<Hidden, T, Backend>, addnorm2),
                           (feed_forward<Hidden, FFNHidden, Hidden, T, Backend>, ffn),
                           (add_norm<Hidden, T, Backend>, addnorm3));

  /// d2l's `DecoderBlock(h, h, h, h, [h], h, ffn_num_hiddens, num_heads,
  /// dropout, i)`, the layers drawn from @p gen in d2l's order; block @p i.
  transformer_decoder_block(Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads, double p, std::size_t i,
                            generator& gen)
      : attention1(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, p, false, gen),
        addnorm1(num_hiddens, p),
        attention2(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, p, false, gen),
        addnorm2(num_hiddens, p),
        ffn(num_hiddens, ffn_num_hiddens, num_hiddens, gen),
        addnorm3(num_hiddens, p),
        i_(i) {}

  /// @brief The block on @p x ([Batch, DecSteps, Hidden]); appends x to
  /// this block's cached keys and values in @p state.  In training, query
  /// t sees keys 0..t (valid lengths 1, 2, … per query, as d2l); in eval
  /// mode every cached step.
  template <class X>
  basic_tensor<Backend, T, Batch, DecSteps, Hidden> operator()(X const& x, state_type& state) {
    using hidden_t = basic_tensor<Backend, T, Batch, DecSteps, Hidden>;
    hidden_t const xt = x;
    auto const mine = rename<DecSteps, SelfKeys>(xt);
    auto& cached = state.key_values.at(i_);
    basic_tensor<Backend, T, Batch, SelfKeys, Hidden> const key_values =
        cached ? concat<SelfKeys>(*cached, mine) : basic_tensor<Backend, T, Batch, SelfKeys, Hidden>(mine);
    cached = key_values;
    hidden_t const x2 = [&] {
      if (this->is_training()) {
        index_t const batch = xt.template extent<Batch>();
        index_t const steps = xt.template extent<DecSteps>();
        // dec_valid_lens = torch.arange(1, num_steps + 1).repeat(batch_size, 1): [Batch, DecSteps]
        basic_tensor<cpu, std::int64_t, Batch, DecSteps> lens(
            typename basic_tensor<cpu, std::int64_t, Batch, DecSteps>::extents_type{batch, steps});
        for (index_t b = 0; b < batch; ++b) {
          for (index_t t = 0; t < steps; ++t) lens.data()[b * steps + t] = t + 1;
        }
        return hidden_t(attention1(xt, key_values, key_values, to<Backend>(lens)));
      }
      return hidden_t(attention1(xt, key_values, key_values));
    }();
    hidden_t const y = addnorm1(xt, x2);
    hidden_t const y2 = attention2(y, state.enc_outputs, state.enc_outputs, state.enc_valid_lens);
    hidden_t const z = addnorm2(y, y2);
    return addnorm3(z, ffn(z));
  }

 private:
  std::size_t i_;
};

/// @brief The Transformer decoder's attention weights after a call, per
/// block: self-attention [Batch, DecSteps, Heads, SelfKeys] and attention
/// over the encoder [Batch, DecSteps, Heads, EncSteps] (d2l's
/// `_attention_weights[0]` and `[1]`).
template <class Self, class Cross>
struct transformer_attention_weights {
  /// Self-attention per block.
  std::vector<Self> self;
  /// Attention over the encoder's outputs per block.
  std::vector<Cross> cross;
};

/// @brief d2l's `TransformerDecoder(vocab_size, …, num_hiddens, …,
/// ffn_num_hiddens, num_heads, num_layers, dropout)`: embedding scaled by
/// √num_hiddens, positional encoding from the steps so far, the blocks, a
/// dense layer to the vocabulary.  Members: `embedding`, `pos_encoding`,
/// `blks`, `dense`.
template <class Batch, class DecSteps, class EncSteps, class Vocab, class Hidden, class FFNHidden, class T = float,
          class Backend = default_backend>
class transformer_decoder
    : public module<transformer_decoder<Batch, DecSteps, EncSteps, Vocab, Hidden, FFNHidden, T, Backend>> {
  static_assert(!std::is_same_v<DecSteps, EncSteps>,
                "dimtensor: transformer_decoder needs the target steps and the source steps to be different dims "
                "(DecSteps and EncSteps)");

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
  /// One block.
  using block_type = transformer_decoder_block<Batch, DecSteps, EncSteps, Hidden, FFNHidden, T, Backend>;
  /// The state between calls.
  using state_type = transformer_state<Batch, EncSteps, Hidden, T, Backend>;
  /// The attention weights of a call.
  using weights_type = transformer_attention_weights<basic_tensor<Backend, T, Batch, DecSteps, Heads, SelfKeys>,
                                                     basic_tensor<Backend, T, Batch, DecSteps, Heads, EncSteps>>;

  BOOST_HANA_DEFINE_STRUCT(transformer_decoder, (nn::embedding<Vocab, Hidden, T, Backend>, embedding),
                           (positional_encoding<DecSteps, Hidden, T, Backend>, pos_encoding),
                           (std::vector<block_type>, blks), (linear<Hidden, Vocab, T, Backend>, dense));

  /// The layers drawn from @p gen in d2l's order.
  transformer_decoder(Vocab vocab_size, Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                      index_t num_layers, double p, generator& gen)
      : embedding(vocab_size, num_hiddens, gen),
        pos_encoding(num_hiddens, p),
        blks(make_blocks(num_hiddens, ffn_num_hiddens, num_heads, num_layers, p, gen)),
        dense(num_hiddens, vocab_size, true, gen),
        scale_(static_cast<T>(std::sqrt(static_cast<double>(num_hiddens.value)))) {}
  /// As above, drawing from `default_generator()`.
  transformer_decoder(Vocab vocab_size, Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                      index_t num_layers, double p = 0)
      : transformer_decoder(vocab_size, num_hiddens, ffn_num_hiddens, num_heads, num_layers, p, default_generator()) {}

  /// @brief d2l's `init_state(enc_outputs, enc_valid_lens)`: no cached
  /// steps yet.
  template <class EncOutputs, class... L>
    requires(sizeof...(L) <= 1)
  state_type init_state(EncOutputs const& enc_outputs, L const&... enc_valid_lens) const {
    state_type state{enc_outputs, std::nullopt, {}, 0};
    state.key_values.resize(blks.size());
    (detail::store_valid_lens<call::transformer_decoder, Batch, EncSteps, diagnostic::transformer_valid_lens_dims>(
         state.enc_valid_lens, enc_valid_lens),
     ...);
    return state;
  }

  /// @brief The logits [Batch, DecSteps, Vocab] of the target tokens @p x
  /// ([Batch, DecSteps]) after the steps cached in @p state, and the state
  /// with x's steps appended.
  template <class X>
  auto operator()(X const& x, state_type state) {
    if constexpr (rejects(detail::tokens_diagnosis<call::transformer_decoder, Batch, DecSteps, X>())) {
      return ill_formed{};
    } else {
      return checked<call::transformer_decoder>([&](auto const& x) { return run(x, std::move(state)); }, x);
    }
  }

  /// The last call's attention weights per block (self and over the encoder).
  weights_type const& attention_weights() const noexcept { return weights_; }

 private:
  T scale_;
  weights_type weights_;

  template <class X>
  auto run(X const& x, state_type state) {
    using hidden_t = basic_tensor<Backend, T, Batch, DecSteps, Hidden>;
    hidden_t h = pos_encoding(embedding(x) * scale_, state.steps_so_far);
    weights_type weights;
    for (auto& blk : blks) {
      h = blk(h, state);
      weights.self.push_back(
          blk.attention1.attention.template attention_weights<Batch, DecSteps, Heads, SelfKeys>());
      weights.cross.push_back(
          blk.attention2.attention.template attention_weights<Batch, DecSteps, Heads, EncSteps>());
    }
    state.steps_so_far += h.template extent<DecSteps>();
    weights_ = std::move(weights);
    auto logits = dense(h);
    return std::pair<decltype(logits), state_type>(std::move(logits), std::move(state));
  }

  static std::vector<block_type> make_blocks(Hidden num_hiddens, FFNHidden ffn_num_hiddens, index_t num_heads,
                                             index_t num_layers, double p, generator& gen) {
    if (num_layers <= 0) throw value_error("transformer_decoder: num_layers must be positive");
    std::vector<block_type> out;
    out.reserve(static_cast<std::size_t>(num_layers));
    for (index_t i = 0; i < num_layers; ++i) {
      out.emplace_back(num_hiddens, ffn_num_hiddens, num_heads, p, static_cast<std::size_t>(i), gen);
    }
    return out;
  }
};

}  // namespace nn

}  // namespace dimtensor
