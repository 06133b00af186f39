#pragma once
/// @file
/// @brief `nn::embedding<Vocab, Feat, T, Backend>`: PyTorch's `nn.Embedding`,
/// named by the dims it maps.
///
/// `embedding<Vocab, Embed>` maps a tensor of token indices of any dims to
/// their feature vectors, Embed appended: [Batch, Steps] → [Batch, Steps,
/// Embed] (d2l's `self.embedding(X)` in its seq2seq encoder and decoder).
/// The lookup is `index_select<Vocab>` of the weight, so its gradient is that
/// of index_select: the rows of the indices, added up where an index repeats.

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/index_select.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::embedding<Vocab, Feat>::operator()`.
struct embedding : named<"embedding"> {};
}  // namespace call

namespace diagnostic {

/// `embedding<Vocab, Feat>` applied to indices of dims @p Dims, which
/// already have Feat or Vocab.
template <class Vocab, class Feat, class Dims>
struct embedding_indices_have_dim {
  static_assert(always_false<Vocab, Feat, Dims>,
                "dimtensor: embedding<Vocab, Feat> appends Feat to the dims of the indices, which must have neither "
                "Vocab nor Feat (see embedding_indices_have_dim<Vocab, Feat, dims of the indices> above)");
};

}  // namespace diagnostic

namespace nn {

namespace detail {

/// What is wrong with looking up indices of type I in embedding<Vocab, Feat,
/// T, Backend>.
template <class Vocab, class Feat, class Backend, class I>
constexpr auto embedding_diagnosis() {
  if constexpr (is_ill_formed_v<I>) {
    return std::type_identity<ill_formed>{};
  } else {
    using X = expr_t<I>;
    using idx_t = typename X::value_type;
    if constexpr (!std::is_same_v<typename X::backend, Backend>) {
      return std::type_identity<diagnostic::backends_differ<call::embedding, typename X::backend, Backend>>{};
    } else if constexpr (!std::is_same_v<idx_t, std::int32_t> && !std::is_same_v<idx_t, std::int64_t>) {
      return std::type_identity<diagnostic::indices_not_integer<call::embedding, idx_t>>{};
    } else if constexpr (meta::contains_v<Feat, typename X::specs> ||
                         meta::contains_v<Vocab, typename X::specs>) {
      return std::type_identity<diagnostic::embedding_indices_have_dim<Vocab, Feat, typename X::specs>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

}  // namespace detail

/// @brief An embedding's options, by name: `{.padding_idx = 0}`.
struct embedding_options {
  /// The row that padding tokens look up (`nn.Embedding(..., padding_idx=)`):
  /// drawn as zeros and never given a gradient; a negative value counts
  /// from the end, as PyTorch's.  None: every row trains.
  std::optional<index_t> padding_idx = {};
};

/// @brief `nn.Embedding(num_embeddings, embedding_dim)`: a table of Vocab
/// rows of Feat features, looked up by index.
///
/// `weight` is [Vocab, Feat] (PyTorch's layout and `state_dict` key), drawn
/// from N(0, 1) as PyTorch draws it (on the host, so a seed gives the same
/// table on every backend), and requires gradients.  The table lives on
/// @p Backend, and so must the indices.
template <class Vocab, class Feat, class T = float, class Backend = default_backend>
class embedding : public module<embedding<Vocab, Feat, T, Backend>> {
  static_assert(DimTag<Vocab> && DimTag<Feat>,
                "dimtensor: embedding<Vocab, Feat, T> needs dimension tags declared with DIMTENSOR_DIM");
  static_assert(std::is_floating_point_v<T>, "dimtensor: embedding<Vocab, Feat, T> needs a floating-point T");

 public:
  /// The backend of the table and of the indices it looks up.
  using backend = Backend;
  /// The weight's type, [Vocab, Feat].
  using weight_type = basic_tensor<Backend, T, Vocab, Feat>;

  // The table `weight`, [Vocab, Feat]: the module's one parameter (nn/module.hpp).
  BOOST_HANA_DEFINE_STRUCT(embedding, (weight_type, weight));

  /// A table of @p vocab_size rows of @p features, drawn from @p gen
  /// (N(0, 1)).  `value_error` unless both extents are positive.
  embedding(Vocab vocab_size, Feat features, generator& gen) {
    if (vocab_size.value <= 0 || features.value <= 0) {
      throw value_error("embedding: extents must be positive, got " + std::string(dim_name_v<Vocab>) + " " +
                        std::to_string(vocab_size.value) + " and " + std::string(dim_name_v<Feat>) + " " +
                        std::to_string(features.value));
    }
    weight = dimtensor::to<Backend>(randn<T>(gen, vocab_size, features));
    weight.requires_grad_();
  }
  /// As above, drawing from `default_generator()`.
  embedding(Vocab vocab_size, Feat features) : embedding(vocab_size, features, default_generator()) {}
  /// With @p options (the padding row); drawn from @p gen as above, the
  /// padding row then zeroed.  `value_error` for a padding row outside
  /// [-vocab_size, vocab_size).
  embedding(Vocab vocab_size, Feat features, embedding_options options, generator& gen)
      : embedding(vocab_size, features, gen) {
    if (options.padding_idx) {
      index_t const p = *options.padding_idx;
      if (p < -vocab_size.value || p >= vocab_size.value) {
        throw value_error("embedding: padding_idx " + std::to_string(p) + " outside the " +
                          std::to_string(vocab_size.value) + " rows of " + std::string(dim_name_v<Vocab>));
      }
      padding_idx_ = p < 0 ? p + vocab_size.value : p;
      auto host = dimtensor::to<cpu>(weight.detach());
      for (index_t j = 0; j < features.value; ++j) host.data()[padding_idx_ * features.value + j] = T(0);
      weight = dimtensor::to<Backend>(host);
      weight.requires_grad_();
    }
  }
  /// As above, drawing from `default_generator()`.
  embedding(Vocab vocab_size, Feat features, embedding_options options)
      : embedding(vocab_size, features, options, default_generator()) {}

  /// The extent of Vocab.
  index_t num_embeddings() const { return weight.extents()[0]; }
  /// The extent of Feat.
  index_t embedding_dim() const { return weight.extents()[1]; }
  /// The padding row, or none.
  std::optional<index_t> padding_idx() const {
    return padding_idx_ < 0 ? std::nullopt : std::optional<index_t>(padding_idx_);
  }

  /// @brief The rows of the weight the @p indices name: the indices' dims
  /// with Feat appended.
  ///
  /// The indices live on Backend (`backends_differ` otherwise), hold
  /// std::int32_t or std::int64_t (`indices_not_integer`
  /// otherwise) and have neither Vocab nor Feat
  /// (`embedding_indices_have_dim`); an index outside [0, num_embeddings())
  /// is a `value_error` naming the call, the index and Vocab ("embedding:
  /// index_select: …").  The entries that look up the padding row add
  /// nothing to the weight's gradient.
  template <class I>
    requires(Expression<expr_t<I>> || is_ill_formed_v<I>)
  auto operator()(I const& indices) const {
    if constexpr (rejects(detail::embedding_diagnosis<Vocab, Feat, Backend, I>())) {
      return ill_formed{};
    } else {
      return checked<call::embedding>(
          [&](auto const& indices) { return index_select<Vocab>(weight, indices, padding_index{padding_idx_}); },
          indices);
    }
  }

 private:
  index_t padding_idx_ = -1;
};

}  // namespace nn
}  // namespace dimtensor
