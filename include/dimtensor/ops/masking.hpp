#pragma once
/// @file
/// @brief `masking<KV, L>`: which keys along KV an attention call reads,
/// as one value, and `masking_of<KV>(valid_lens…)`, which makes it from
/// every form the calls take.
///
/// The attention calls take d2l's `valid_lens` in four spellings: nothing,
/// `std::nullopt`, a lengths tensor (int32 or int64, over a leading part of
/// the scores' dims without KV: d2l's 1-D `[Batch]` and 2-D `[Batch,
/// Queries]`) or a `std::optional` of one, chosen at run time.  A module
/// turns them into one `masking` once, at its boundary; below it the
/// operations (`scaled_dot_product_attention`, `additive_attention_scores`,
/// `masked_softmax`) take that value, and turn it into the one form every
/// kernel reads (`kernel::row_lengths`: a pointer and how many rows share a
/// length).  Another kind of mask (boolean, additive, causal) is another
/// specialization of `masking`, read by the same operations.
///
/// @code
/// auto m = dt::masking_of<KVPairs>(valid_lens);   // masking<KVPairs, tensor<std::int64_t, Batch>>
/// auto out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, m);
/// @endcode

#include <optional>
#include <type_traits>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// @brief The keys along @p KV a call reads: per row, the first
/// `lengths` ones (valid lengths of tensor type @p L, evaluated), or every
/// key when `lengths` is empty (chosen at run time).
template <class KV, class L = void>
struct masking {
  /// The valid lengths; empty: every key.
  std::optional<L> lengths;
};

/// @brief Every key along @p KV (no lengths, known at compile time).
template <class KV>
struct masking<KV, void> {};

/// Whether @p M is a `masking`.
template <class M>
inline constexpr bool is_masking_v = false;
/// A masking is one.
template <class KV, class L>
inline constexpr bool is_masking_v<masking<KV, L>> = true;

/// No valid lengths: every key.
template <class KV>
masking<KV> masking_of() {
  return {};
}

/// No valid lengths, spelled `std::nullopt` (d2l's `valid_lens=None`).
template <class KV>
masking<KV> masking_of(std::nullopt_t) {
  return {};
}

/// Valid lengths @p lens (evaluated: a tensor keeps its handle).
template <class KV, Expression L>
auto masking_of(L const& lens) {
  return masking<KV, std::remove_cvref_t<decltype(eval(lens))>>{eval(lens)};
}

/// Valid lengths chosen at run time: @p lens when it holds them.
template <class KV, Expression L>
auto masking_of(std::optional<L> const& lens) {
  using lens_t = std::remove_cvref_t<decltype(eval(*lens))>;
  if (!lens) return masking<KV, lens_t>{};
  return masking<KV, lens_t>{eval(*lens)};
}

/// A masking already made: itself.
template <class KV, class L>
masking<KV, L> masking_of(masking<KV, L> const& m) {
  return m;
}

/// The masking `masking_of<KV>` makes of @p L... (none or one argument).
template <class KV, class... L>
using masking_of_t = decltype(masking_of<KV>(std::declval<L const&>()...));

}  // namespace dimtensor
