#pragma once
/// @file
/// @brief `nn::additive_attention<Queries, KV, QueryFeat, KeyFeat, Hidden, T, Backend>`:
/// d2l's `AdditiveAttention` (Bahdanau), with every layer named by the dims
/// it maps.
///
///     queries [batch…, Queries, QueryFeat]    W_q: QueryFeat → Hidden
///     keys    [batch…, KV, KeyFeat]           W_k: KeyFeat → Hidden
///     values  [batch…, KV, ValueFeat]         w_v: Hidden → Score (extent 1)
///     features = tanh(W_q(q) with KV inserted after Queries + W_k(k) with Queries inserted before KV)
///                                               [batch…, Queries, KV, Hidden]
///     scores = squeeze<Score>(w_v(features))    [batch…, Queries, KV]
///     attention_weights = masked_softmax<KV>(scores, valid_lens)
///     output = contract<KV>(dropout(attention_weights), values)   [batch…, Queries, ValueFeat]
///
/// Queries and keys may have different feature sizes, as in d2l.  The
/// operands' dims may come in any order: keys whose dims are the queries'
/// (KV for Queries) in another order, e.g. time-first [KV, batch…], are
/// permuted to the queries' order by name, and the weighted sum over KV is
/// a contraction by name.
///
/// Where the backend has a kernel for them (the CPU, float and double) the
/// scores are the operation `additive_attention_scores`,
/// Σ_h w_v,h · tanh(q_ih + k_jh) without forming the features, forward and
/// backward (ops/additive_scores.hpp): the features of B16 · Q256 · K256 ·
/// hidden 128 alone are 512 MiB.  Keys past a row's valid length are
/// skipped there.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/ops/additive_scores.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/squeeze.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn {

namespace detail {

/// @brief @p k (projected keys) in the order of the projected queries'
/// dims @p QTags with Queries read as KV, when it has the same dims in
/// another order (time-first keys); otherwise as it is.
template <class Queries, class KV, class QTags, class K>
auto keys_in_queries_order(K const& k) {
  namespace mp = boost::mp11;
  using want = mp::mp_replace<QTags, Queries, KV>;
  using have = meta::tags_of<typename K::specs>;
  if constexpr (!std::is_same_v<want, have> && mp::mp_size<want>::value == mp::mp_size<have>::value &&
                mp::mp_all_of_q<want, mp::mp_bind_front<mp::mp_contains, have>>::value) {
    return permute_to<want>::apply(k);
  } else {
    return k;
  }
}

/// Which check fails first for additive attention over (q, k, v) (the
/// layers check that queries and keys are on the module's backend, the
/// contraction that the values are too).
template <class Queries, class KV, class QueryFeat, class KeyFeat, class Hidden, class Q, class K, class V>
constexpr auto additive_diagnosis() {
  if constexpr (any_ill_formed_v<Q, K, V> || std::is_same_v<Queries, KV>) {  // Queries == KV: reported by the class
    return std::type_identity<ill_formed>{};
  } else {
    return std::type_identity<qkv_diagnosis_t<call::additive_attention, Queries, KV, QueryFeat, KeyFeat, Q, K, V>>{};
  }
}

}  // namespace detail

/// @brief Additive attention (d2l's `AdditiveAttention`): scores
/// w_vᵀ tanh(W_q q + W_k k), masked softmax over KV, weighted sum of values.
///
/// The three layers have no bias, as in d2l; their `state_dict` keys are
/// `W_k.weight`, `W_q.weight`, `w_v.weight`.  The module keeps the last
/// call's weights: `attention_weights<Batch, Queries, KVPairs>()`.
///
/// Trainable: the weights require gradients, and `backward()` from the
/// output fills them (`W_q.weight.grad()`, … — PyTorch's gradients, checked
/// against d2l's by the parity tests) and those of the operands that
/// require them.
///
/// The layers, the operands and the kept weights live on @p Backend.
///
/// @code
/// dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden> attention(
///     KeyFeat(2), QueryFeat(20), Hidden(8), 0.1);
/// attention.eval();
/// auto out = attention(queries, keys, values, valid_lens);   // [Batch, Queries, ValueFeat]
/// @endcode
template <class Queries, class KV, class QueryFeat, class KeyFeat, class Hidden, class T = float,
          class Backend = default_backend>
class additive_attention
    : public attention_base<additive_attention<Queries, KV, QueryFeat, KeyFeat, Hidden, T, Backend>, T, Backend> {
  static_assert(DimTag<Queries> && DimTag<KV> && DimTag<QueryFeat> && DimTag<KeyFeat> && DimTag<Hidden>,
                "dimtensor: additive_attention<Queries, KV, QueryFeat, KeyFeat, Hidden, T> needs dimension tags "
                "declared with DIMTENSOR_DIM");
  static_assert(!std::is_same_v<Queries, KV>, "dimtensor: additive_attention needs Queries and KV to differ");

 public:
  /// The element type.
  using value_type = T;
  /// The backend of the layers, the operands and the kept weights.
  using backend = Backend;
  /// The module's name in its errors.
  static constexpr std::string_view module_name = "additive_attention";

  // d2l's members, in its order (the state_dict keys W_k.weight, W_q.weight,
  // w_v.weight): W_k maps KeyFeat to Hidden, W_q QueryFeat to Hidden, w_v
  // Hidden to Score (extent 1), all without bias; dropout on the weights.
  BOOST_HANA_DEFINE_STRUCT(additive_attention, (linear<KeyFeat, Hidden, T, Backend>, W_k),
                           (linear<QueryFeat, Hidden, T, Backend>, W_q), (linear<Hidden, Score, T, Backend>, w_v),
                           (nn::dropout, dropout));

  /// d2l's `AdditiveAttention(key_size, query_size, num_hiddens, dropout)`:
  /// the layers drawn from @p gen in d2l's order (W_k, W_q, w_v), dropout
  /// seeded with @p dropout_seed.
  additive_attention(KeyFeat key_size, QueryFeat query_size, Hidden num_hiddens, double p, generator& gen,
                     std::uint64_t dropout_seed = generator::default_seed)
      : W_k(key_size, num_hiddens, false, gen),
        W_q(query_size, num_hiddens, false, gen),
        w_v(num_hiddens, Score(1), false, gen),
        dropout(p, dropout_seed) {}
  /// As above, drawing the layers from `default_generator()`.
  additive_attention(KeyFeat key_size, QueryFeat query_size, Hidden num_hiddens, double p = 0)
      : additive_attention(key_size, query_size, num_hiddens, p, default_generator()) {}

  /// @brief The attention output for @p queries, @p keys, @p values and
  /// @p valid_lens (none, a lengths tensor, or a `std::optional` of one).
  ///
  /// Compile errors name the call and operand (`attention_operand_lacks_dim`,
  /// `attention_operand_has_foreign_dim`) and typed lengths of another dim
  /// than KV (`valid_lens_measure_another_dim`); the layers, broadcasting
  /// and the contraction check the rest.
  template <class Q, class K, class V, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
    if constexpr (rejects(first_diagnosis(
                      detail::additive_diagnosis<Queries, KV, QueryFeat, KeyFeat, Hidden, expr_t<Q>, expr_t<K>,
                                                 expr_t<V>>(),
                      std::type_identity<detail::lens_diagnosis_t<call::additive_attention, KV, L...>>{}))) {
      return ill_formed{};
    } else {
      return checked<call::additive_attention>(
          [&](auto const& queries, auto const& keys, auto const& values, auto const&... valid_lens) {
            using feature_dims = boost::mp11::mp_list<QueryFeat, KeyFeat>;
            auto const masking = masking_of<KV>(valid_lens...);  // the lengths' one form below this call
            detail::check_layer_input<QueryFeat>(module_name, queries, "queries", W_q.in_features(), "W_q");
            detail::check_layer_input<KeyFeat>(module_name, keys, "keys", W_k.in_features(), "W_k");
            detail::check_qkv_extents<Q, K, V, feature_dims, feature_dims>(module_name, queries, keys, values);
            auto const q = W_q(queries);  // [batch…, Queries, Hidden]
            // [batch…, KV, Hidden], in the queries' order.
            auto const k =
                detail::keys_in_queries_order<Queries, KV, meta::tags_of<typename decltype(q)::specs>>(
                    W_k(keys));
            constexpr std::size_t after_queries =
                meta::index_of_v<Queries, typename decltype(q)::specs> + 1;
            constexpr std::size_t at_kv = meta::index_of_v<KV, typename decltype(k)::specs>;
            using plan = additive_plan<Queries, KV, Hidden, typename decltype(q)::specs,
                                                          typename decltype(k)::specs>;
            if constexpr (plan::ok && has_additive_scores_kernel<Backend, T>) {
              // The backend's scores kernel: no [batch…, Queries, KV, Hidden] features (ops/additive_scores.hpp).
              auto const scores = additive_attention_scores<Queries, KV, Hidden>(q, k, w_v.weight, masking);
              using composed_t = decltype(dimtensor::eval(
                  squeeze<Score>(w_v(tanh(unsqueeze<KV, after_queries>(q) + unsqueeze<Queries, at_kv>(k))))));
              static_assert(std::is_same_v<std::remove_cvref_t<decltype(scores)>, composed_t>,
                            "dimtensor internal: the scores operation's type differs from the composed scores'");
              return this->template attend<KV>(scores, values, masking);
            } else {
              // Broadcast q over KV and k over Queries: [batch…, Queries, KV, Hidden], lazy until w_v.
              auto const features = tanh(unsqueeze<KV, after_queries>(q) + unsqueeze<Queries, at_kv>(k));
              auto const scores = squeeze<Score>(w_v(features));
              return this->template attend<KV>(scores, values, masking);
            }
          },
          queries, keys, values, valid_lens...);
    }
  }
};

}  // namespace dimtensor::nn
