#pragma once
/// @file
/// @brief The fused path of scaled dot-product attention on the CPU
/// backend (backends/cpu/attention.hpp), in typed form: which operands it
/// takes, how their dims map onto the kernel's [batch, rows, features]
/// matrices, the valid lengths per query row, and the recorded backward.
///
/// `nn::dot_product_attention` (and so multi-head attention in both forms,
/// and the Transformer) takes this path by itself when
///   - the backend is `cpu` and the elements are float or double;
///   - dropout on the weights is off (eval mode, or p = 0): dropout draws a
///     mask over the [Queries, KV] weights, which the fused path never forms;
///   - the operands are attention's usual shape: queries [batch…, Queries,
///     Feat] and keys [batch…, KV, Feat] with Feat last, values [batch…, KV,
///     ValueFeat] with one feature dim, last, and the same batch dims in all
///     three (by name, in any order: the kernel reads each operand through
///     its strides, so the named multi-head form's [Batch, Queries, Heads,
///     HeadFeat] views are used in place).
/// Otherwise the unfused path runs (contractions and masked_softmax), with
/// the same numbers up to rounding.  The module's kept weights are computed
/// when they are asked for (attention_base, `keep_weights_of`).

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/nn/attention/fused_run.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn::detail {

/// @brief The type-level plan of fused attention over queries @p QS, keys
/// @p KS, values @p VS (shapes): `ok` when the fused kernel takes them.
template <class Queries, class KV, class Feat, class QS, class KS, class VS>
struct fused_attention_plan {
  /// The scores' contraction (over Feat) and the output's (over KV).
  using scores_plan = dimtensor::detail::contraction_plan<Feat, QS, KS>;
  using output_plan = dimtensor::detail::contraction_plan<KV, typename scores_plan::result, VS>;
  /// The batch dims, in the queries' order.
  using batch = typename scores_plan::batch;
  /// The output's shape (the unfused path's: queries' dims without Feat, then ValueFeat).
  using output = typename output_plan::result;
  static constexpr bool shapes_ok =
      std::is_same_v<boost::mp11::mp_rename<typename scores_plan::free_a, boost::mp11::mp_list>,
                     boost::mp11::mp_list<Queries>> &&
      std::is_same_v<boost::mp11::mp_rename<typename scores_plan::free_b, boost::mp11::mp_list>,
                     boost::mp11::mp_list<KV>> &&
      std::is_same_v<boost::mp11::mp_rename<typename output_plan::free_a, boost::mp11::mp_list>,
                     boost::mp11::mp_list<Queries>> &&
      boost::mp11::mp_size<typename output_plan::free_b>::value == 1 &&
      boost::mp11::mp_size<typename output_plan::batch>::value == boost::mp11::mp_size<batch>::value;
  /// The values' feature dim (when shapes_ok).
  using value_feat = boost::mp11::mp_eval_if_c<!shapes_ok, void, boost::mp11::mp_front, typename output_plan::free_b>;
  /// Whether the kernel takes these operands: attention's shapes, features last.
  static constexpr bool ok = shapes_ok && std::is_same_v<boost::mp11::mp_back<dimtensor::detail::tags_of<QS>>, Feat> &&
                             std::is_same_v<boost::mp11::mp_back<dimtensor::detail::tags_of<KS>>, Feat> &&
                             std::is_same_v<boost::mp11::mp_back<dimtensor::detail::tags_of<VS>>, value_feat>;
};

/// @brief Per query row, in the kernel's order (batch entries, then
/// Queries), its valid length from @p lens, checked as masked_softmax<KV>
/// checks it against the scores (`probe` has the scores' shape).
template <class Batch, class Queries, class Probe, class L>
std::vector<index_t> fused_row_lengths(Probe const& probe, L const& lens_in) {
  using KV = boost::mp11::mp_back<dimtensor::detail::tags_of<typename Probe::specs>>;
  auto const lens = dimtensor::eval(lens_in).contiguous();
  index_t const repeat = dimtensor::detail::check_valid_lens_values<KV>("masked_softmax", "scores", probe, lens);
  // Rows in the scores' order: their dims without KV, row-major.
  using lines = boost::mp11::mp_pop_back<dimtensor::detail::tags_of<typename Probe::specs>>;
  constexpr std::size_t r = boost::mp11::mp_size<lines>::value;
  std::array<index_t, r> line_stride{};
  {
    index_t s = 1;
    for (std::size_t k = r; k-- > 0;) {
      line_stride[k] = s;
      s *= probe.extents()[k];
    }
  }
  // The kernel's order: Batch's dims, then Queries.
  using order = boost::mp11::mp_push_back<Batch, Queries>;
  constexpr auto pos = dimtensor::detail::positions_in<lines, order>::value;
  std::array<index_t, r> ext{};
  index_t count = 1;
  for (std::size_t k = 0; k < r; ++k) {
    ext[k] = probe.extents()[pos[k]];
    count *= ext[k];
  }
  std::vector<index_t> out(static_cast<std::size_t>(count));
  std::array<index_t, r> idx{};
  auto const* l = lens.data();
  for (index_t c = 0; c < count; ++c) {
    index_t line = 0;
    for (std::size_t k = 0; k < r; ++k) line += idx[k] * line_stride[pos[k]];
    out[static_cast<std::size_t>(c)] = static_cast<index_t>(l[line / repeat]);
    for (std::size_t k = r; k-- > 0;) {
      if (++idx[k] < ext[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

/// No valid lengths: every key counts (an empty vector).
template <class Batch, class Queries, class Probe>
std::vector<index_t> fused_row_lengths(Probe const&) {
  return {};
}
/// No valid lengths, spelled `std::nullopt`.
template <class Batch, class Queries, class Probe>
std::vector<index_t> fused_row_lengths(Probe const&, std::nullopt_t) {
  return {};
}
/// Valid lengths chosen at run time.
template <class Batch, class Queries, class Probe, class L>
std::vector<index_t> fused_row_lengths(Probe const& probe, std::optional<L> const& lens) {
  if (!lens) return {};
  return fused_row_lengths<Batch, Queries>(probe, *lens);
}

/// @p x as an operand of the fused kernels (fused_run.hpp): its batch
/// dims @p Batch (in that order), its row dim @p Row and feature dim
/// @p Feat by position, and its autograd state when it requires gradients.
template <class Batch, class Row, class Feat, class X>
fused_side<typename X::value_type> fused_side_of(X const& x) {
  using S = typename X::specs;
  fused_side<typename X::value_type> s{x.storage(),
                                       x.data(),
                                       run_layout(x.extents(), x.strides()),
                                       dimtensor::detail::positions_in<S, Batch>::value,
                                       dimtensor::detail::index_of_v<Row, S>,
                                       dimtensor::detail::index_of_v<Feat, S>,
                                       nullptr};
  if (x.requires_grad()) s.state = x.grad_state();
  return s;
}

/// Valid lengths to keep past the call (the lazily kept weights use them):
/// an expression evaluated, a tensor's handle, `std::nullopt` or a
/// `std::optional` as they are.
template <class L>
auto kept_lengths(L const& lens) {
  if constexpr (Expression<L>) {
    return dimtensor::eval(lens);
  } else {
    return lens;
  }
}

/// @brief Fused scaled dot-product attention over evaluated operands
/// @p q, @p k, @p v (a `fused_attention_plan` that is ok), with d2l's
/// masking by @p valid_lens (none or one, the forms masked_softmax takes):
/// the output, of the unfused path's type, recording its backward.
template <class Queries, class KV, class Feat, class QT, class KT, class VT, class... L>
auto fused_attention(QT const& q, KT const& k, VT const& v, L const&... valid_lens) {
  using plan = fused_attention_plan<Queries, KV, Feat, typename QT::specs, typename KT::specs, typename VT::specs>;
  static_assert(plan::ok, "dimtensor internal: fused attention on operands it does not take");
  using T = typename QT::value_type;
  using Backend = typename QT::backend;
  using batch = typename plan::batch;
  using VF = typename plan::value_feat;
  using out_t = tensor_with_dims<Backend, T, typename plan::output>;
  using scores_t = tensor_with_dims<Backend, T, typename plan::scores_plan::result>;
  using dimtensor::detail::index_of_v;
  using dimtensor::detail::positions_in;
  using QS = typename QT::specs;

  // Extents (the shared ones were checked equal by the module).
  index_t const nk = k.extents()[index_of_v<KV, typename KT::specs>];
  index_t const d = q.extents()[index_of_v<Feat, QS>];
  index_t const dv = v.extents()[index_of_v<VF, typename VT::specs>];

  // The scores' shape, for the lengths' checks: a handle of stride 0 over one element.
  typename scores_t::extents_type sext{};
  {
    constexpr auto from_q =
        positions_in<QS, dimtensor::detail::tags_of<dimtensor::detail::remove_dim<Feat, QS>>>::value;
    for (std::size_t i = 0; i < from_q.size(); ++i) sext[i] = q.extents()[from_q[i]];
    sext[from_q.size()] = nk;
  }
  auto const one = std::make_shared<typename scores_t::storage_type>(1);
  scores_t const probe(one, one->data(), sext, typename scores_t::extents_type{});
  std::vector<index_t> lens = fused_row_lengths<batch, Queries>(probe, valid_lens...);

  typename out_t::extents_type oext{};
  {
    constexpr auto from_q =
        positions_in<QS, dimtensor::detail::tags_of<dimtensor::detail::remove_dim<Feat, QS>>>::value;
    for (std::size_t i = 0; i < from_q.size(); ++i) oext[i] = q.extents()[from_q[i]];
    oext[from_q.size()] = dv;
  }
  out_t out(uninitialized, oext);
  using OS = typename out_t::specs;
  bool const record = autograd::should_record(q, k, v);
  // d2l divides by math.sqrt(d): a double, rounded to T.
  T const scale = static_cast<T>(std::sqrt(static_cast<double>(d)));
  auto node = fused_attention_run<T>(fused_side_of<batch, Queries, Feat>(q), fused_side_of<batch, KV, Feat>(k),
                                     fused_side_of<batch, KV, VF>(v), std::move(lens), scale, out.data(),
                                     run_layout(out.extents(), out.strides()), positions_in<OS, batch>::value,
                                     index_of_v<Queries, OS>, record);
  if (node) out.attach_grad_fn(std::move(node));
  return out;
}

/// @brief The type-level plan of additive attention's fused scores over
/// the projected queries @p QS and keys @p KS (the keys already in the
/// queries' order): `ok` when they are [batch…, Queries, Hidden] and
/// [batch…, KV, Hidden], the same batch dims in the same order.
template <class Queries, class KV, class Hidden, class QS, class KS>
struct fused_additive_plan {
  using q_tags = dimtensor::detail::tags_of<QS>;
  using k_tags = dimtensor::detail::tags_of<KS>;
  static constexpr std::size_t rank = boost::mp11::mp_size<q_tags>::value;
  static constexpr bool ranks_ok = rank >= 2 && boost::mp11::mp_size<k_tags>::value == rank;
  /// The batch dims (the queries' dims before Queries).
  using batch = boost::mp11::mp_eval_if_c<!ranks_ok, boost::mp11::mp_list<>, boost::mp11::mp_take, q_tags,
                                          boost::mp11::mp_size_t<(ranks_ok ? rank - 2 : 0)>>;
  static constexpr bool ok = ranks_ok && std::is_same_v<q_tags, boost::mp11::mp_push_back<batch, Queries, Hidden>> &&
                             std::is_same_v<k_tags, boost::mp11::mp_push_back<batch, KV, Hidden>>;
};

/// @brief Additive attention's scores [batch…, Queries, KV] from the
/// projected queries @p q and keys @p k (a `fused_additive_plan` that is
/// ok) and `w_v`'s weight @p w ([Score, Hidden]): Σ_h w_h tanh(q_ih + k_jh),
/// without the [batch…, Queries, KV, Hidden] features; keys past a row's
/// valid length (@p valid_lens, as masked_softmax takes them) get 0, which
/// masking replaces.  Records the backward pass (backends/cpu/attention.hpp).
template <class Queries, class KV, class Hidden, class QT, class KT, class WT, class... L>
auto fused_additive_scores(QT const& q, KT const& k, WT const& w, L const&... valid_lens) {
  using plan = fused_additive_plan<Queries, KV, Hidden, typename QT::specs, typename KT::specs>;
  static_assert(plan::ok, "dimtensor internal: fused additive scores on operands it does not take");
  using T = typename QT::value_type;
  using Backend = typename QT::backend;
  using batch = typename plan::batch;
  using QS = typename QT::specs;
  using scores_specs = boost::mp11::mp_push_back<dimtensor::detail::remove_dim<Hidden, QS>,
                                                 dimtensor::detail::spec_for<KV, typename KT::specs>>;
  using scores_t = tensor_with_dims<Backend, T, scores_specs>;
  using dimtensor::detail::index_of_v;
  constexpr std::size_t nb = boost::mp11::mp_size<batch>::value;
  // w_v's weight: [Score, Hidden].
  using w_row =
      boost::mp11::mp_front<dimtensor::detail::tags_of<dimtensor::detail::remove_dim<Hidden, typename WT::specs>>>;

  typename scores_t::extents_type sext{};
  for (std::size_t i = 0; i < nb; ++i) sext[i] = q.extents()[i];
  sext[nb] = q.extents()[index_of_v<Queries, QS>];
  sext[nb + 1] = k.extents()[index_of_v<KV, typename KT::specs>];
  scores_t out(uninitialized, sext);
  bool const record = autograd::should_record(q, k, w);
  auto node = fused_additive_run<T>(fused_side_of<batch, Queries, Hidden>(q), fused_side_of<batch, KV, Hidden>(k),
                                    fused_side_of<boost::mp11::mp_list<>, w_row, Hidden>(w),
                                    fused_row_lengths<batch, Queries>(out, valid_lens...), out.data(), record);
  if (node) out.attach_grad_fn(std::move(node));
  return out;
}

}  // namespace dimtensor::nn::detail
