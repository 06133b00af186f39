#pragma once
/// @file
/// @brief The attention modules' compile-time diagnoses (an operand that
/// lacks a dim, or has a foreign one; heads that do not divide the
/// features; …), the first of them for (queries, keys, values), the
/// lengths' diagnosis, and the run-time checks of the operands' extents.

#include <algorithm>
#include <any>
#include <cmath>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <dimtensor/config.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/nn/attention/dims.hpp>
#include <dimtensor/ops/sequence_mask.hpp>

namespace dimtensor {

namespace diagnostic {

/// An attention call's operand (`operand::queries`, …) lacks the dim @p D
/// that the module names; the operand's dims are @p Dims.
template <class Call, class Operand, class D, class Dims>
struct attention_operand_lacks_dim {
  static_assert(always_false<Call, Operand, D, Dims>,
                "dimtensor: an attention operand lacks a dim that the module names (see "
                "attention_operand_lacks_dim<call, operand, missing dim, dims of the operand> above); "
                "the module's template arguments say which dims queries, keys and values must have");
};

/// An attention call's operand has the dim @p D, which belongs to another
/// operand (queries with the key-value dim, keys with the queries' dim).
template <class Call, class Operand, class D, class Dims>
struct attention_operand_has_foreign_dim {
  static_assert(always_false<Call, Operand, D, Dims>,
                "dimtensor: an attention operand has a dim that belongs to another operand (see "
                "attention_operand_has_foreign_dim<call, operand, dim, dims of the operand> above); "
                "for self-attention, rename the keys' and values' sequence dim (the dim named above) to the "
                "module's key-value dim, rename<dim, KV>(x)");
};

/// A static head count @p Heads that does not divide the static hidden size @p Hidden.
template <class Call, class HiddenDim, index_t Hidden, index_t Heads>
struct heads_do_not_divide {
  static_assert(always_false<Call, HiddenDim>,
                "dimtensor: the number of heads must divide the hidden size (see "
                "heads_do_not_divide<call, hidden dim, hidden size, heads> above)");
};

/// `transpose_output` given a tensor without the merged batch-and-heads dim.
template <class Call, class Merged, class Dims>
struct transpose_output_of_unmerged {
  static_assert(always_false<Call, Merged, Dims>,
                "dimtensor: transpose_output undoes transpose_qkv, so its input must have the merged "
                "batch-and-heads dim (see transpose_output_of_unmerged<call, merged dim, dims of the input> above); "
                "it was given a tensor whose heads are not merged into the batch");
};

/// `transpose_qkv<Batch, Hidden>(x)` where x has Hidden before Batch: the
/// template arguments swapped, most likely.
template <class Call, class Batch, class Hidden, class Dims>
struct transpose_qkv_batch_after_hidden {
  static_assert(always_false<Call, Batch, Hidden, Dims>,
                "dimtensor: transpose_qkv<Batch, Hidden> takes the batch dim first and the dim split into heads "
                "second, and x has the second before the first (see transpose_qkv_batch_after_hidden<call, Batch, "
                "Hidden, dims of x> above); are the template arguments swapped?");
};

/// `forward_d2l` takes the queries' first dim as the batch (d2l's
/// `X.shape[0]`), but the queries' first dim is @p First, a dim the module
/// names otherwise.
template <class Call, class First, class Dims>
struct d2l_form_needs_batch_first {
  static_assert(always_false<Call, First, Dims>,
                "dimtensor: d2l's multi-head attention merges the batch, its operands' first dim, with the heads; "
                "these queries start with a dim the module uses otherwise (see d2l_form_needs_batch_first<call, "
                "first dim, dims of the queries> above); permute the batch dim to the front or use the named form");
};

}  // namespace diagnostic

namespace nn::detail {
/// The dims of the list @p Wanted that a shape @p Specs lacks, in Wanted's order.
template <class Specs, class Wanted>
using dims_lacking = boost::mp11::mp_remove_if_q<
    Wanted, boost::mp11::mp_bind_front<boost::mp11::mp_contains, meta::tags_of<Specs>>>;

/// The dims of the list @p Wanted that a shape @p Specs has, in Wanted's order.
template <class Specs, class Wanted>
using dims_having = boost::mp11::mp_copy_if_q<
    Wanted, boost::mp11::mp_bind_front<boost::mp11::mp_contains, meta::tags_of<Specs>>>;

/// Which check fails first for an attention operand @p X that must have
/// every dim of @p Needed and none of @p Foreign: a diagnostic class, or void.
template <class Call, class Operand, class X, class Needed, class Foreign>
constexpr auto operand_diagnosis() {
  namespace mp = boost::mp11;
  using specs = typename X::specs;
  using missing = dims_lacking<specs, Needed>;
  using foreign = dims_having<specs, Foreign>;
  if constexpr (!mp::mp_empty<missing>::value) {
    return std::type_identity<diagnostic::attention_operand_lacks_dim<Call, Operand, mp::mp_front<missing>, specs>>{};
  } else if constexpr (!mp::mp_empty<foreign>::value) {
    return std::type_identity<
        diagnostic::attention_operand_has_foreign_dim<Call, Operand, mp::mp_front<foreign>, specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

/// Which operand check fails first for an attention call over (q, k, v):
/// queries need Queries and QueryFeat and not KV, keys KV and KeyFeat and
/// not Queries, values KV and not Queries (a diagnostic class, or void).
template <class Call, class Queries, class KV, class QueryFeat, class KeyFeat, class Q, class K, class V>
using qkv_diagnosis_t = typename decltype(dimtensor::first_diagnosis(
    operand_diagnosis<Call, operand::queries, Q, boost::mp11::mp_list<Queries, QueryFeat>, boost::mp11::mp_list<KV>>(),
    operand_diagnosis<Call, operand::keys, K, boost::mp11::mp_list<KV, KeyFeat>, boost::mp11::mp_list<Queries>>(),
    operand_diagnosis<Call, operand::values, V, boost::mp11::mp_list<KV>, boost::mp11::mp_list<Queries>>()))::type;

/// @brief The run-time check of an attention call's operands: the dims
/// queries and keys share (their batch dims, and the feature dim of
/// dot-product attention) less those of the list @p ExceptQK, then the
/// dims keys and values share (the key-value dim and the batch dims) less
/// those of @p ExceptKV (the features) must have the same extents;
/// `shape_error` "<call>: keys: extent mismatch for dimension <D>: …
/// (queries) vs … (keys)" otherwise.
template <class Q, class K, class V, class ExceptQK, class ExceptKV>
void check_qkv_extents(std::string_view call, Q const& queries, K const& keys, V const& values) {
  using dimtensor::check_operand_extents;
  using meta::shared_tags;
  check_operand_extents<shared_tags<typename expr_t<Q>::specs, typename expr_t<K>::specs, ExceptQK>>(
      call, queries, "queries", keys, "keys");
  check_operand_extents<shared_tags<typename expr_t<K>::specs, typename expr_t<V>::specs, ExceptKV>>(call, keys, "keys",
                                                                                                     values, "values");
}

/// @brief `shape_error` "<call>: <operand>: extent mismatch for dimension
/// <D>: <n> (<operand>) vs <m> (<layer>)" unless @p x's extent of D is the
/// layer's input size @p in (a module's operand against its projection).
template <class D, class X>
void check_layer_input(std::string_view call, X const& x, std::string_view operand, index_t in,
                       std::string_view layer) {
  index_t const n = x.extents()[meta::index_of_v<D, typename X::specs>];
  if (n != in) {
    throw_extent_mismatch(std::string(call) + ": " + std::string(operand), dim_name_v<D>, n, in,
                                             operand, layer);
  }
}

/// @brief The diagnosis for an attention call's valid lengths @p L (none
/// or one): typed lengths (`lengths<M, …>`) of another dim than the dim
/// @p KV the call attends over are `valid_lens_measure_another_dim<Call,
/// measured<M>, masked<KV>>`; otherwise void.
template <class Call, class KV, class... L>
struct lens_diagnosis {
  using type = void;
};
template <class Call, class KV, class L>
struct lens_diagnosis<Call, KV, L> {
  using type = lens_measure_diagnosis_t<Call, L, KV>;
};
/// `lens_diagnosis<Call, KV, L...>::type`.
template <class Call, class KV, class... L>
using lens_diagnosis_t = typename lens_diagnosis<Call, KV, L...>::type;

}  // namespace nn::detail

}  // namespace dimtensor
