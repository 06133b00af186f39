#pragma once
/// @file
/// @brief Checkpoints written by other libraries, loaded by their own keys:
/// `nn::checkpoint` (one safetensors file, or shards listed by a
/// `model.safetensors.index.json`), `nn::checkpoint_schema` (how the file's
/// keys become the module's: prefixes, renames, ignored keys, transposed
/// and split tensors, tied weights) and `nn::load_checkpoint`, which
/// accounts for every tensor of the file and every parameter of the module.
///
/// @code
/// dt::nn::checkpoint_schema const gpt2{
///     .prefixes = {"transformer."},
///     .ignore = {"*.attn.bias", "*.attn.masked_bias"},
///     .transposed = {"*.attn.W_*.weight", "*.mlp.*.weight"},          // Conv1D stores [in, out]
///     .splits = {{.from = "h.*.attn.c_attn.weight",                     // [768, 2304] into Q, K, V
///                 .to = {"h.*.attn.W_q.weight", "h.*.attn.W_k.weight", "h.*.attn.W_v.weight"},
///                 .dim = "Hidden3"}},
///     .tied = {{.to = "lm_head.weight", .from = "wte.weight"}}};
/// dt::nn::load_checkpoint(model, "gpt2/", gpt2);   // a folder, a .safetensors file or an index
/// @endcode
///
/// A key the schema does not account for is not guessed at: one
/// `io_error` lists every parameter the file has no tensor for and every
/// tensor of the file that is no parameter's, each as the file spells it
/// and as renamed, and nothing is loaded.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/io/safetensors.hpp>
#include <dimtensor/io/state_dict.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/to.hpp>

namespace dimtensor::nn {

/// @brief A rename of a checkpoint's keys: every occurrence of @p from in a
/// key becomes @p to (BERT's old `LayerNorm.gamma` → `LayerNorm.weight`).
struct key_rename {
  /// The text as the file spells it.
  std::string from = {};
  /// The text as the module spells it.
  std::string to = {};
};

/// @brief One stored tensor cut into equal parts, one parameter each
/// (GPT-2's `c_attn.weight`, the query, key and value projections side by
/// side).  An asterisk in @p from (one at most) matches any run of
/// characters and stands for the same run in each of @p to: with
/// `h.N.attn.c_attn.weight`, N standing for it, → `h.N.attn.W_q.weight`.
struct key_split {
  /// The stored tensor's key, after the prefixes and renames.
  std::string from = {};
  /// The parameters' keys, in the order of the parts.
  std::vector<std::string> to = {};
  /// The name of the parameters' dim along which the parts lie (each part
  /// has that dim; the stored tensor has it as many times longer).
  std::string dim = {};
};

/// @brief A parameter that loads from another's stored tensor when the
/// file has none of its own (tied embeddings: GPT-2's `lm_head.weight` is
/// `wte.weight`).  One asterisk at most, as in key_split.
struct key_tie {
  /// The parameter's key.
  std::string to = {};
  /// The parameter whose stored tensor it loads.
  std::string from = {};
};

/// @brief How a checkpoint's keys become a module's (`load_checkpoint`),
/// written with designated initializers; every field may be left out.
///
/// A file key is matched against `ignore` as written; then the first of
/// `prefixes` it starts with is taken off, `renames` are applied in order,
/// and the result is matched against `ignore` again and then is the
/// module's key (or a key_split's `from`).  Patterns (`ignore`,
/// `transposed`, and `from`/`to` of splits and ties) match whole keys, an
/// asterisk standing for any run of characters; a split's or a tie's have
/// one asterisk at most (`value_error` otherwise).
struct checkpoint_schema {
  /// Prefixes a file key may carry ("bert.", "model.", "transformer."):
  /// the first it starts with is taken off.
  std::vector<std::string> prefixes = {};
  /// Renames from the file's spelling to the module's, in order.
  std::vector<key_rename> renames = {};
  /// File keys that are no parameter's and are skipped (BERT's
  /// prediction head under "cls.predictions.", GPT-2's causal-mask
  /// buffers `h.N.attn.bias`).
  std::vector<std::string> ignore = {};
  /// Parameters whose stored tensor has its axes in reverse order (GPT-2's
  /// `Conv1D` weights, stored [in, out] where a linear layer's are [out,
  /// in]).
  std::vector<std::string> transposed = {};
  /// Stored tensors cut into parameters.
  std::vector<key_split> splits = {};
  /// Parameters loaded from another's stored tensor.
  std::vector<key_tie> tied = {};
};

/// @brief The tensors of a checkpoint: one safetensors file, or the shards
/// a `model.safetensors.index.json` lists, opened from the file, the
/// index or a folder holding either (`model.safetensors` first).
///
/// Only the headers are read at construction; `io_error` naming the file
/// when one is malformed, when the index names a shard that is missing or a
/// key its shard does not hold, or a shard holds a key the index does not
/// give it.
class checkpoint {
 public:
  /// Opens @p source (see the class).
  explicit checkpoint(std::filesystem::path source);

  /// What was opened: the safetensors file or the index.
  std::filesystem::path const& path() const noexcept { return path_; }
  /// Every tensor's key, sorted.
  std::vector<std::string> const& keys() const noexcept { return keys_; }
  /// Whether a tensor is stored under @p key.
  bool contains(std::string_view key) const { return shard_of_.find(key) != shard_of_.end(); }
  /// The header entry of @p key (dtype, shape); `io_error` when absent.
  safetensors_entry const& entry(std::string_view key) const;
  /// The values of @p key, row-major (safetensors_reader::values).
  template <class T>
  std::vector<T> values(std::string_view key) const {
    return reader_of(key).template values<T>(key);
  }

 private:
  safetensors_reader const& reader_of(std::string_view key) const;

  std::filesystem::path path_;
  std::vector<safetensors_reader> shards_;
  std::map<std::string, std::size_t, std::less<>> shard_of_;
  std::vector<std::string> keys_;
};

namespace detail {

/// A parameter as the plan sees it: its key, its dims' names, its extents.
struct checkpoint_target {
  std::string key;
  std::vector<std::string> dims;
  std::vector<index_t> extents;
};

/// @brief Where each parameter of a module comes from in a checkpoint
/// under a schema (dims-free, compiled once in the runtime).  The
/// constructor accounts for every key and throws the one `io_error` that
/// lists what is missing and what is left over, or a shape's mismatch.
class checkpoint_plan {
 public:
  checkpoint_plan(checkpoint const& file, checkpoint_schema const& schema, std::vector<checkpoint_target> targets);

  /// The values of target @p i in its own row-major order (its extents'
  /// product of them) into @p out: read, transposed and cut as planned.
  /// T is float or double.
  template <class T>
  void values(std::size_t i, T* out) const;

 private:
  struct source {
    std::string file_key;         // the tensor in the file
    std::string how;              // "", or ", transposed", ", part 2 of 3 along Hidden3", for messages
    std::vector<int> perm;        // the target's axis i is the stored tensor's perm[i]
    int split_axis = -1;          // the target's axis the parts lie along
    index_t split_offset = 0;     // where this part starts on it
    index_t split_parts = 1;      // how many parts the stored tensor holds
  };

  checkpoint const* file_;
  std::vector<checkpoint_target> targets_;
  std::vector<source> sources_;
};

}  // namespace detail

/// @brief Loads every parameter of @p model from the checkpoint at
/// @p source (a safetensors file, an index of shards, or a folder holding
/// either), its keys mapped by @p schema.
///
/// Every tensor of the file must be a parameter's or ignored, and every
/// parameter must have one: otherwise one `io_error` lists each missing
/// parameter and each unused tensor (as the file spells it and as
/// renamed). A stored shape, once transposed and cut, must be the
/// parameter's (a scalar parameter also takes shape [1], as in
/// load_parameters); F16 and BF16 load into float and double exactly.
/// Nothing changes unless every parameter loads; the values are copied
/// into the parameters' storage, as load_parameters does.
template <Module M>
void load_checkpoint(M& model, std::filesystem::path const& source, checkpoint_schema const& schema = {}) {
  checkpoint const file(source);
  std::vector<detail::checkpoint_target> targets;
  model.for_each_parameter(
      [&](std::string const& key, auto const& parameter) {
        using tensor_type = std::remove_cvref_t<decltype(parameter)>;
        using specs = typename tensor_type::specs;
        static_assert(std::is_same_v<typename tensor_type::value_type, float> ||
                          std::is_same_v<typename tensor_type::value_type, double>,
                      "dimtensor::nn::load_checkpoint: parameters must hold float or double");
        detail::checkpoint_target t{key, {}, {}};
        for (std::size_t i = 0; i < tensor_type::rank; ++i) {
          t.dims.emplace_back(meta::names_of<specs>::value[i]);
          t.extents.push_back(parameter.extents()[i]);
        }
        targets.push_back(std::move(t));
      },
      "");
  detail::checkpoint_plan const plan(file, schema, std::move(targets));
  std::vector<std::function<void()>> commits;
  std::size_t i = 0;
  model.for_each_parameter(
      [&](std::string const&, auto& parameter) {
        using tensor_type = std::remove_cvref_t<decltype(parameter)>;
        detail::host_tensor_t<tensor_type> host(uninitialized, parameter.extents());
        plan.values(i++, host.data());
        tensor_type const moved = dimtensor::to<typename tensor_type::backend>(host);
        commits.push_back([&parameter, moved] { parameter.assign(moved); });
      },
      "");
  autograd::no_grad const loading;  // as load_parameters: not an operation to record
  for (auto& commit : commits) commit();
}

}  // namespace dimtensor::nn
