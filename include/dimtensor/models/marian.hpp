#pragma once
/// @file
/// @brief Marian (`transformers`' `MarianMTModel`, the opus-mt translation
/// models): `models::marian_config`, `models::marian` (the shared
/// embedding scaled by √d_model, Marian's sinusoidal positions, the
/// library's encoder blocks, decoder layers of the library's parts with a
/// cache of keys and values, logits through the shared embedding plus
/// `final_logits_bias`), `models::marian_schema()` and greedy translation,
/// `models::translate_greedy` and `models::translate_beam`.
///
/// @code
/// auto net = dt::models::marian<>::from_pretrained("opus-mt-tiny/");
/// auto const out = net(src, src_lens, tgt);        // out.logits [Batch, TargetTokens, Vocab]
/// auto const ids = dt::models::translate_greedy(net, src, src_lens, 20);
/// @endcode
///
/// Every block is post-LN, as Marian's.  The encoder's are
/// `nn::transformer_encoder_block` with `{.act = activation_function,
/// .attention_bias = true}`; a decoder layer (`marian_decoder_layer`) is
/// the same block with a second attention over the encoder's states
/// between them (`cross_attention`, `cross_addnorm`), its members named as
/// the encoder block's so that one schema renames both.  The positions are
/// a table, not parameters (Marian's: sines of every other frequency in
/// the first half of the features, cosines in the second), and
/// `final_logits_bias` is a buffer: loaded by key, never given a gradient.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/io/checkpoint.hpp>
#include <dimtensor/io/config.hpp>
#include <dimtensor/models/beam_search.hpp>
#include <dimtensor/models/bert.hpp>
#include <dimtensor/nn/attention/multi_head_attention.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/feed_forward.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/nn/transformer.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/index_select.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/ops/select.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::models {

/// The target sequence's tokens (the decoder's steps).
DIMTENSOR_DIM(TargetTokens);
/// The one row of `final_logits_bias` ([1, Vocab] as `transformers` stores it).
DIMTENSOR_DIM(BiasRow);

/// @brief `transformers`' `MarianConfig`: the fields `models::marian`
/// reads, with `MarianConfig`'s defaults.
struct marian_config {
  /// `vocab_size`.
  index_t vocab_size = 58101;
  /// `d_model`.
  index_t d_model = 1024;
  /// `encoder_layers`.
  index_t encoder_layers = 12;
  /// `decoder_layers`.
  index_t decoder_layers = 12;
  /// `encoder_attention_heads`.
  index_t encoder_attention_heads = 16;
  /// `decoder_attention_heads`.
  index_t decoder_attention_heads = 16;
  /// `encoder_ffn_dim`.
  index_t encoder_ffn_dim = 4096;
  /// `decoder_ffn_dim`.
  index_t decoder_ffn_dim = 4096;
  /// `activation_function`.
  nn::activation activation_function = nn::activation::gelu;
  /// `max_position_embeddings`.
  index_t max_position_embeddings = 1024;
  /// `scale_embedding`: the embeddings multiplied by √d_model.
  bool scale_embedding = false;
  /// `dropout`.
  double dropout = 0.1;
  /// `attention_dropout`.
  double attention_dropout = 0;
  /// `pad_token_id`.
  index_t pad_token_id = 58100;
  /// `eos_token_id`.
  index_t eos_token_id = 0;
  /// `decoder_start_token_id`.
  index_t decoder_start_token_id = 58100;

  /// @brief The config of a checkpoint folder (or a `config.json`), absent
  /// fields taking `MarianConfig`'s defaults.  `io_error` for a field of
  /// the wrong kind; `value_error` for what `models::marian` cannot build
  /// (separate encoder and decoder vocabularies, heads that do not divide
  /// d_model, an unknown activation, an `activation_dropout`).
  static marian_config from_file(std::filesystem::path const& source) {
    nn::model_config const f(source);
    marian_config c;
    c.vocab_size = f.extent_or("vocab_size", c.vocab_size);
    c.d_model = f.extent_or("d_model", c.d_model);
    c.encoder_layers = f.extent_or("encoder_layers", c.encoder_layers);
    c.decoder_layers = f.extent_or("decoder_layers", c.decoder_layers);
    c.encoder_attention_heads = f.extent_or("encoder_attention_heads", c.encoder_attention_heads);
    c.decoder_attention_heads = f.extent_or("decoder_attention_heads", c.decoder_attention_heads);
    c.encoder_ffn_dim = f.extent_or("encoder_ffn_dim", c.encoder_ffn_dim);
    c.decoder_ffn_dim = f.extent_or("decoder_ffn_dim", c.decoder_ffn_dim);
    c.activation_function = activation_named(f.string_or("activation_function", "gelu"));
    c.max_position_embeddings = f.extent_or("max_position_embeddings", c.max_position_embeddings);
    c.scale_embedding = f.boolean_or("scale_embedding", c.scale_embedding);
    c.dropout = f.number_or("dropout", c.dropout);
    c.attention_dropout = f.number_or("attention_dropout", c.attention_dropout);
    c.pad_token_id = f.integer_or("pad_token_id", c.pad_token_id);
    c.eos_token_id = f.integer_or("eos_token_id", c.eos_token_id);
    c.decoder_start_token_id = f.integer_or("decoder_start_token_id", c.decoder_start_token_id);
    std::string const where = "marian_config: " + f.path().string() + ": ";
    if (!f.boolean_or("share_encoder_decoder_embeddings", true) ||
        f.extent_or("decoder_vocab_size", c.vocab_size) != c.vocab_size) {
      throw value_error(where + "separate encoder and decoder vocabularies: only the shared embedding is built");
    }
    if (f.number_or("activation_dropout", 0) != 0) {
      throw value_error(where + "activation_dropout: the FFN has no dropout between its layers");
    }
    c.check(where);
    return c;
  }

  /// `value_error` (prefixed with @p where) unless the heads divide
  /// d_model, the special tokens are in the vocabulary and the dropouts
  /// are probabilities.
  void check(std::string const& where = "marian_config: ") const {
    for (index_t heads : {encoder_attention_heads, decoder_attention_heads}) {
      if (heads <= 0 || d_model % heads != 0) {
        throw value_error(where + "d_model " + std::to_string(d_model) + " is not a multiple of the heads " +
                          std::to_string(heads));
      }
    }
    for (index_t id : {pad_token_id, eos_token_id, decoder_start_token_id}) {
      if (id < 0 || id >= vocab_size) {
        throw value_error(where + "a special token id " + std::to_string(id) + " outside the vocabulary of " +
                          std::to_string(vocab_size));
      }
    }
    for (double p : {dropout, attention_dropout}) {
      if (!(p >= 0 && p < 1)) throw value_error(where + "a dropout probability outside [0, 1): " + std::to_string(p));
    }
  }
};

/// @brief How a `transformers` Marian checkpoint's keys become
/// `models::marian`'s: the prefix "model.", the layers under the library's
/// block names (encoder and decoder alike), the tied `lm_head.weight` and
/// the positions' tables (never trained) ignored.
inline nn::checkpoint_schema marian_schema() {
  return {
      .prefixes = {"model."},
      .renames = {{"encoder.layers.", "encoder.blks."},
                  {"decoder.layers.", "decoder.blks."},
                  {".self_attn_layer_norm.", ".addnorm1.ln."},
                  {".encoder_attn_layer_norm.", ".cross_addnorm.ln."},
                  {".final_layer_norm.", ".addnorm2.ln."},
                  {".self_attn.", ".attention."},
                  {".encoder_attn.", ".cross_attention."},
                  {".q_proj.", ".W_q."},
                  {".k_proj.", ".W_k."},
                  {".v_proj.", ".W_v."},
                  {".out_proj.", ".W_o."},
                  {".fc1.", ".ffn.dense1."},
                  {".fc2.", ".ffn.dense2."}},
      .ignore = {"lm_head.weight", "*embed_positions.weight", "*embed_tokens.weight"},
  };
}

/// @brief A Marian decoder layer: masked self-attention and add & norm,
/// attention over the encoder's states and add & norm, the FFN and add &
/// norm (post-LN).  Members `attention`, `addnorm1`, `cross_attention`,
/// `cross_addnorm`, `ffn`, `addnorm2`.
template <class TgtDim, class SrcDim, class T = float, class Backend = default_backend>
class marian_decoder_layer : public nn::module<marian_decoder_layer<TgtDim, SrcDim, T, Backend>> {
 public:
  /// The self-attention: queries over the target, keys over its own steps.
  using self_type = nn::multi_head_attention<TgtDim, nn::SelfKeys, Hidden, Hidden, Hidden, Hidden, T, Backend>;
  /// The attention over the encoder's states.
  using cross_type = nn::multi_head_attention<TgtDim, SrcDim, Hidden, Hidden, Hidden, Hidden, T, Backend>;

  BOOST_HANA_DEFINE_STRUCT(marian_decoder_layer, (self_type, attention), (nn::add_norm<Hidden, T, Backend>, addnorm1),
                           (cross_type, cross_attention), (nn::add_norm<Hidden, T, Backend>, cross_addnorm),
                           (nn::feed_forward<Hidden, Intermediate, Hidden, T, Backend>, ffn),
                           (nn::add_norm<Hidden, T, Backend>, addnorm2));

  /// The layer of @p c, drawn from @p gen.
  marian_decoder_layer(marian_config const& c, generator& gen)
      : attention(Hidden(c.d_model), Hidden(c.d_model), Hidden(c.d_model), Hidden(c.d_model), c.decoder_attention_heads,
                  c.attention_dropout, true, gen),
        addnorm1(Hidden(c.d_model), c.dropout),
        cross_attention(Hidden(c.d_model), Hidden(c.d_model), Hidden(c.d_model), Hidden(c.d_model),
                        c.decoder_attention_heads, c.attention_dropout, true, gen),
        cross_addnorm(Hidden(c.d_model), c.dropout),
        ffn(Hidden(c.d_model), Intermediate(c.decoder_ffn_dim), Hidden(c.d_model), {.act = c.activation_function}, gen),
        addnorm2(Hidden(c.d_model), c.dropout) {}

  /// @brief The layer on the next target steps @p x ([Batch, Tgt, Hidden]):
  /// their keys and values appended to @p keys and @p values, each step
  /// attending to the steps up to its own (@p causal: causal masking),
  /// then to the encoder's states whose key and value heads are
  /// @p memory_keys and @p memory_values within @p src_lens ([Batch]).
  template <class X, class KV, class MKV, class L, class S>
  auto step(X const& x, std::optional<KV>& keys, std::optional<KV>& values, MKV const& memory_keys,
            MKV const& memory_values, L const& causal, S const& src_lens) {
    attention.append_key_value_heads(rename<TgtDim, nn::SelfKeys>(x), keys, values);
    auto const y = addnorm1(x, attention.attend_heads(attention.query_heads(x), *keys, *values, causal));
    auto const z = cross_addnorm(y, cross_attention.attend_heads(cross_attention.query_heads(y), memory_keys,
                                                                 memory_values, src_lens));
    return addnorm2(z, ffn(z));
  }
};

/// The encoder's blocks under `encoder.layers` (renamed `encoder.blks`).
template <class SrcDim, class T, class Backend>
class marian_encoder : public nn::module<marian_encoder<SrcDim, T, Backend>> {
 public:
  /// One block.
  using block_type = nn::transformer_encoder_block<SrcDim, Hidden, Intermediate, T, Backend>;
  BOOST_HANA_DEFINE_STRUCT(marian_encoder, (std::vector<block_type>, blks));
  /// @p c's blocks, drawn from @p gen.
  marian_encoder(marian_config const& c, generator& gen) {
    nn::transformer_block_options const options{.act = c.activation_function,
                                                .attention_bias = true,
                                                .dropout = c.dropout,
                                                .attention_dropout = c.attention_dropout};
    for (index_t i = 0; i < c.encoder_layers; ++i) {
      blks.emplace_back(Hidden(c.d_model), Intermediate(c.encoder_ffn_dim), c.encoder_attention_heads, options, gen);
    }
  }
};

/// The decoder's layers under `decoder.layers` (renamed `decoder.blks`).
template <class TgtDim, class SrcDim, class T, class Backend>
class marian_decoder : public nn::module<marian_decoder<TgtDim, SrcDim, T, Backend>> {
 public:
  /// One layer.
  using layer_type = marian_decoder_layer<TgtDim, SrcDim, T, Backend>;
  BOOST_HANA_DEFINE_STRUCT(marian_decoder, (std::vector<layer_type>, blks));
  /// @p c's layers, drawn from @p gen.
  marian_decoder(marian_config const& c, generator& gen) {
    for (index_t i = 0; i < c.decoder_layers; ++i) blks.emplace_back(c, gen);
  }
};

/// @brief `MarianMTModel`'s outputs.
template <class BatchDim, class SrcDim, class TgtDim, class T, class Backend>
struct marian_output {
  /// The encoder's states, [Batch, Src, Hidden].
  basic_tensor<Backend, T, BatchDim, SrcDim, Hidden> encoder_last_hidden_state;
  /// The next token's logits at every target position, [Batch, Tgt, Vocab].
  basic_tensor<Backend, T, BatchDim, TgtDim, Vocab> logits;
};

/// @brief `transformers`' `MarianMTModel`: `shared`, `encoder`, `decoder`,
/// the buffer `final_logits_bias`.
template <class BatchDim = Batch, class SrcDim = Tokens, class TgtDim = TargetTokens, class T = float,
          class Backend = default_backend>
class marian : public nn::module<marian<BatchDim, SrcDim, TgtDim, T, Backend>> {
 public:
  /// The source ids, [Batch, Src].
  using source_type = basic_tensor<Backend, std::int64_t, BatchDim, SrcDim>;
  /// The target ids, [Batch, Tgt].
  using target_type = basic_tensor<Backend, std::int64_t, BatchDim, TgtDim>;
  /// The target's dim.
  using target_dim = TgtDim;
  /// Each source's length, [Batch].
  using lengths_type = basic_tensor<Backend, std::int64_t, BatchDim>;
  /// The encoder's states.
  using memory_type = basic_tensor<Backend, T, BatchDim, SrcDim, Hidden>;
  /// What a call returns.
  using output_type = marian_output<BatchDim, SrcDim, TgtDim, T, Backend>;
  /// A decoder layer's own keys or values, in heads.
  using self_heads = basic_tensor<Backend, T, BatchDim, nn::SelfKeys, nn::Heads, nn::HeadFeat>;
  /// A decoder layer's keys or values of the encoder's states, in heads.
  using memory_heads = basic_tensor<Backend, T, BatchDim, SrcDim, nn::Heads, nn::HeadFeat>;
  /// @brief What decoding keeps between calls: the encoder's states'
  /// keys and values per layer (made on the first call) and each layer's
  /// own so far.
  struct cache {
    /// Each layer's keys of its own steps.
    std::vector<std::optional<self_heads>> keys;
    /// Each layer's values of its own steps.
    std::vector<std::optional<self_heads>> values;
    /// Each layer's keys of the encoder's states.
    std::vector<memory_heads> memory_keys;
    /// Each layer's values of the encoder's states.
    std::vector<memory_heads> memory_values;
    /// The steps so far: the next call's first position.
    index_t steps = 0;
  };

  BOOST_HANA_DEFINE_STRUCT(marian, (nn::embedding<Vocab, Hidden, T, Backend>, shared),
                           (marian_encoder<SrcDim, T, Backend>, encoder),
                           (marian_decoder<TgtDim, SrcDim, T, Backend>, decoder),
                           (basic_tensor<Backend, T, BiasRow, Vocab>, final_logits_bias),
                           (nn::positional_encoding<SrcDim, Hidden, T, Backend>, encoder_positions),
                           (nn::positional_encoding<TgtDim, Hidden, T, Backend>, decoder_positions));

  /// A model of config @p c, its parameters drawn from @p gen.
  explicit marian(marian_config const& c, generator& gen = default_generator())
      : shared(Vocab(c.vocab_size), Hidden(c.d_model), {.padding_idx = (c.check(), c.pad_token_id)}, gen),
        encoder(c, gen),
        decoder(c, gen),
        final_logits_bias(dimtensor::to<Backend>(zeros<T>(BiasRow(1), Vocab(c.vocab_size)))),
        encoder_positions(Hidden(c.d_model), c.dropout, positions_of(c)),
        decoder_positions(Hidden(c.d_model), c.dropout, positions_of(c)),
        config_(c),
        scale_(c.scale_embedding ? static_cast<T>(std::sqrt(static_cast<double>(c.d_model))) : T(1)) {}

  /// @brief The model of the checkpoint folder @p folder (its
  /// `config.json` and weights, loaded through `marian_schema()`), in
  /// evaluation mode.
  static marian from_pretrained(std::filesystem::path const& folder) {
    marian net(marian_config::from_file(folder));
    nn::load_checkpoint(net, folder, marian_schema());
    net.eval();
    return net;
  }

  /// The configuration.
  marian_config const& config() const noexcept { return config_; }

  /// The encoder's states of @p src, each source attending within its first @p lens tokens.
  memory_type encode(source_type const& src, lengths_type const& lens) {
    memory_type x = encoder_positions(shared(src) * scale_);
    for (auto& blk : encoder.blks) x = memory_type(blk(x, lens));
    return x;
  }

  /// @brief The logits of the next target steps @p tgt ([Batch, Tgt], no
  /// padding) continuing the decoding in @p c over the encoder's states
  /// @p memory of sources of lengths @p lens.
  basic_tensor<Backend, T, BatchDim, TgtDim, Vocab> decode(target_type const& tgt, memory_type const& memory,
                                                           lengths_type const& lens, cache& c) {
    index_t const n = tgt.template extent<TgtDim>();
    index_t const first = c.steps;
    if (c.memory_keys.empty()) {
      for (auto& layer : decoder.blks) {
        c.memory_keys.push_back(memory_heads(layer.cross_attention.key_heads(memory)));
        c.memory_values.push_back(memory_heads(layer.cross_attention.value_heads(memory)));
      }
      c.keys.resize(decoder.blks.size());
      c.values.resize(decoder.blks.size());
    }
    // each new step's keys: every earlier step and its own (the last query the last key)
    auto const masks = causal<TgtDim>(masking_of<nn::SelfKeys>());
    using hidden_t = basic_tensor<Backend, T, BatchDim, TgtDim, Hidden>;
    hidden_t y = decoder_positions(shared(tgt) * scale_, first);
    for (std::size_t i = 0; i < decoder.blks.size(); ++i) {
      y = hidden_t(decoder.blks[i].step(y, c.keys[i], c.values[i], c.memory_keys[i], c.memory_values[i], masks, lens));
    }
    c.steps += n;
    return contract<Hidden>(y, shared.weight) + select<BiasRow>(final_logits_bias, 0);
  }

  /// @brief The encoder's states and the logits of the whole targets
  /// @p tgt (teacher forcing: each step sees the steps before it).
  output_type operator()(source_type const& src, lengths_type const& lens, target_type const& tgt) {
    memory_type memory = encode(src, lens);
    cache c;
    auto logits = decode(tgt, memory, lens, c);
    return {std::move(memory), std::move(logits)};
  }

 private:
  marian_config config_;
  T scale_;

  // Marian's positions: transformers' sinusoidal table, sines then cosines.
  static nn::positional_options positions_of(marian_config const& c) {
    return {.layout = nn::positional_layout::halves, .max_len = c.max_position_embeddings};
  }
};

/// @brief Greedy translation, as `generate(do_sample=False, num_beams=1,
/// max_new_tokens=n)`: each source's encoding once, then from the
/// decoder's start token one token per call against the cache, the first
/// largest logit each time; a sequence that has produced the end token
/// continues with padding, and decoding stops when every one has ended or
/// after @p n tokens.  Returns [Batch, Tgt] with the start token first.
template <class Model, class B, class BatchDim, class SrcDim>
auto translate_greedy(Model& net, basic_tensor<B, std::int64_t, BatchDim, SrcDim> const& src,
                      basic_tensor<B, std::int64_t, BatchDim> const& lens, index_t n) {
  using host_ids = basic_tensor<cpu, std::int64_t, BatchDim, typename Model::target_dim>;
  autograd::no_grad const guard;
  auto const& c = net.config();
  index_t const b = src.template extent<BatchDim>();
  auto const memory = net.encode(src, lens);
  typename Model::cache cache;
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(b), {c.decoder_start_token_id});
  std::vector<bool> done(static_cast<std::size_t>(b), false);
  for (index_t step = 0; step < n; ++step) {
    host_ids feed(typename host_ids::extents_type{b, 1});
    for (index_t r = 0; r < b; ++r) feed.data()[r] = out[static_cast<std::size_t>(r)].back();
    auto const logits = dimtensor::to<cpu>(dimtensor::eval(net.decode(dimtensor::to<B>(feed), memory, lens, cache).contiguous()));
    index_t const vocab = logits.template extent<Vocab>();
    bool all_done = true;
    for (index_t r = 0; r < b; ++r) {
      auto const* row = logits.data() + r * vocab;
      auto const ri = static_cast<std::size_t>(r);
      std::int64_t const next = done[ri] ? c.pad_token_id : std::max_element(row, row + vocab) - row;
      out[ri].push_back(next);
      if (next == c.eos_token_id) done[ri] = true;
      all_done = all_done && done[ri];
    }
    if (all_done) break;
  }
  index_t const len = static_cast<index_t>(out.front().size());
  host_ids ids(typename host_ids::extents_type{b, len});
  for (index_t r = 0; r < b; ++r) std::copy(out[static_cast<std::size_t>(r)].begin(), out[static_cast<std::size_t>(r)].end(), ids.data() + r * len);
  return dimtensor::to<B>(ids);
}

/// @brief Beam search translation, as `generate(num_beams=o.num_beams,
/// length_penalty=o.length_penalty, early_stopping=…, max_new_tokens=n)`
/// (models/beam_search.hpp gives the rule): each source's encoding once,
/// shared by its beams, and the decoder's cache reordered with the beams
/// at each step.  Returns [Batch, Tgt] with the start token first, each
/// source's best hypothesis, shorter ones padded.
template <class Model, class B, class BatchDim, class SrcDim>
auto translate_beam(Model& net, basic_tensor<B, std::int64_t, BatchDim, SrcDim> const& src,
                    basic_tensor<B, std::int64_t, BatchDim> const& lens, index_t n, beam_options const& o = {}) {
  using host_ids = basic_tensor<cpu, std::int64_t, BatchDim, typename Model::target_dim>;
  using host_rows = basic_tensor<cpu, std::int64_t, BatchDim>;
  autograd::no_grad const guard;
  auto const& c = net.config();
  index_t const b = src.template extent<BatchDim>();
  index_t const k = o.num_beams;
  if (k < 1) throw value_error("translate_beam: num_beams " + std::to_string(k) + " is not positive");
  // Each source's rows repeated for its beams.
  host_rows repeat(typename host_rows::extents_type{b * k});
  for (index_t r = 0; r < b * k; ++r) repeat.data()[r] = r / k;
  auto const beams = dimtensor::to<B>(repeat);
  auto const memory = typename Model::memory_type(index_select<BatchDim>(net.encode(src, lens), beams));
  auto const beam_lens = basic_tensor<B, std::int64_t, BatchDim>(index_select<BatchDim>(lens, beams));
  typename Model::cache cache;
  auto const step = [&](std::vector<std::int64_t> const& feed, std::vector<index_t> const& from) {
    if (!from.empty()) {
      host_rows order(typename host_rows::extents_type{b * k});
      std::copy(from.begin(), from.end(), order.data());
      auto const idx = dimtensor::to<B>(order);
      for (auto* part : {&cache.keys, &cache.values}) {
        for (auto& x : *part) x = typename Model::self_heads(index_select<BatchDim>(*x, idx));
      }
    }
    host_ids ids(typename host_ids::extents_type{b * k, 1});
    std::copy(feed.begin(), feed.end(), ids.data());
    auto const logits = dimtensor::to<cpu>(dimtensor::eval(net.decode(dimtensor::to<B>(ids), memory, beam_lens, cache).contiguous()));
    return std::vector<double>(logits.data(), logits.data() + logits.size());
  };
  auto const out = beam_search(b, c.decoder_start_token_id, c.eos_token_id, c.pad_token_id, n, o, step);
  index_t const len = static_cast<index_t>(out.front().size());
  host_ids ids(typename host_ids::extents_type{b, len});
  for (index_t r = 0; r < b; ++r) std::copy(out[static_cast<std::size_t>(r)].begin(), out[static_cast<std::size_t>(r)].end(), ids.data() + r * len);
  return dimtensor::to<B>(ids);
}

}  // namespace dimtensor::models
