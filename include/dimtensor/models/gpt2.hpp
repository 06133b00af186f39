#pragma once
/// @file
/// @brief GPT-2 (`transformers`' `GPT2LMHeadModel`): `models::gpt2_config`
/// read from a checkpoint's `config.json`, `models::gpt2` (the token and
/// position embeddings, the library's Transformer blocks pre-LN with GPT-2's
/// options and causal masking, the final layer norm, logits through the
/// token embedding), `models::gpt2_schema()` and greedy decoding,
/// `models::greedy`.
///
/// @code
/// auto net = dt::models::gpt2<>::from_pretrained("gpt2-tiny/");
/// auto const out = net(ids, lens);                  // ids [Batch, Tokens], lens [Batch]
/// // out.logits [Batch, Tokens, Vocab]
/// auto const text = dt::models::greedy(net, prompt, 20);   // prompt and 20 more tokens, with a cache
/// @endcode
///
/// The blocks are `nn::transformer_encoder_block` with `{.act = gelu_tanh,
/// .attention_bias = true, .pre_norm = true}`, each query attending to the
/// keys up to its own position within the sequence's length (the attention
/// operation's causal masking with valid lengths, ops/masking.hpp): GPT-2's
/// causal mask with right padding.  The head is
/// the token embedding itself (tied, as `lm_head.weight` is
/// `transformer.wte.weight`): one parameter, one gradient.  The schema
/// transposes the `Conv1D` weights (stored [in, out]) and splits `c_attn`
/// into the query, key and value projections.

#include <algorithm>
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
#include <dimtensor/models/bert.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/layer_norm.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/nn/transformer.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::models {

/// @brief `transformers`' `GPT2Config`: the fields `models::gpt2` reads,
/// with `GPT2Config`'s defaults (the 124M model).
struct gpt2_config {
  /// `vocab_size`.
  index_t vocab_size = 50257;
  /// `n_positions`.
  index_t n_positions = 1024;
  /// `n_embd`.
  index_t n_embd = 768;
  /// `n_layer`.
  index_t n_layer = 12;
  /// `n_head`.
  index_t n_head = 12;
  /// `n_inner` (null in the file: 4 n_embd).
  index_t n_inner = 3072;
  /// `activation_function`.
  nn::activation activation_function = nn::activation::gelu_tanh;
  /// `resid_pdrop`.
  double resid_pdrop = 0.1;
  /// `embd_pdrop`.
  double embd_pdrop = 0.1;
  /// `attn_pdrop`.
  double attn_pdrop = 0.1;
  /// `layer_norm_epsilon`.
  double layer_norm_epsilon = 1e-5;

  /// @brief The config of a checkpoint folder (or a `config.json`), absent
  /// fields taking `GPT2Config`'s defaults.  `io_error` for a field of the
  /// wrong kind; `value_error` for what `models::gpt2` cannot build (heads
  /// that do not divide n_embd, unscaled or per-layer-scaled attention,
  /// cross-attention, an unknown activation).
  static gpt2_config from_file(std::filesystem::path const& source) {
    nn::model_config const f(source);
    gpt2_config c;
    c.vocab_size = f.extent_or("vocab_size", c.vocab_size);
    c.n_positions = f.extent_or("n_positions", c.n_positions);
    c.n_embd = f.extent_or("n_embd", c.n_embd);
    c.n_layer = f.extent_or("n_layer", c.n_layer);
    c.n_head = f.extent_or("n_head", c.n_head);
    c.n_inner = f.extent_or("n_inner", 4 * c.n_embd);
    c.activation_function = activation_named(f.string_or("activation_function", "gelu_new"));
    c.resid_pdrop = f.number_or("resid_pdrop", c.resid_pdrop);
    c.embd_pdrop = f.number_or("embd_pdrop", c.embd_pdrop);
    c.attn_pdrop = f.number_or("attn_pdrop", c.attn_pdrop);
    c.layer_norm_epsilon = f.number_or("layer_norm_epsilon", c.layer_norm_epsilon);
    std::string const where = "gpt2_config: " + f.path().string() + ": ";
    if (!f.boolean_or("scale_attn_weights", true) || f.boolean_or("scale_attn_by_inverse_layer_idx", false)) {
      throw value_error(where + "scale_attn_weights false or scale_attn_by_inverse_layer_idx true: only GPT-2's "
                                "scaling by the square root of the head size is built");
    }
    if (f.boolean_or("add_cross_attention", false)) {
      throw value_error(where + "add_cross_attention: only the decoder-only stack is built");
    }
    c.check(where);
    return c;
  }

  /// `value_error` (prefixed with @p where) unless the heads divide n_embd
  /// and the dropouts are probabilities.
  void check(std::string const& where = "gpt2_config: ") const {
    if (n_head <= 0 || n_embd % n_head != 0) {
      throw value_error(where + "n_embd " + std::to_string(n_embd) + " is not a multiple of n_head " +
                        std::to_string(n_head));
    }
    for (double p : {resid_pdrop, embd_pdrop, attn_pdrop}) {
      if (!(p >= 0 && p < 1)) throw value_error(where + "a dropout probability outside [0, 1): " + std::to_string(p));
    }
  }
};

/// @brief How a `transformers` GPT-2 checkpoint's keys become
/// `models::gpt2`'s: the prefix "transformer.", each block's sublayers as
/// the library's block names them, the `Conv1D` weights transposed,
/// `c_attn` split into the query, key and value projections along the
/// projections' output (the first Hidden of their weights); the causal-mask
/// buffers of old checkpoints and a saved `lm_head.weight` (the token
/// embedding, tied) are ignored.
inline nn::checkpoint_schema gpt2_schema() {
  return {
      .prefixes = {"transformer."},
      .renames = {{".ln_1.", ".addnorm1.ln."},
                  {".ln_2.", ".addnorm2.ln."},
                  {".attn.c_proj.", ".attention.W_o."},
                  {".mlp.c_fc.", ".ffn.dense1."},
                  {".mlp.c_proj.", ".ffn.dense2."}},
      .ignore = {"*.attn.bias", "*.attn.masked_bias", "lm_head.weight"},
      .transposed = {"h.*.attention.W_*.weight", "h.*.ffn.dense*.weight"},
      .splits = {{.from = "h.*.attn.c_attn.weight",
                  .to = {"h.*.attention.W_q.weight", "h.*.attention.W_k.weight", "h.*.attention.W_v.weight"},
                  .dim = "Hidden"},
                 {.from = "h.*.attn.c_attn.bias",
                  .to = {"h.*.attention.W_q.bias", "h.*.attention.W_k.bias", "h.*.attention.W_v.bias"},
                  .dim = "Hidden"}},
  };
}

/// @brief `GPT2LMHeadModel`'s outputs.
template <class BatchDim, class TokensDim, class T, class Backend>
struct gpt2_output {
  /// Every token's hidden state after the final layer norm, [Batch, Tokens, Hidden].
  basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> last_hidden_state;
  /// The next token's logits at every position, [Batch, Tokens, Vocab].
  basic_tensor<Backend, T, BatchDim, TokensDim, Vocab> logits;
};

/// @brief `transformers`' `GPT2LMHeadModel`: `wte`, `wpe`, `drop`, `h`
/// (the library's blocks), `ln_f`; the logits through `wte`.
template <class BatchDim = Batch, class TokensDim = Tokens, class T = float, class Backend = default_backend>
class gpt2 : public nn::module<gpt2<BatchDim, TokensDim, T, Backend>> {
 public:
  /// The token ids, [Batch, Tokens].
  using ids_type = basic_tensor<Backend, std::int64_t, BatchDim, TokensDim>;
  /// Each sequence's length, [Batch].
  using lengths_type = basic_tensor<Backend, std::int64_t, BatchDim>;
  /// One block.
  using block_type = nn::transformer_encoder_block<TokensDim, Hidden, Intermediate, T, Backend>;
  /// What a call returns.
  using output_type = gpt2_output<BatchDim, TokensDim, T, Backend>;
  /// One block's keys or values, split into heads: [Batch, SelfKeys, Heads, HeadFeat].
  using heads_type = basic_tensor<Backend, T, BatchDim, nn::SelfKeys, nn::Heads, nn::HeadFeat>;
  /// @brief What decoding keeps between calls: each block's keys and
  /// values so far, and how many steps they hold.
  struct cache {
    /// Each block's keys (none before the first call).
    std::vector<std::optional<heads_type>> keys;
    /// Each block's values.
    std::vector<std::optional<heads_type>> values;
    /// The steps so far: the next call's first position.
    index_t steps = 0;
  };

  BOOST_HANA_DEFINE_STRUCT(gpt2, (nn::embedding<Vocab, Hidden, T, Backend>, wte),
                           (nn::embedding<nn::Positions, Hidden, T, Backend>, wpe), (nn::dropout, drop),
                           (std::vector<block_type>, h), (nn::layer_norm<Hidden, T, Backend>, ln_f));

  /// A model of config @p c, its parameters drawn from @p gen.
  explicit gpt2(gpt2_config const& c, generator& gen = default_generator())
      : wte(Vocab(c.vocab_size), Hidden(c.n_embd), (c.check(), gen)),
        wpe(nn::Positions(c.n_positions), Hidden(c.n_embd), gen),
        drop(c.embd_pdrop),
        ln_f(Hidden(c.n_embd), c.layer_norm_epsilon),
        config_(c) {
    nn::transformer_block_options const options{.act = c.activation_function,
                                                .attention_bias = true,
                                                .ffn_bias = true,
                                                .eps = c.layer_norm_epsilon,
                                                .dropout = c.resid_pdrop,
                                                .attention_dropout = c.attn_pdrop,
                                                .pre_norm = true};
    for (index_t i = 0; i < c.n_layer; ++i) h.emplace_back(Hidden(c.n_embd), Intermediate(c.n_inner), c.n_head, options, gen);
  }

  /// @brief The model of the checkpoint folder @p folder (its
  /// `config.json` and weights, loaded through `gpt2_schema()`), in
  /// evaluation mode.
  static gpt2 from_pretrained(std::filesystem::path const& folder) {
    gpt2 net(gpt2_config::from_file(folder));
    nn::load_checkpoint(net, folder, gpt2_schema());
    net.eval();
    return net;
  }

  /// The configuration.
  gpt2_config const& config() const noexcept { return config_; }

  /// @brief The hidden states and logits of @p ids, each sequence's
  /// queries attending causally within its first @p lens tokens.
  /// `value_error` for more tokens than positions or a length outside
  /// [0, Tokens].
  output_type operator()(ids_type const& ids, lengths_type const& lens) {
    index_t const b = ids.template extent<BatchDim>();
    index_t const n = ids.template extent<TokensDim>();
    if (n > wpe.num_embeddings()) {
      throw value_error("gpt2: " + std::to_string(n) + " tokens but " + std::to_string(wpe.num_embeddings()) +
                        " positions (n_positions)");
    }
    auto const host_lens = dimtensor::to<cpu>(lens);
    for (index_t r = 0; r < b; ++r) {
      std::int64_t const len = host_lens.data()[r];
      if (len < 0 || len > n) {
        throw value_error("gpt2: length " + std::to_string(len) + " of sequence " + std::to_string(r) + " outside [0, " +
                          std::to_string(n) + "]");
      }
    }
    // each query's keys: 0 … i, and none past the sequence's length
    auto const masks = causal<TokensDim>(masking_of<nn::SelfKeys>(lens));
    auto const positions = dimtensor::to<Backend>(arange<std::int64_t>(TokensDim(n)));
    basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> x = drop(wte(ids) + wpe(positions));
    for (auto& blk : h) x = basic_tensor<Backend, T, BatchDim, TokensDim, Hidden>(blk(x, masks));
    return head(x);
  }
  /// @brief The next steps @p ids ([Batch, Tokens], no padding) of the
  /// sequences in @p c, at positions c.steps onwards: each block's keys
  /// and values are appended to @p c and each new token attends to every
  /// step up to its own (as the whole sequence would, without running it
  /// again).  `value_error` past the positions.
  output_type operator()(ids_type const& ids, cache& c) {
    index_t const n = ids.template extent<TokensDim>();
    if (c.steps < 0 || n > wpe.num_embeddings() - c.steps) {
      throw value_error("gpt2: " + std::to_string(c.steps + n) + " tokens but " + std::to_string(wpe.num_embeddings()) +
                        " positions (n_positions)");
    }
    c.keys.resize(h.size());
    c.values.resize(h.size());
    // each new token's keys: every earlier step and its own (the last query the last key)
    auto const masks = causal<TokensDim>(masking_of<nn::SelfKeys>());
    auto const positions =
        dimtensor::to<Backend>(arange<std::int64_t, TokensDim>(static_cast<double>(c.steps), static_cast<double>(c.steps + n)));
    basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> x = drop(wte(ids) + wpe(positions));
    for (std::size_t i = 0; i < h.size(); ++i) {
      x = basic_tensor<Backend, T, BatchDim, TokensDim, Hidden>(h[i].step(x, c.keys[i], c.values[i], masks));
    }
    c.steps += n;
    return head(x);
  }

  /// As above, every token attended to (no padding).
  output_type operator()(ids_type const& ids) {
    index_t const b = ids.template extent<BatchDim>();
    index_t const n = ids.template extent<TokensDim>();
    return (*this)(ids, dimtensor::to<Backend>(full<std::int64_t>(std::int64_t{n}, BatchDim(b))));
  }

 private:
  gpt2_config config_;

  // The final layer norm and the logits through the token embedding.
  output_type head(basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> const& x) {
    basic_tensor<Backend, T, BatchDim, TokensDim, Hidden> last = ln_f(x);
    basic_tensor<Backend, T, BatchDim, TokensDim, Vocab> logits = contract<Hidden>(last, wte.weight);
    return {std::move(last), std::move(logits)};
  }
};

/// @brief Greedy decoding, as `generate(do_sample=False, max_new_tokens=n)`
/// with no end token: @p prompt ([Batch, Tokens], no padding) followed by
/// @p n tokens, each the first largest logit at the last position.  The
/// prompt runs once and each new token alone, against the model's cache of
/// keys and values (`Model::cache`).  `value_error` when the result would
/// have more tokens than positions.
template <class Model, class B, class BatchDim, class TokensDim>
basic_tensor<B, std::int64_t, BatchDim, TokensDim> greedy(Model& net,
                                                         basic_tensor<B, std::int64_t, BatchDim, TokensDim> const& prompt,
                                                         index_t n) {
  autograd::no_grad const guard;
  using host_ids = basic_tensor<cpu, std::int64_t, BatchDim, TokensDim>;
  host_ids const start = dimtensor::to<cpu>(prompt);
  index_t const b = start.template extent<BatchDim>();
  index_t const len = start.template extent<TokensDim>();
  host_ids out(typename host_ids::extents_type{b, len + n});
  for (index_t r = 0; r < b; ++r) std::copy(start.data() + r * len, start.data() + (r + 1) * len, out.data() + r * (len + n));
  typename Model::cache c;
  host_ids feed = start;
  for (index_t step = 0; step < n; ++step) {
    auto const logits = dimtensor::to<cpu>(dimtensor::eval(net(dimtensor::to<B>(feed), c).logits.contiguous()));
    index_t const fed = feed.template extent<TokensDim>();
    index_t const vocab = logits.template extent<Vocab>();
    host_ids next(typename host_ids::extents_type{b, 1});
    for (index_t r = 0; r < b; ++r) {
      auto const* row = logits.data() + (r * fed + fed - 1) * vocab;
      next.data()[r] = std::max_element(row, row + vocab) - row;
      out.data()[r * (len + n) + len + step] = next.data()[r];
    }
    feed = std::move(next);
  }
  return dimtensor::to<B>(out);
}

}  // namespace dimtensor::models
