#pragma once
/// @file
/// @brief `nn::dot_product_attention<Queries, KV, Feat, T, Backend>`: d2l's
/// `DotProductAttention` (scaled dot-product attention), by dim name.
///
/// d2l writes `bmm(queries, keys.transpose(1, 2)) / sqrt(d)`, a masked
/// softmax along the last axis and `bmm(dropout(weights), values)`.  Here
/// the same three steps are named contractions: Feat is summed over for the
/// scores, KV for the output, and every other dim the operands share is a
/// batch dim — so one module serves d2l's [Batch, Queries, Feat] operands,
/// multi-head attention's [BatchHeads, Queries, HeadFeat] and the named
/// [Batch, Queries, Heads, HeadFeat] alike.
///
///     queries [batch…, Queries, Feat]   keys [batch…, KV, Feat]   values [batch…, KV, ValueFeat]
///     attention_weights [batch…, Queries, KV] (queries' dims without Feat, then KV)
///     output            [batch…, Queries, ValueFeat]

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn {

namespace detail {

/// Which check fails first for dot-product attention over (q, k, v): a
/// diagnostic class, `ill_formed`, or void.
template <class Queries, class KV, class Feat, class T, class Backend, class Q, class K, class V>
constexpr auto dot_product_diagnosis() {
  using call_t = call::dot_product_attention;
  // Two template arguments naming the same dim are reported by the class.
  if constexpr (any_ill_formed_v<Q, K, V> || std::is_same_v<Queries, KV> || std::is_same_v<Queries, Feat> ||
                std::is_same_v<KV, Feat>) {
    return std::type_identity<ill_formed>{};
  } else {
    using type = qkv_diagnosis_t<call_t, Queries, KV, Feat, Feat, Q, K, V>;
    if constexpr (!std::is_void_v<type>) {
      return std::type_identity<type>{};
    } else if constexpr (!std::is_same_v<typename Q::backend, Backend>) {
      return std::type_identity<diagnostic::backends_differ<call_t, typename Q::backend, Backend>>{};
    } else if constexpr (!std::is_same_v<typename K::backend, Backend>) {
      return std::type_identity<diagnostic::backends_differ<call_t, typename K::backend, Backend>>{};
    } else if constexpr (!std::is_same_v<typename V::backend, Backend>) {
      return std::type_identity<diagnostic::backends_differ<call_t, typename V::backend, Backend>>{};
    } else if constexpr (!std::is_same_v<typename Q::value_type, T>) {
      return std::type_identity<diagnostic::element_types_differ<call_t, typename Q::value_type, T>>{};
    } else if constexpr (!std::is_same_v<typename K::value_type, T>) {
      return std::type_identity<diagnostic::element_types_differ<call_t, typename K::value_type, T>>{};
    } else if constexpr (!std::is_same_v<typename V::value_type, T>) {
      return std::type_identity<diagnostic::element_types_differ<call_t, typename V::value_type, T>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

}  // namespace detail

/// @brief Scaled dot-product attention (d2l's `DotProductAttention`):
/// softmax over KV of q·k / √d, masked by valid lengths, then the weighted
/// sum of the values.
///
/// Queries is the queries' sequence dim, KV the keys' and values' (the dim
/// the softmax runs over), Feat the feature dim queries and keys share (d,
/// summed over).  The module keeps the last call's weights:
/// `attention_weights<Batch, Queries, KVPairs>()`.  Differentiable in
/// queries, keys and values (no parameters of its own).  The operands and
/// the kept weights live on @p Backend.
///
/// @code
/// dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention(0.5);
/// attention.eval();
/// auto out = attention(queries, keys, values, valid_lens);   // [Batch, Queries, ValueFeat]
/// @endcode
template <class Queries, class KV, class Feat, class T = float, class Backend = default_backend>
class dot_product_attention
    : public attention_base<dot_product_attention<Queries, KV, Feat, T, Backend>, T, Backend> {
  static_assert(DimTag<Queries> && DimTag<KV> && DimTag<Feat>,
                "dimtensor: dot_product_attention<Queries, KV, Feat, T> needs dimension tags declared with "
                "DIMTENSOR_DIM");
  static_assert(!std::is_same_v<Queries, KV> && !std::is_same_v<Queries, Feat> && !std::is_same_v<KV, Feat>,
                "dimtensor: dot_product_attention<Queries, KV, Feat> needs three different dims");

 public:
  /// The element type.
  using value_type = T;
  /// The backend of the operands and of the kept weights.
  using backend = Backend;
  /// The module's name in its errors.
  static constexpr std::string_view module_name = "dot_product_attention";

  // Dropout on the attention weights (identity in eval mode, as in d2l);
  // no parameters.
  BOOST_HANA_DEFINE_STRUCT(dot_product_attention, (nn::dropout, dropout));

  /// With dropout probability @p p on the attention weights, drawn from
  /// a generator seeded with @p seed.
  explicit dot_product_attention(double p = 0, std::uint64_t seed = generator::default_seed) : dropout(p, seed) {}

  /// @brief The attention output for @p queries, @p keys and @p values,
  /// with @p valid_lens (none, a lengths tensor, or a `std::optional` of
  /// one; the rules of `masked_softmax<KV>`).
  ///
  /// Compile errors name the call and the operand: an operand lacking a dim
  /// the module names (`attention_operand_lacks_dim`), queries with KV or
  /// keys with Queries (`attention_operand_has_foreign_dim`), operands on
  /// another backend than Backend (`backends_differ`), element types other
  /// than T, typed lengths of another dim than KV
  /// (`valid_lens_measure_another_dim`); the contractions then check that
  /// the shared dims agree.  At run time, extents that differ are a
  /// `shape_error` naming the call and the operands first
  /// ("dot_product_attention: values: extent mismatch for dimension
  /// KVPairs: 6 (keys) vs 5 (values)").
  template <class Q, class K, class V, class... L>
    requires(sizeof...(L) <= 1)
  auto operator()(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
    if constexpr (rejects(first_diagnosis(
                      detail::dot_product_diagnosis<Queries, KV, Feat, T, Backend, expr_t<Q>, expr_t<K>, expr_t<V>>(),
                      std::type_identity<detail::lens_diagnosis_t<call::dot_product_attention, KV, L...>>{}))) {
      return ill_formed{};
    } else {
      return checked<call::dot_product_attention>(
          [&](auto const& queries, auto const& keys, auto const& values, auto const&... valid_lens) {
            detail::check_qkv_extents<Q, K, V, boost::mp11::mp_list<>, boost::mp11::mp_list<Feat>>(module_name, queries,
                                                                                                   keys, values);
            auto const q = dimtensor::eval(queries);
            auto const masking = masking_of<KV>(valid_lens...);  // the lengths' one form below this call
            if (this->weights_unused()) {
              auto const k = dimtensor::eval(keys);
              this->template keep_weights_lazily<Queries, KV, Feat>(q, k, masking);
              return scaled_dot_product_attention<Queries, KV, Feat>(q, k, values, masking);
            }
            // Dropout on the weights: they are formed.
            index_t const d = q.template extent<Feat>();
            // d2l divides by math.sqrt(d): a double, rounded to T, then a division.
            auto const scores = contract<Feat>(q, keys) / static_cast<T>(std::sqrt(static_cast<double>(d)));
            return this->template attend<KV>(scores, values, masking);
          },
          queries, keys, values, valid_lens...);
    }
  }
};

}  // namespace dimtensor::nn
