#pragma once
/// @file
/// @brief `nn::multi_head_attention<Queries, KV, Hidden, QueryFeat, KeyFeat,
/// ValueFeat, T, Backend>`: d2l's `MultiHeadAttention`, in d2l's formulation
/// (`transpose_qkv` / `transpose_output`, batch and heads merged) and in the
/// named one (heads a dim of their own), which give the same numbers.
///
/// Named form (`operator()`):
///
///     W_q(queries) [Batch, Queries, Hidden] → split → [Batch, Queries, Heads, HeadFeat]
///     W_k(keys), W_v(values)                → split → [Batch, KV, Heads, HeadFeat]
///     scores [Batch, Queries, Heads, KV]: contract<HeadFeat>, Batch and Heads are batch dims
///     valid_lens [Batch] or [Batch, Queries] broadcast by name over Heads
///     output: contract<KV> → [Batch, Queries, Heads, HeadFeat] → merge → [Batch, Queries, Hidden] → W_o
///
/// d2l form (`forward_d2l`):
///
///     transpose_qkv: [Batch, Queries, Hidden] → [BatchHeads, Queries, HeadFeat]
///     valid_lens repeated per head: repeat_interleave<Batch, BatchHeads>
///     transpose_output: [BatchHeads, Queries, HeadFeat] → [Batch, Queries, Hidden] → W_o

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/nn/attention/dot_product_attention.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/merge.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/repeat_interleave.hpp>
#include <dimtensor/ops/split.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn {

namespace detail {

/// The tags of L with Moved taken out and put back right after After.
template <class L, class Moved, class After>
using move_after = boost::mp11::mp_insert_c<
    boost::mp11::mp_remove<L, Moved>,
    meta::index_of_v<After, boost::mp11::mp_remove<L, Moved>> + 1, Moved>;

/// The tags of L with Moved taken out and put back right before Before.
template <class L, class Moved, class Before>
using move_before = boost::mp11::mp_insert_c<boost::mp11::mp_remove<L, Moved>,
                                             meta::index_of_v<Before, boost::mp11::mp_remove<L, Moved>>,
                                             Moved>;

/// A head count given as `Heads(n)`, `Heads::fixed<N>{}` or a plain number, as a number.
inline index_t head_count(index_t h) { return h; }
inline index_t head_count(Heads h) { return h.value; }
template <index_t N>
index_t head_count(fixed<Heads, N>) {
  return N;
}

/// Which check fails first for transpose_qkv / transpose_output on X: X
/// must have the dims of Needed and none of Absent (a diagnostic class, or void).
template <class Call, class X, class Needed, class Absent>
constexpr auto reshape_diagnosis_of() {
  namespace mp = boost::mp11;
  using specs = typename X::specs;
  using missing = dims_lacking<specs, Needed>;
  using present = dims_having<specs, Absent>;
  if constexpr (!mp::mp_empty<missing>::value) {
    if constexpr (std::is_same_v<Call, call::transpose_output> && std::is_same_v<mp::mp_front<missing>, BatchHeads>) {
      return std::type_identity<diagnostic::transpose_output_of_unmerged<Call, BatchHeads, specs>>{};
    } else {
      return std::type_identity<diagnostic::not_a_dimension_of<Call, mp::mp_front<missing>, specs>>{};
    }
  } else if constexpr (!mp::mp_empty<present>::value) {
    return std::type_identity<diagnostic::already_a_dimension_of<Call, mp::mp_front<present>, specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// reshape_diagnosis_of, or `ill_formed` for an ill_formed X.
template <class Call, class X, class Needed, class Absent>
constexpr auto reshape_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else {
    return reshape_diagnosis_of<Call, expr_t<X>, Needed, Absent>();
  }
}

/// What is wrong with transpose_qkv<Batch, Hidden>(x): reshape_diagnosis,
/// then Batch after Hidden in x (the template arguments swapped: d2l's
/// X is [batch, steps, num_hiddens]); a diagnostic class, `ill_formed` or void.
template <class Batch, class Hidden, class X>
constexpr auto transpose_qkv_diagnosis() {
  using first = typename decltype(reshape_diagnosis<call::transpose_qkv, X, boost::mp11::mp_list<Batch, Hidden>,
                                                    boost::mp11::mp_list<Heads, HeadFeat, BatchHeads>>())::type;
  if constexpr (!std::is_void_v<first>) {
    return std::type_identity<first>{};
  } else {
    using specs = typename expr_t<X>::specs;
    if constexpr (meta::index_of_v<Batch, specs> > meta::index_of_v<Hidden, specs>) {
      return std::type_identity<diagnostic::transpose_qkv_batch_after_hidden<call::transpose_qkv, Batch, Hidden, specs>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

inline void check_heads(std::string_view call, std::string_view hidden, index_t num_hiddens, index_t num_heads) {
  if (num_heads <= 0 || num_hiddens % num_heads != 0) {
    throw value_error(std::string(call) + ": " + std::to_string(num_heads) + " heads cannot split " +
                      std::string(hidden) + "=" + std::to_string(num_hiddens) +
                      (num_heads <= 0 ? " (the number of heads must be positive)"
                                      : " (the number of heads must divide it)"));
  }
}

}  // namespace detail

/// @brief d2l's `transpose_qkv`: [Batch, L, Hidden] → [BatchHeads, L, HeadFeat],
/// each head's slice of Hidden becoming its own batch entry (batch-major:
/// entry b·heads + h).
///
/// Works for Batch and Hidden anywhere in x's dims, Batch before Hidden
/// (the other order is the compile error `transpose_qkv_batch_after_hidden`:
/// the template arguments swapped); the merged dim takes Batch's place and
/// HeadFeat takes Hidden's.  The head count is a number
/// (as in d2l), `Heads(n)` or `Heads::fixed<N>{}`.  `value_error` when the
/// heads do not divide Hidden's extent.
template <class Batch, class Hidden, class X, class Count>
  requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
auto transpose_qkv(X const& x, Count const& num_heads) {
  if constexpr (rejects(detail::transpose_qkv_diagnosis<Batch, Hidden, X>())) {
    return ill_formed{};
  } else if constexpr (std::is_integral_v<Count>) {
    return transpose_qkv<Batch, Hidden>(x, Heads(static_cast<index_t>(num_heads)));
  } else {
    auto const parts = split<Hidden, Heads, HeadFeat>(dimtensor::eval(x), num_heads);
    using split_tags = meta::tags_of<typename decltype(parts)::specs>;
    auto const heads_after_batch = detail::permute_to<detail::move_after<split_tags, Heads, Batch>>::apply(parts);
    return merge<Batch, Heads, BatchHeads>(heads_after_batch);
  }
}

/// @brief d2l's `transpose_output`, the inverse of `transpose_qkv`:
/// [BatchHeads, L, HeadFeat] → [Batch, L, Hidden].
///
/// The head count is a number (as in d2l), `Heads(n)` or
/// `Heads::fixed<N>{}`.  x without BatchHeads (heads not merged into the
/// batch) is a compile error (`transpose_output_of_unmerged`); `value_error`
/// when the heads do not divide BatchHeads' extent.
template <class Batch, class Hidden, class X, class Count>
  requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
auto transpose_output(X const& x, Count const& heads) {
  if constexpr (rejects(detail::reshape_diagnosis<call::transpose_output, X, boost::mp11::mp_list<BatchHeads, HeadFeat>,
                                                  boost::mp11::mp_list<Batch, Hidden, Heads>>())) {
    return ill_formed{};
  } else {
    return checked<call::transpose_output>(
        [&](auto const& x) {
          index_t const num_heads = detail::head_count(heads);
          auto const t = dimtensor::eval(x);
          index_t const merged = t.template extent<BatchHeads>();
          if (num_heads <= 0 || merged % num_heads != 0) {
            throw value_error("transpose_output: " + std::to_string(num_heads) +
                              " heads do not divide BatchHeads=" + std::to_string(merged));
          }
          auto const parts = split<BatchHeads, Batch, Heads>(t, Heads(num_heads));  // Batch=0 too
          using split_tags = meta::tags_of<typename decltype(parts)::specs>;
          auto const heads_before_feat =
              detail::permute_to<detail::move_before<split_tags, Heads, HeadFeat>>::apply(parts);
          return merge<Heads, HeadFeat, Hidden>(heads_before_feat);
        },
        x);
  }
}

/// @brief Multi-head attention (d2l's `MultiHeadAttention`): W_q, W_k, W_v
/// map queries, keys and values to Hidden, which is split into heads;
/// scaled dot-product attention runs per head; the heads are joined and
/// mapped by W_o.
///
/// Template arguments: the queries' sequence dim, the keys' and values'
/// (KV), the hidden dim, and the three input feature dims (by default all
/// Hidden, as in the chapter's `MultiHeadAttention(num_hiddens, num_hiddens,
/// num_hiddens, num_hiddens, …)`).  `state_dict` keys: `W_q.weight`,
/// `W_k.weight`, `W_v.weight`, `W_o.weight` (and `.bias` with bias).
///
/// Trainable: the four layers' parameters require gradients, which
/// `backward()` from the output fills, the same in both forms.
///
/// `operator()` is the named form, `forward_d2l` d2l's; both keep their
/// attention weights in `attention`: `attention.attention_weights<Batch,
/// Queries, Heads, KVPairs>()` after the first, `<BatchHeads, Queries,
/// KVPairs>` after the second.  The layers, the operands and the kept
/// weights live on @p Backend.
///
/// @code
/// dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(
///     Hidden(100), Hidden(100), Hidden(100), Hidden(100), dt::nn::Heads(5), 0.5);
/// attention.eval();
/// auto out = attention(X, Y, Y, valid_lens);   // [Batch, Queries, Hidden]
/// @endcode
template <class Queries, class KV, class Hidden, class QueryFeat = Hidden, class KeyFeat = QueryFeat,
          class ValueFeat = KeyFeat, class T = float, class Backend = default_backend>
class multi_head_attention
    : public module<multi_head_attention<Queries, KV, Hidden, QueryFeat, KeyFeat, ValueFeat, T, Backend>> {
  static_assert(DimTag<Queries> && DimTag<KV> && DimTag<Hidden> && DimTag<QueryFeat> && DimTag<KeyFeat> &&
                    DimTag<ValueFeat>,
                "dimtensor: multi_head_attention<Queries, KV, Hidden, QueryFeat, KeyFeat, ValueFeat, T> needs "
                "dimension tags declared with DIMTENSOR_DIM");

 public:
  /// The element type.
  using value_type = T;
  /// The backend of the layers, the operands and the kept weights.
  using backend = Backend;

  // d2l's members, in its order: the per-head scaled dot-product
  // attention (with the dropout), then W_q (QueryFeat → Hidden), W_k
  // (KeyFeat → Hidden), W_v (ValueFeat → Hidden), W_o (Hidden → Hidden).
  BOOST_HANA_DEFINE_STRUCT(multi_head_attention, (dot_product_attention<Queries, KV, HeadFeat, T, Backend>, attention),
                           (linear<QueryFeat, Hidden, T, Backend>, W_q), (linear<KeyFeat, Hidden, T, Backend>, W_k),
                           (linear<ValueFeat, Hidden, T, Backend>, W_v), (linear<Hidden, Hidden, T, Backend>, W_o));

  /// @brief d2l's `MultiHeadAttention(key_size, query_size, value_size,
  /// num_hiddens, num_heads, dropout, bias)`, the layers drawn from @p gen
  /// in d2l's order (W_q, W_k, W_v, W_o).
  ///
  /// `value_error` when @p num_heads does not divide @p num_hiddens.  With
  /// both given statically (`Hidden::fixed<100>{}`, `Heads::fixed<3>{}`)
  /// that is a compile error (`heads_do_not_divide`).
  template <class HiddenSize, class HeadCount>
  multi_head_attention(KeyFeat key_size, QueryFeat query_size, ValueFeat value_size, HiddenSize num_hiddens,
                       HeadCount num_heads, double p, bool bias, generator& gen,
                       std::uint64_t dropout_seed = generator::default_seed)
      : attention(p, dropout_seed),
        W_q(query_size, hidden_of(num_hiddens), bias, gen),
        W_k(key_size, hidden_of(num_hiddens), bias, gen),
        W_v(value_size, hidden_of(num_hiddens), bias, gen),
        W_o(hidden_of(num_hiddens), hidden_of(num_hiddens), bias, gen),
        num_heads_(detail::head_count(num_heads)) {
    check_static_divisibility<HiddenSize, HeadCount>();
    detail::check_heads("multi_head_attention", dim_name_v<Hidden>, hidden_of(num_hiddens).value, num_heads_);
  }
  /// As above, without bias unless @p bias, drawing from `default_generator()`.
  template <class HiddenSize, class HeadCount>
  multi_head_attention(KeyFeat key_size, QueryFeat query_size, ValueFeat value_size, HiddenSize num_hiddens,
                       HeadCount num_heads, double p = 0, bool bias = false)
      : multi_head_attention(key_size, query_size, value_size, num_hiddens, num_heads, p, bias,
                             default_generator()) {}

  /// The number of heads.
  index_t num_heads() const noexcept { return num_heads_; }

  /// @brief The parts of the named form, for a caller that keeps the
  /// keys' and values' projections (a decoder's cache): W_q(x) split into
  /// [..., Heads, HeadFeat].
  template <class X>
  auto query_heads(X const& x) const {
    return split<Hidden, Heads, HeadFeat>(W_q(x), Heads(num_heads_));
  }
  /// W_k(x) split into heads.
  template <class X>
  auto key_heads(X const& x) const {
    return split<Hidden, Heads, HeadFeat>(W_k(x), Heads(num_heads_));
  }
  /// W_v(x) split into heads.
  template <class X>
  auto value_heads(X const& x) const {
    return split<Hidden, Heads, HeadFeat>(W_v(x), Heads(num_heads_));
  }
  /// @brief A cache's step: W_k(x) and W_v(x) in heads appended to
  /// @p keys and @p values along KV (or made them, when empty).  KVHeads is
  /// the cache's tensor type ([..., KV, Heads, HeadFeat]).
  template <class KVHeads, class X>
  void append_key_value_heads(X const& x, std::optional<KVHeads>& keys, std::optional<KVHeads>& values) const {
    KVHeads k = key_heads(x);
    KVHeads v = value_heads(x);
    if (keys) {
      k = KVHeads(concat<KV>(*keys, k));
      v = KVHeads(concat<KV>(*values, v));
    }
    keys = std::move(k);
    values = std::move(v);
  }
  /// The rest of the named form on projected heads: W_o of the heads'
  /// attention merged, each query attending as @p valid_lens say.
  template <class Q, class K, class V, class... L>
    requires(sizeof...(L) <= 1)
  auto attend_heads(Q const& q, K const& k, V const& v, L const&... valid_lens) {
    return W_o(merge<Heads, HeadFeat, Hidden>(attention(q, k, v, valid_lens...)));
  }

  /// @brief The named form: heads a dim of their own, valid_lens ([Batch]
  /// or [Batch, Queries], or none) broadcast over them by name.
  template <class Q, class K, class V, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
    if constexpr (rejects(first_diagnosis(
                      operands_diagnosis<Q, K, V>(),
                      std::type_identity<detail::lens_diagnosis_t<call::multi_head_attention, KV, L...>>{}))) {
      return ill_formed{};
    } else {
      return checked<call::multi_head_attention>(
          [&](auto const& queries, auto const& keys, auto const& values, auto const&... valid_lens) {
            check_operands(queries, keys, values);
            return named_form(queries, keys, values, valid_lens...);
          },
          queries, keys, values, valid_lens...);
    }
  }

  /// @brief d2l's form: `transpose_qkv` on the projections (Batch is the
  /// queries' first dim, as d2l's `X.shape[0]`), valid_lens repeated per
  /// head along Batch, `transpose_output` on the result.
  template <class Q, class K, class V, class... L>
    requires(sizeof...(L) <= 1)
  auto forward_d2l(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
    if constexpr (rejects(first_diagnosis(
                      d2l_diagnosis<Q, K, V>(),
                      std::type_identity<detail::lens_diagnosis_t<call::multi_head_attention, KV, L...>>{}))) {
      return ill_formed{};
    } else {
      return checked<call::multi_head_attention>(
          [&](auto const& queries, auto const& keys, auto const& values, auto const&... valid_lens) {
            check_operands(queries, keys, values);
            return d2l_form(queries, keys, values, valid_lens...);
          },
          queries, keys, values, valid_lens...);
    }
  }

 private:
  // The operands' run-time extents against the projections and each other,
  // named in the error ("multi_head_attention: keys: …").
  template <class Q, class K, class V>
  void check_operands(Q const& queries, K const& keys, V const& values) const {
    using feature_dims = boost::mp11::mp_list<QueryFeat, KeyFeat, ValueFeat>;
    detail::check_layer_input<QueryFeat>("multi_head_attention", queries, "queries", W_q.in_features(), "W_q");
    detail::check_layer_input<KeyFeat>("multi_head_attention", keys, "keys", W_k.in_features(), "W_k");
    detail::check_layer_input<ValueFeat>("multi_head_attention", values, "values", W_v.in_features(), "W_v");
    detail::check_qkv_extents<Q, K, V, feature_dims, feature_dims>("multi_head_attention", queries, keys, values);
  }

  template <class Q, class K, class V, class... L>
  auto named_form(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
    auto const heads = Heads(num_heads_);
    auto const q = split<Hidden, Heads, HeadFeat>(W_q(queries), heads);
    auto const k = split<Hidden, Heads, HeadFeat>(W_k(keys), heads);
    auto const v = split<Hidden, Heads, HeadFeat>(W_v(values), heads);
    return W_o(merge<Heads, HeadFeat, Hidden>(attention(q, k, v, valid_lens...)));
  }

  template <class Q, class K, class V, class... L>
  auto d2l_form(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
    if constexpr (any_ill_formed_v<L...>) {
      return ill_formed{};
    } else {
      using batch = dim_of<boost::mp11::mp_front<typename expr_t<Q>::specs>>;
      auto const q = transpose_qkv<batch, Hidden>(W_q(queries), Heads(num_heads_));
      auto const k = transpose_qkv<batch, Hidden>(W_k(keys), Heads(num_heads_));
      auto const v = transpose_qkv<batch, Hidden>(W_v(values), Heads(num_heads_));
      auto const output = attention(q, k, v, repeated_lens<batch>(valid_lens)...);
      return W_o(transpose_output<batch, Hidden>(output, num_heads_));
    }
  }

  /// Which check of the operands fails first (queries need Queries and
  /// QueryFeat, keys KV and KeyFeat, values KV and ValueFeat).
  template <class Q, class K, class V>
  static constexpr auto operands_diagnosis() {
    namespace mp = boost::mp11;
    using call_t = call::multi_head_attention;
    if constexpr (any_ill_formed_v<Q, K, V>) {
      return std::type_identity<ill_formed>{};
    } else {
      return first_diagnosis(
          detail::operand_diagnosis<call_t, operand::queries, expr_t<Q>, mp::mp_list<Queries, QueryFeat>,
                                    mp::mp_list<KV>>(),
          detail::operand_diagnosis<call_t, operand::keys, expr_t<K>, mp::mp_list<KV, KeyFeat>, mp::mp_list<Queries>>(),
          detail::operand_diagnosis<call_t, operand::values, expr_t<V>, mp::mp_list<KV, ValueFeat>,
                                    mp::mp_list<Queries>>());
    }
  }

  /// operands_diagnosis, then d2l's form's own: the queries' first dim is
  /// the batch, which keys and values must have too.
  template <class Q, class K, class V>
  static constexpr auto d2l_diagnosis() {
    namespace mp = boost::mp11;
    using call_t = call::multi_head_attention;
    using base = typename decltype(operands_diagnosis<Q, K, V>())::type;
    if constexpr (!std::is_void_v<base>) {
      return std::type_identity<base>{};
    } else {
      using specs = typename expr_t<Q>::specs;
      using first = dim_of<mp::mp_front<specs>>;
      if constexpr (std::is_same_v<first, Queries> || std::is_same_v<first, QueryFeat>) {
        return std::type_identity<diagnostic::d2l_form_needs_batch_first<call_t, first, specs>>{};
      } else {
        return first_diagnosis(
            detail::operand_diagnosis<call_t, operand::keys, expr_t<K>, mp::mp_list<first>, mp::mp_list<>>(),
            detail::operand_diagnosis<call_t, operand::values, expr_t<V>, mp::mp_list<first>, mp::mp_list<>>());
      }
    }
  }

  index_t num_heads_;

  static Hidden hidden_of(Hidden h) { return h; }
  template <index_t N>
  static Hidden hidden_of(fixed<Hidden, N>) {
    return Hidden(N);
  }

  template <class HiddenSize, class HeadCount>
  static constexpr auto check_static_divisibility() {
    if constexpr (is_static_v<HiddenSize> && is_static_v<HeadCount>) {
      if constexpr (HeadCount::value <= 0 || HiddenSize::value % HeadCount::value != 0) {
        (void)diagnostic::fire<
            diagnostic::heads_do_not_divide<call::multi_head_attention, Hidden, HiddenSize::value, HeadCount::value>>;
      }
    }
  }

  template <class Batch, class L>
  auto repeated_lens(L const& lens) const {
    return repeat_interleave<Batch, BatchHeads>(lens, num_heads_);
  }
  template <class Batch, class L>
  auto repeated_lens(std::optional<L> const& lens) const {
    using repeated = decltype(repeat_interleave<Batch, BatchHeads>(*lens, num_heads_));
    return lens ? std::optional<repeated>(repeat_interleave<Batch, BatchHeads>(*lens, num_heads_))
                : std::optional<repeated>();
  }
  template <class Batch>
  std::nullopt_t repeated_lens(std::nullopt_t) const {
    return std::nullopt;
  }
};

}  // namespace dimtensor::nn
