#pragma once
/// @file
/// @brief The key, additive and causal parts of a `masking`
/// (ops/masking.hpp) as the operations read them: their compile-time rule
/// and diagnoses, their run-time extents check, the fused kernels' view of
/// a mask (`kernel::attention_operand`: per-entry offsets, a row stride,
/// broadcast dims at stride 0) and, for the composed path
/// (`masked_softmax`), the masks made into one additive tensor and the
/// causal limit into one valid length per row.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace diagnostic {

/// A key or additive mask of dims @p MaskDims for scores of dims
/// @p ScoresDims: every dim of the mask must be one of the scores', the
/// keys' dim (the one masked) last.
template <class Call, class MaskDims, class ScoresDims>
struct mask_dims_not_of_scores {
  static_assert(always_false<Call, MaskDims, ScoresDims>,
                "dimtensor: a key or additive mask's dims must be dims of the scores, the keys' dim last, e.g. "
                "[Batch, KVPairs] or [Heads, Queries, KVPairs] (see mask_dims_not_of_scores<call, dims of the mask, "
                "dims of the scores> above)");
};

/// A key mask of element type @p T: it must hold bool.
template <class Call, class T>
struct key_mask_not_bool {
  static_assert(always_false<Call, T>,
                "dimtensor: a key mask holds bool, true where a key is read (see key_mask_not_bool<call, element "
                "type of the mask> above); compare to make one, e.g. attention_mask != 0");
};

/// Causal masking along @p Causal, where the call's queries are @p Queries.
template <class Call, class Causal, class Queries>
struct causal_along_another_dim {
  static_assert(always_false<Call, Causal, Queries>,
                "dimtensor: causal masking must be along the call's queries' dim (see causal_along_another_dim<call, "
                "dim of the masking, the queries' dim> above)");
};

}  // namespace diagnostic

namespace detail {

/// A quoted predicate: whether a tag is one of @p S's.
template <class S>
struct tag_in {
  /// The predicate.
  template <class D>
  using fn = std::bool_constant<contains_v<D, S>>;
};

/// The diagnosis of a mask @p M (a key mask when @p Key, else additive)
/// over scores @p X along @p KV, or void.
template <class Call, class KV, class X, class M, bool Key>
constexpr auto mask_part_diagnosis() {
  if constexpr (std::is_void_v<M>) {
    return std::type_identity<void>{};
  } else {
    using S = typename X::specs;
    using MS = typename M::specs;
    using tags = tags_of<MS>;
    constexpr bool dims_ok = boost::mp11::mp_size<MS>::value > 0 &&
                             boost::mp11::mp_all_of_q<tags, tag_in<S>>::value &&
                             std::is_same_v<boost::mp11::mp_back<boost::mp11::mp_push_front<tags, void>>, KV>;
    if constexpr (Key && !std::is_same_v<typename M::value_type, bool>) {
      return std::type_identity<diagnostic::key_mask_not_bool<Call, typename M::value_type>>{};
    } else if constexpr (!Key && !std::is_same_v<typename M::value_type, typename X::value_type>) {
      return std::type_identity<
          diagnostic::element_types_differ<Call, typename X::value_type, typename M::value_type>>{};
    } else if constexpr (!std::is_same_v<typename M::backend, typename X::backend>) {
      return std::type_identity<diagnostic::backends_differ<Call, typename X::backend, typename M::backend>>{};
    } else if constexpr (!dims_ok) {
      return std::type_identity<diagnostic::mask_dims_not_of_scores<Call, MS, S>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
}

/// The diagnosis of masking @p M's key, additive and causal parts for
/// scores @p X along @p KV whose queries are @p Queries (void: any dim of
/// the scores), or void.
template <class Call, class KV, class Queries, class X, class M>
struct mask_parts_diagnosis;
template <class Call, class KV, class Queries, class X, class L, class P, class A, class Q>
struct mask_parts_diagnosis<Call, KV, Queries, X, masking<KV, L, P, A, Q>> {
  static constexpr auto causal() {
    if constexpr (std::is_void_v<Q>) {
      return std::type_identity<void>{};
    } else if constexpr (!std::is_void_v<Queries> && !std::is_same_v<Q, Queries>) {
      return std::type_identity<diagnostic::causal_along_another_dim<Call, Q, Queries>>{};
    } else if constexpr (!contains_v<Q, typename X::specs> || std::is_same_v<Q, KV>) {
      return std::type_identity<diagnostic::not_a_dimension_of<Call, Q, remove_dim<KV, typename X::specs>>>{};
    } else {
      return std::type_identity<void>{};
    }
  }
  /// The first diagnosis.
  static constexpr auto value() {
    return first_diagnosis(mask_part_diagnosis<Call, KV, X, P, true>(), mask_part_diagnosis<Call, KV, X, A, false>(),
                           causal());
  }
};

/// @brief Throws `shape_error` naming @p call and @p what unless each
/// extent of mask @p m is the scores' (extents @p sext, dims @p S) for the
/// same dim.
template <class S, class M, std::size_t R>
void check_mask_extents(std::string_view call, std::string_view what, std::array<index_t, R> const& sext,
                        M const& m) {
  using MS = typename M::specs;
  constexpr auto pos = positions_in<S, tags_of<MS>>::value;
  constexpr auto names = tag_names<tags_of<MS>>::value;
  for (std::size_t k = 0; k < pos.size(); ++k) {
    if (m.extents()[k] != sext[pos[k]]) throw_extent_mismatch(call, names[k], sext[pos[k]], m.extents()[k], "scores", what);
  }
}

/// @brief A mask as the fused kernels read it (kernel::attention_operand),
/// with its elements and offsets kept alive.
template <class P>
struct kept_mask_operand {
  std::shared_ptr<void const> keep;
  std::vector<index_t> off;
  kernel::attention_operand<P const> view;
};

/// @brief Mask @p m (contiguous, the keys' dim last) as the kernels read
/// it for scores of dims @p S and extents @p sext whose kernel entries are
/// the batch dims @p Batch (row-major) and rows @p Queries: each entry's
/// offset and the row stride, 0 along the dims the mask lacks.
template <class Batch, class Queries, class S, class M, std::size_t R>
auto mask_operand(std::array<index_t, R> const& sext, M const& mask) {
  using P = typename M::value_type;
  using MS = typename M::specs;
  auto const m = mask.contiguous();
  // The batch dims as a layout of their own: the scores' extents, the
  // mask's strides (0 along a dim it lacks).
  constexpr auto batch_in_s = positions_in<S, Batch>::value;
  constexpr std::size_t nb = batch_in_s.size();
  kernel::layout batch;
  batch.rank = nb;
  kernel::positions in_order;
  in_order.size = nb;
  boost::mp11::mp_for_each<boost::mp11::mp_iota_c<nb>>([&](auto I) {
    using D = boost::mp11::mp_at_c<Batch, I>;
    batch.ext[I] = sext[batch_in_s[I]];
    if constexpr (contains_v<D, MS>) batch.str[I] = m.strides()[index_of_v<D, MS>];
    in_order.at[I] = I;
  });
  index_t row_stride = 0;
  if constexpr (contains_v<Queries, MS>) row_stride = m.strides()[index_of_v<Queries, MS>];
  kept_mask_operand<P> out{m.storage(), kernel::entry_offsets(batch, in_order), {}};
  out.view = {m.data(), out.off.data(), row_stride};
  return out;
}

/// @brief Masking @p m's key and additive masks as one additive tensor of
/// the scores' dims @p S and extents @p sext (the masked score where a key
/// is masked, the additive mask elsewhere, 0 without one), on the scores'
/// backend, for the composed path; built on the host.
template <class Backend, class T, class S, class M, std::size_t R>
auto masks_as_additive(std::array<index_t, R> const& sext, M const& m) {
  using out_t = tensor_with_dims<Backend, T, S>;
  index_t count = 1;
  for (std::size_t k = 0; k < R; ++k) count *= sext[k];
  std::vector<T> add(static_cast<std::size_t>(count), T(0));
  // Each element's multi-index in the scores, row-major; a mask's element
  // at its own row-major offset over its dims.
  auto apply = [&](auto const& mask, auto&& f) {
    using MS = typename std::remove_cvref_t<decltype(mask)>::specs;
    auto const host = to_host(mask);
    constexpr auto pos = positions_in<S, tags_of<MS>>::value;
    std::array<index_t, R> stride{};
    index_t s = 1;
    for (std::size_t k = pos.size(); k-- > 0;) {
      stride[pos[k]] = s;
      s *= sext[pos[k]];
    }
    std::array<index_t, R> idx{};
    for (index_t e = 0; e < count; ++e) {
      index_t o = 0;
      for (std::size_t k = 0; k < R; ++k) o += idx[k] * stride[k];
      f(add[static_cast<std::size_t>(e)], host.data()[o]);
      for (std::size_t k = R; k-- > 0;) {
        if (++idx[k] < sext[k]) break;
        idx[k] = 0;
      }
    }
  };
  T const masked = kernel::attention_masked_score<T>;
  if constexpr (!std::is_void_v<typename M::additive_type>) {
    if (m.additive) apply(*m.additive, [masked](T& x, T a) { x = a <= masked ? masked : a; });
  }
  if constexpr (!std::is_void_v<typename M::keep_type>) {
    if (m.keep) apply(*m.keep, [masked](T& x, bool k) { x = k ? x : masked; });
  }
  typename out_t::extents_type ext{};
  for (std::size_t k = 0; k < R; ++k) ext[k] = sext[k];
  out_t out(uninitialized, ext);
  backend_copy_from_host(Backend{}, out.data(), add.data(), count);
  return out;
}

/// @brief Each row's valid length with the causal limit along @p Q, as an
/// int64 tensor over the scores' dims @p S without @p KV (extents @p sext):
/// min(the row's valid length, i + m − n + 1) for query i of n and m keys.
template <class Backend, class KV, class Q, class S, class L, std::size_t R>
auto causal_lengths(std::array<index_t, R> const& sext, std::optional<L> const* lens) {
  using rows_s = remove_dim<KV, S>;
  using out_t = tensor_with_dims<Backend, std::int64_t, rows_s>;
  constexpr std::size_t kv = index_of_v<KV, S>;
  constexpr std::size_t q = index_of_v<Q, rows_s>;
  std::array<index_t, R - 1> rext{};
  for (std::size_t k = 0, j = 0; k < R; ++k) {
    if (k != kv) rext[j++] = sext[k];
  }
  index_t count = 1;
  for (index_t e : rext) count *= e;
  index_t const n = rext[q];
  index_t const m = sext[kv];
  std::vector<std::int64_t> out(static_cast<std::size_t>(count), m);
  if (lens != nullptr && *lens) {
    auto const l = as_int64(**lens).contiguous();
    index_t const repeat = check_valid_lens_extents<KV, S>("masked_softmax", "scores", sext, l);
    auto const host = to_host(l);
    for (index_t r = 0; r < count; ++r) out[static_cast<std::size_t>(r)] = host.data()[r / repeat];
  }
  index_t inner = 1;
  for (std::size_t k = q + 1; k < R - 1; ++k) inner *= rext[k];
  for (index_t r = 0; r < count; ++r) {
    index_t const i = (r / inner) % n;
    auto& x = out[static_cast<std::size_t>(r)];
    x = std::clamp<std::int64_t>(i + m - n + 1, 0, x);
  }
  typename out_t::extents_type ext{};
  for (std::size_t k = 0; k < R - 1; ++k) ext[k] = rext[k];
  out_t t(uninitialized, ext);
  backend_copy_from_host(Backend{}, t.data(), out.data(), count);
  return t;
}

}  // namespace detail

}  // namespace dimtensor
