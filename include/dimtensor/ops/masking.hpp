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
/// length).
///
/// Three more kinds of mask join the lengths, each as a part of the same
/// value, all of them read together (a key is read when every part allows
/// it):
/// - `key_mask(keep)`: a bool tensor, true where a key is read, over the
///   keys' dim and any of the scores' other dims (`[Batch, KVPairs]` for
///   padding on either side, `[Batch, Queries, KVPairs]` per query);
/// - `additive_mask(a)`: a tensor of the scores' element type added to the
///   scaled scores, over the same dims (`[Heads, Queries, KVPairs]`); a
///   value at or below half the type's lowest, or -inf, masks the key, as
///   transformers' additive masks (finfo.min) do;
/// - `causal<Queries>(m)`: query i of n reads the keys up to i + m − n of
///   m (the last query the last key: with a cache of earlier keys too).
///
/// A masked key's weight is exactly 0; a row whose every key is masked by
/// the key or additive masks gets uniform weights over its keys (as
/// transformers' finfo.min masks give), and a row of valid length 0 (also
/// from causal masking) d2l's uniform weights over all keys.  The masks'
/// dims are checked at compile time against the scores' (the keys' dim
/// last), their extents at run time.
///
/// @code
/// auto m = dt::masking_of<KVPairs>(valid_lens);   // masking<KVPairs, tensor<std::int64_t, Batch>>
/// auto out = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, m);
/// auto left = dt::masking_of<KVPairs>().key_mask(attention_mask);   // [Batch, KVPairs] bool
/// auto dec = dt::causal<Queries>(dt::masking_of<KVPairs>(valid_lens));
/// @endcode

#include <optional>
#include <type_traits>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {
/// A part a masking does not have.
struct no_masking_part {};
/// A masking's part of type @p X (chosen at run time), or none for void.
template <class X>
using masking_part = std::conditional_t<std::is_void_v<X>, no_masking_part, std::optional<X>>;
}  // namespace detail

/// @brief The keys along @p KV a call reads: per row, the first `lengths`
/// ones (valid lengths of tensor type @p L, evaluated), where the key mask
/// `keep` (@p P, bool) is true, under the additive mask `additive` (@p A),
/// and, when `is_causal`, up to the row's position along @p Q.  A void
/// type: no such part; an empty optional: the part is off (chosen at run
/// time).
template <class KV, class L = void, class P = void, class A = void, class Q = void>
struct masking {
  /// The valid lengths' type (void: none).
  using lengths_type = L;
  /// The key mask's type (void: none).
  using keep_type = P;
  /// The additive mask's type (void: none).
  using additive_type = A;
  /// The causal masking's query dim (void: none).
  using causal_dim = Q;

  /// The valid lengths; empty: every key.
  [[no_unique_address]] detail::masking_part<L> lengths;
  /// The key mask (true: read).
  [[no_unique_address]] detail::masking_part<P> keep;
  /// The additive mask.
  [[no_unique_address]] detail::masking_part<A> additive;
  /// Causal along Q (when Q is a dim).
  bool is_causal = false;

  /// This masking with the key mask @p k (bool, true where a key is read;
  /// evaluated): the lengths and the other masks still apply.
  template <Expression M>
  auto key_mask(M const& k) const {
    using keep_t = std::remove_cvref_t<decltype(eval(k))>;
    return masking<KV, L, keep_t, A, Q>{lengths, std::optional<keep_t>(eval(k)), additive, is_causal};
  }
  /// This masking with the additive mask @p a (evaluated).
  template <Expression M>
  auto additive_mask(M const& a) const {
    using add_t = std::remove_cvref_t<decltype(eval(a))>;
    return masking<KV, L, P, add_t, Q>{lengths, keep, std::optional<add_t>(eval(a)), is_causal};
  }
};

/// Whether @p M is a `masking`.
template <class M>
inline constexpr bool is_masking_v = false;
/// A masking is one.
template <class KV, class L, class P, class A, class Q>
inline constexpr bool is_masking_v<masking<KV, L, P, A, Q>> = true;

/// Whether masking @p M has only valid lengths (or nothing): d2l's masking.
template <class M>
inline constexpr bool is_lengths_masking_v = false;
/// A masking without key, additive or causal parts.
template <class KV, class L>
inline constexpr bool is_lengths_masking_v<masking<KV, L>> = true;

/// @brief @p m made causal along @p Queries (when @p on, chosen at run
/// time): query i of n reads the keys up to i + m − n of m.
template <class Queries, class KV, class L, class P, class A, class Q>
  requires(std::is_void_v<Q> || std::is_same_v<Q, Queries>)
masking<KV, L, P, A, Queries> causal(masking<KV, L, P, A, Q> const& m, bool on = true) {
  return {m.lengths, m.keep, m.additive, on};
}

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
  using lens_t = std::remove_cvref_t<decltype(eval(lens))>;
  return masking<KV, lens_t>{std::optional<lens_t>(eval(lens)), {}, {}, false};
}

/// Valid lengths chosen at run time: @p lens when it holds them.
template <class KV, Expression L>
auto masking_of(std::optional<L> const& lens) {
  using lens_t = std::remove_cvref_t<decltype(eval(*lens))>;
  if (!lens) return masking<KV, lens_t>{};
  return masking<KV, lens_t>{std::optional<lens_t>(eval(*lens)), {}, {}, false};
}

/// A masking already made: itself.
template <class KV, class L, class P, class A, class Q>
masking<KV, L, P, A, Q> masking_of(masking<KV, L, P, A, Q> const& m) {
  return m;
}

/// The masking `masking_of<KV>` makes of @p L... (none or one argument).
template <class KV, class... L>
using masking_of_t = decltype(masking_of<KV>(std::declval<L const&>()...));

}  // namespace dimtensor
