#pragma once
/// @file
/// @brief BERT (`transformers`' `BertModel`): `models::bert_config` read
/// from a checkpoint's `config.json`, `models::bert` (embeddings, the
/// library's Transformer encoder blocks with BERT's options, the pooler),
/// `models::bert_schema()` (how a `transformers` checkpoint's keys become
/// the module's) and `models::bert<>::from_pretrained(folder)`.
///
/// @code
/// auto net = dt::models::bert<>::from_pretrained("bert-tiny/");  // config.json + model.safetensors
/// auto const out = net(input_ids, attention_mask, token_type_ids);  // attention_mask: 1 read, 0 not
/// auto const lens = dt::models::lengths_from_mask(attention_mask);  // or right padding as lengths [Batch]
/// auto const same = net(input_ids, lens, token_type_ids);
/// // out.last_hidden_state [Batch, Tokens, Hidden], out.pooler_output [Batch, Hidden]
/// @endcode
///
/// The blocks are `nn::transformer_encoder_block` (post-LN, as BERT): the
/// attention's projections with biases, the FFN's activation from
/// `hidden_act`, the layer norms' eps from `layer_norm_eps`.  The
/// embeddings and the pooler keep `transformers`' member names, so only
/// the blocks' keys are renamed by the schema.  Padding is given as
/// `transformers`' `attention_mask` in any pattern (left padding, holes: a
/// key mask of the attention operation, ops/masking.hpp) or as each
/// sequence's length (right padding; `lengths_from_mask` converts a mask of
/// ones then zeros).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/io/checkpoint.hpp>
#include <dimtensor/io/config.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/feed_forward.hpp>
#include <dimtensor/nn/layer_norm.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/nn/transformer.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/select.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::models {

/// A batch of sequences (the default batch dim of the model families).
DIMTENSOR_DIM(Batch);
/// A sequence's tokens.
DIMTENSOR_DIM(Tokens);
/// A token's features (`hidden_size`).
DIMTENSOR_DIM(Hidden);
/// The FFN's inner features (`intermediate_size`).
DIMTENSOR_DIM(Intermediate);
/// The vocabulary (`vocab_size`).
DIMTENSOR_DIM(Vocab);
/// BERT's segment types (`type_vocab_size`).
DIMTENSOR_DIM(TokenTypes);

/// @brief The activation a `transformers` config names (`hidden_act`,
/// `activation_function`): "gelu" (erf form), "gelu_new",
/// "gelu_pytorch_tanh" (tanh form), "relu", "silu" or "swish";
/// `value_error` naming it otherwise.
inline nn::activation activation_named(std::string const& name) {
  if (name == "gelu") return nn::activation::gelu;
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return nn::activation::gelu_tanh;
  if (name == "relu") return nn::activation::relu;
  if (name == "silu" || name == "swish") return nn::activation::silu;
  throw value_error("activation \"" + name +
                    "\": the library has gelu, gelu_new (gelu_pytorch_tanh), relu and silu (swish)");
}

/// @brief `transformers`' `BertConfig`: the fields `models::bert` reads,
/// with `BertConfig`'s defaults (bert-base).
struct bert_config {
  /// `vocab_size`.
  index_t vocab_size = 30522;
  /// `hidden_size`.
  index_t hidden_size = 768;
  /// `num_hidden_layers`.
  index_t num_hidden_layers = 12;
  /// `num_attention_heads`.
  index_t num_attention_heads = 12;
  /// `intermediate_size`.
  index_t intermediate_size = 3072;
  /// `hidden_act`.
  nn::activation hidden_act = nn::activation::gelu;
  /// `hidden_dropout_prob`.
  double hidden_dropout_prob = 0.1;
  /// `attention_probs_dropout_prob`.
  double attention_probs_dropout_prob = 0.1;
  /// `max_position_embeddings`.
  index_t max_position_embeddings = 512;
  /// `type_vocab_size`.
  index_t type_vocab_size = 2;
  /// `layer_norm_eps`.
  double layer_norm_eps = 1e-12;
  /// `pad_token_id`: the word embedding's padding row (no gradient), or none.
  std::optional<index_t> pad_token_id = 0;

  /// @brief The config of a checkpoint folder (or a `config.json`), absent
  /// fields taking `BertConfig`'s defaults.  `io_error` for a field of the
  /// wrong kind; `value_error` for what `models::bert` cannot build
  /// (hidden_size not a multiple of the heads, a position embedding other
  /// than "absolute", a decoder or cross-attention, an unknown activation).
  static bert_config from_file(std::filesystem::path const& source) {
    nn::model_config const f(source);
    bert_config c;
    c.vocab_size = f.extent_or("vocab_size", c.vocab_size);
    c.hidden_size = f.extent_or("hidden_size", c.hidden_size);
    c.num_hidden_layers = f.extent_or("num_hidden_layers", c.num_hidden_layers);
    c.num_attention_heads = f.extent_or("num_attention_heads", c.num_attention_heads);
    c.intermediate_size = f.extent_or("intermediate_size", c.intermediate_size);
    c.hidden_act = activation_named(f.string_or("hidden_act", "gelu"));
    c.hidden_dropout_prob = f.number_or("hidden_dropout_prob", c.hidden_dropout_prob);
    c.attention_probs_dropout_prob = f.number_or("attention_probs_dropout_prob", c.attention_probs_dropout_prob);
    c.max_position_embeddings = f.extent_or("max_position_embeddings", c.max_position_embeddings);
    c.type_vocab_size = f.extent_or("type_vocab_size", c.type_vocab_size);
    c.layer_norm_eps = f.number_or("layer_norm_eps", c.layer_norm_eps);
    auto const keys = f.keys();
    if (std::find(keys.begin(), keys.end(), "pad_token_id") != keys.end()) {   // null: no padding row
      c.pad_token_id = f.contains("pad_token_id") ? std::optional<index_t>(f.integer("pad_token_id")) : std::nullopt;
    }
    std::string const where = "bert_config: " + f.path().string() + ": ";
    if (auto const kind = f.string_or("position_embedding_type", "absolute"); kind != "absolute") {
      throw value_error(where + "position_embedding_type \"" + kind + "\": only \"absolute\" is built");
    }
    if (f.boolean_or("is_decoder", false) || f.boolean_or("add_cross_attention", false)) {
      throw value_error(where + "is_decoder or add_cross_attention: only BERT's encoder is built");
    }
    c.check(where);
    return c;
  }

  /// `value_error` (prefixed with @p where) unless the heads divide
  /// hidden_size and the dropouts are probabilities.
  void check(std::string const& where = "bert_config: ") const {
    if (num_attention_heads <= 0 || hidden_size % num_attention_heads != 0) {
      throw value_error(where + "hidden_size " + std::to_string(hidden_size) + " is not a multiple of " +
                        "num_attention_heads " + std::to_string(num_attention_heads));
    }
    for (double p : {hidden_dropout_prob, attention_probs_dropout_prob}) {
      if (!(p >= 0 && p < 1)) throw value_error(where + "a dropout probability outside [0, 1): " + std::to_string(p));
    }
  }
};

/// @brief How a `transformers` BERT checkpoint's keys become `models::bert`'s:
/// the prefix of the task models ("bert."), the old gamma and beta names,
/// each block's sublayers as the library's block names them; the task
/// heads (keys under "cls.") and the buffer of position ids are ignored.
inline nn::checkpoint_schema bert_schema() {
  return {
      .prefixes = {"bert."},
      .renames = {{"LayerNorm.gamma", "LayerNorm.weight"},
                  {"LayerNorm.beta", "LayerNorm.bias"},
                  {"encoder.layer.", "encoder.blks."},
                  {".attention.self.query.", ".attention.W_q."},
                  {".attention.self.key.", ".attention.W_k."},
                  {".attention.self.value.", ".attention.W_v."},
                  {".attention.output.dense.", ".attention.W_o."},
                  {".attention.output.LayerNorm.", ".addnorm1.ln."},
                  {".intermediate.dense.", ".ffn.dense1."},
                  {".output.dense.", ".ffn.dense2."},
                  {".output.LayerNorm.", ".addnorm2.ln."}},
      .ignore = {"cls.*", "*position_ids"},
  };
}

/// @brief Each sequence's length from a `transformers` `attention_mask`
/// ([Batch, Tokens], ones then zeros): [Batch] lengths on the same backend.
/// `value_error` naming the row when a row is not ones then zeros (left
/// padding, holes) or holds other values.
template <class B, class I, class BatchDim, class TokensDim>
basic_tensor<B, std::int64_t, BatchDim> lengths_from_mask(basic_tensor<B, I, BatchDim, TokensDim> const& mask) {
  auto const host = dimtensor::to<cpu>(mask);
  index_t const rows = host.extents()[0];
  index_t const cols = host.extents()[1];
  basic_tensor<cpu, std::int64_t, BatchDim> lens(typename basic_tensor<cpu, std::int64_t, BatchDim>::extents_type{rows});
  for (index_t r = 0; r < rows; ++r) {
    index_t n = 0;
    for (index_t c = 0; c < cols; ++c) {
      auto const v = host(BatchDim(r), TokensDim(c));
      bool const one = v == I(1);
      if ((v != I(0) && !one) || (one && n != c)) {
        throw value_error("lengths_from_mask: row " + std::to_string(r) + " of the mask is not ones then zeros at " +
                          std::string(dim_name_v<TokensDim>) + " " + std::to_string(c) +
                          " (lengths describe right padding only)");
      }
      if (one) ++n;
    }
    lens.data()[r] = n;
  }
  return dimtensor::to<B>(lens);
}

/// @brief `BertEmbeddings`: the tokens', positions' and token types'
/// embeddings added, then layer norm and dropout (members under
/// `transformers`' names).
template <class BatchDim, class TokensDim, class T = float, class Backend = default_backend>
class bert_embeddings : public nn::module<bert_embeddings<BatchDim, TokensDim, T, Backend>> {
 public:
  BOOST_HANA_DEFINE_STRUCT(bert_embeddings, (nn::embedding<Vocab, Hidden, T, Backend>, word_embeddings),
                           (nn::embedding<nn::Positions, Hidden, T, Backend>, position_embeddings),
                           (nn::embedding<TokenTypes, Hidden, T, Backend>, token_type_embeddings),
                           (nn::layer_norm<Hidden, T, Backend>, LayerNorm), (nn::dropout, dropout));

  /// The tables of @p c, drawn from @p gen.
  bert_embeddings(bert_config const& c, generator& gen)
      : word_embeddings(Vocab(c.vocab_size), Hidden(c.hidden_size), {.padding_idx = c.pad_token_id}, gen),
        position_embeddings(nn::Positions(c.max_position_embeddings), Hidden(c.hidden_size), gen),
        token_type_embeddings(TokenTypes(c.type_vocab_size), Hidden(c.hidden_size), gen),
        LayerNorm(Hidden(c.hidden_size), c.layer_norm_eps),
        dropout(c.hidden_dropout_prob) {}

  /// [Batch, Tokens, Hidden] of @p ids and @p types ([Batch, Tokens]),
  /// the positions 0, 1, … .  `value_error` for more tokens than positions.
  template <class Ids, class Types>
  basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> operator()(Ids const& ids, Types const& types) {
    return dropout(LayerNorm(word_embeddings(ids) + position_embeddings(positions(ids)) + token_type_embeddings(types)));
  }
  /// As above, every token of type 0.
  template <class Ids>
  basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> operator()(Ids const& ids) {
    auto const type0 = select<TokenTypes>(token_type_embeddings.weight, 0);
    return dropout(LayerNorm(word_embeddings(ids) + position_embeddings(positions(ids)) + type0));
  }

 private:
  template <class Ids>
  basic_tensor<Backend, std::int64_t, TokensDim> positions(Ids const& ids) const {
    index_t const n = ids.template extent<TokensDim>();
    if (n > position_embeddings.num_embeddings()) {
      throw value_error("bert: " + std::to_string(n) + " tokens but " +
                        std::to_string(position_embeddings.num_embeddings()) +
                        " positions (max_position_embeddings)");
    }
    return dimtensor::to<Backend>(arange<std::int64_t>(TokensDim(n)));
  }
};

/// `BertPooler`: tanh(dense(the first token's hidden state)).
template <class T = float, class Backend = default_backend>
class bert_pooler : public nn::module<bert_pooler<T, Backend>> {
 public:
  BOOST_HANA_DEFINE_STRUCT(bert_pooler, (nn::linear<Hidden, Hidden, T, Backend>, dense));
  /// Over @p hidden features, drawn from @p gen.
  bert_pooler(Hidden hidden, generator& gen) : dense(hidden, hidden, true, gen) {}
};

/// The library's encoder blocks under BERT's `encoder.layer` (renamed `encoder.blks`).
template <class TokensDim, class T = float, class Backend = default_backend>
class bert_encoder : public nn::module<bert_encoder<TokensDim, T, Backend>> {
 public:
  /// One block.
  using block_type = nn::transformer_encoder_block<TokensDim, Hidden, Intermediate, T, Backend>;
  BOOST_HANA_DEFINE_STRUCT(bert_encoder, (std::vector<block_type>, blks));
  /// @p c's blocks, drawn from @p gen.
  bert_encoder(bert_config const& c, generator& gen) {
    nn::transformer_block_options const options{.act = c.hidden_act,
                                                .attention_bias = true,
                                                .ffn_bias = true,
                                                .eps = c.layer_norm_eps,
                                                .dropout = c.hidden_dropout_prob,
                                                .attention_dropout = c.attention_probs_dropout_prob};
    for (index_t i = 0; i < c.num_hidden_layers; ++i) {
      blks.emplace_back(Hidden(c.hidden_size), Intermediate(c.intermediate_size), c.num_attention_heads, options, gen);
    }
  }
};

/// @brief `BertModel`'s outputs.
template <class BatchDim, class TokensDim, class T, class Backend>
struct bert_output {
  /// Every token's last hidden state, [Batch, Tokens, Hidden].
  basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> last_hidden_state;
  /// The pooler's output, [Batch, Hidden].
  basic_tensor<Backend, T, BatchDim, Hidden> pooler_output;
};

/// @brief `transformers`' `BertModel`: `embeddings`, `encoder` (the
/// library's blocks), `pooler`.
template <class BatchDim = Batch, class TokensDim = Tokens, class T = float, class Backend = default_backend>
class bert : public nn::module<bert<BatchDim, TokensDim, T, Backend>> {
 public:
  /// The token ids, [Batch, Tokens].
  using ids_type = basic_tensor<Backend, std::int64_t, BatchDim, TokensDim>;
  /// Each sequence's length, [Batch].
  using lengths_type = basic_tensor<Backend, std::int64_t, BatchDim>;
  /// What a call returns.
  using output_type = bert_output<BatchDim, TokensDim, T, Backend>;

  BOOST_HANA_DEFINE_STRUCT(bert, (bert_embeddings<BatchDim, TokensDim, T, Backend>, embeddings),
                           (bert_encoder<TokensDim, T, Backend>, encoder), (bert_pooler<T, Backend>, pooler));

  /// A model of config @p c, its parameters drawn from @p gen.
  explicit bert(bert_config const& c, generator& gen = default_generator())
      : embeddings((c.check(), c), gen), encoder(c, gen), pooler(Hidden(c.hidden_size), gen), config_(c) {}

  /// @brief The model of the checkpoint folder @p folder (its
  /// `config.json` and weights, loaded through `bert_schema()`), in
  /// evaluation mode.
  static bert from_pretrained(std::filesystem::path const& folder) {
    bert net(bert_config::from_file(folder));
    nn::load_checkpoint(net, folder, bert_schema());
    net.eval();
    return net;
  }

  /// The configuration.
  bert_config const& config() const noexcept { return config_; }

  /// @brief The hidden states and the pooled output of @p ids, each
  /// sequence attending to its first @p lens tokens, of token types @p types.
  output_type operator()(ids_type const& ids, lengths_type const& lens, ids_type const& types) {
    return run(embeddings(ids, types), lens);
  }
  /// As above, every token of type 0.
  output_type operator()(ids_type const& ids, lengths_type const& lens) { return run(embeddings(ids), lens); }
  /// @brief The hidden states and the pooled output of @p ids, each token
  /// attending to the tokens @p attention_mask marks 1 (0: not read; any
  /// pattern, such as left padding), of token types @p types.  A value
  /// other than 0 and 1 is a `value_error` naming it and its place.
  output_type operator()(ids_type const& ids, ids_type const& attention_mask, ids_type const& types) {
    return run(embeddings(ids, types), key_masking(attention_mask));
  }
  /// As above, every token of type 0.
  output_type operator()(ids_type const& ids, ids_type const& attention_mask) {
    return run(embeddings(ids), key_masking(attention_mask));
  }
  /// As above, every token attended to.
  output_type operator()(ids_type const& ids) {
    index_t const b = ids.template extent<BatchDim>();
    index_t const n = ids.template extent<TokensDim>();
    return run(embeddings(ids), dimtensor::to<Backend>(full<std::int64_t>(std::int64_t{n}, BatchDim(b))));
  }

 private:
  bert_config config_;

  // The attention mask as the blocks' key mask (their keys are SelfKeys).
  static auto key_masking(ids_type const& attention_mask) {
    auto const host = dimtensor::to<cpu>(attention_mask).contiguous();
    index_t const n = host.template extent<TokensDim>();
    for (index_t x = 0; x < host.size(); ++x) {
      std::int64_t const v = host.data()[x];
      if (v != 0 && v != 1) {
        throw value_error("bert: attention_mask holds " + std::to_string(v) + " at row " + std::to_string(x / n) +
                          ", " + std::string(dim_name_v<TokensDim>) + " " + std::to_string(x % n) +
                          "; it holds 1 (read) or 0 (not read)");
      }
    }
    return masking_of<nn::SelfKeys>().key_mask(rename<TokensDim, nn::SelfKeys>(ne(attention_mask, std::int64_t{0})));
  }

  template <class M>
  output_type run(basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> h, M const& masks) {
    for (auto& blk : encoder.blks) h = basic_tensor<Backend, T, BatchDim, TokensDim, Hidden>(blk(h, masks));
    auto pooled = tanh(pooler.dense(select<TokensDim>(h, 0)));
    return {std::move(h), basic_tensor<Backend, T, BatchDim, Hidden>(pooled)};
  }
};

}  // namespace dimtensor::models
