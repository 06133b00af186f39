#pragma once
/// @file
/// @brief `additive_attention_scores<Queries, KV, Hidden>(q, k, w,
/// masking)`: additive attention's scores Σ_h w_h tanh(q_ih + k_jh)
/// from the projected queries and keys, by the backend's
/// `backend_additive_scores` kernel, without the [batch…, Queries, KV,
/// Hidden] features d2l forms; keys past a row's valid length get 0 (the
/// masking that follows replaces them).  Its backward rule is beside it.
///
/// A backend need not offer the kernel (the CPU does, for float and
/// double: backends/cpu/attention.hpp); `has_additive_scores_kernel<B, T>`
/// says whether it does, and `nn::additive_attention` composes the scores
/// from elementwise operations and its `w_v` layer where it does not.

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/ops/attention.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `additive_attention_scores<Queries, KV, Hidden>(q, k, w, …)`.
struct additive_attention_scores : named<"additive_attention_scores"> {};
}  // namespace call

namespace diagnostic {

/// additive_attention_scores was given queries of dims @p QueriesDims and
/// keys of dims @p KeysDims, not [batch…, Queries, Hidden] and [batch…,
/// KV, Hidden] with the same batch dims in the same order.
template <class Call, class QueriesDims, class KeysDims>
struct additive_scores_operands {
  static_assert(always_false<Call, QueriesDims, KeysDims>,
                "dimtensor: additive attention's scores need queries [batch..., Queries, Hidden] and keys "
                "[batch..., KV, Hidden], the same batch dims in the same order (see additive_scores_operands<call, "
                "dims of the queries, dims of the keys> above)");
};

/// The backend @p Backend has no additive scores kernel for @p T.
template <class Call, class Backend, class T>
struct no_additive_scores_kernel {
  static_assert(always_false<Call, Backend, T>,
                "dimtensor: this backend has no additive attention scores kernel for this element type; "
                "check has_additive_scores_kernel<Backend, T> first (see no_additive_scores_kernel<call, backend, "
                "element type> above)");
};

}  // namespace diagnostic

/// Whether backend @p B offers additive attention's scores kernel for @p T.
template <class B, class T>
inline constexpr bool has_additive_scores_kernel =
    requires(kernel::additive_problem<T> const& p, T* out) { backend_additive_scores(B{}, p, out); };

namespace detail {

/// @brief The backward pass of additive attention's scores.
template <class B, class T>
class additive_scores_node final : public autograd::node {
 public:
  additive_scores_node(attention_side<T> q, attention_side<T> k, attention_side<T> w, kept_row_lengths lens,
                       kernel::additive_problem<T> p)
      : node("additive_scores"), q_(std::move(q)), k_(std::move(k)), w_(std::move(w)), lens_(std::move(lens)), p_(p) {
    for (auto const* s : {&q_, &k_, &w_}) {
      if (s->state) inputs.push_back(s->state);
    }
    off_q_ = kernel::entry_offsets(q_.layout, q_.batch);
    off_k_ = kernel::entry_offsets(k_.layout, k_.batch);
    p_.q = attention_view(q_, q_.data, off_q_);
    p_.k = attention_view(k_, k_.data, off_k_);
    p_.w = w_.data;
  }

  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);  // dense [batch…, Queries, KV]
    attention_gradient<B, T> dq(q_, false), dk(k_, true), dw(w_, false);  // dk: the kernel adds into it
    backend_additive_scores_backward(B{}, p_, g, dq.view(q_), dk.view(k_), dw.buffer->data());
    dq.hand_to(q_);
    dk.hand_to(k_);
    dw.hand_to(w_);
  }

 private:
  attention_side<T> q_, k_, w_;
  kept_row_lengths lens_;  // p_.lens points into it
  kernel::additive_problem<T> p_;
  std::vector<index_t> off_q_, off_k_;
};

/// @brief The run-time part of additive attention's scores: writes the
/// dense scores [batch…, Queries, KV] into @p out from the projected
/// queries @p q, keys @p k and `w_v`'s weight @p w (its feature dim
/// `feat`), with each query row's valid length in @p lens (empty: every
/// key); and, when @p record, the node of its backward pass.
template <class B, class T>
std::shared_ptr<autograd::node> additive_scores_run(attention_side<T> q, attention_side<T> k, attention_side<T> w,
                                                    kept_row_lengths lens, T* out, bool record) {
  q = attention_dense_features<B>(std::move(q));
  k = attention_dense_features<B>(std::move(k));
  w = attention_dense_features<B>(std::move(w));
  auto const off_q = kernel::entry_offsets(q.layout, q.batch);
  auto const off_k = kernel::entry_offsets(k.layout, k.batch);
  kernel::additive_problem<T> p;
  p.batch = static_cast<index_t>(off_q.size());
  p.queries = q.layout.ext[q.row];
  p.kv = k.layout.ext[k.row];
  p.hidden = q.layout.ext[q.feat];
  p.q = attention_view(q, q.data, off_q);
  p.k = attention_view(k, k.data, off_k);
  p.w = w.data;
  p.lens = lens.rows;
  backend_additive_scores(B{}, p, out);
  if (!record) return nullptr;
  return std::make_shared<additive_scores_node<B, T>>(std::move(q), std::move(k), std::move(w), std::move(lens), p);
}

/// @brief The type-level plan of additive attention's scores over the
/// projected queries @p QS and keys @p KS (the keys already in the
/// queries' order): `ok` when they are [batch…, Queries, Hidden] and
/// [batch…, KV, Hidden], the same batch dims in the same order.
template <class Queries, class KV, class Hidden, class QS, class KS>
struct additive_plan {
  using q_tags = tags_of<QS>;
  using k_tags = tags_of<KS>;
  static constexpr std::size_t rank = boost::mp11::mp_size<q_tags>::value;
  static constexpr bool ranks_ok = rank >= 2 && boost::mp11::mp_size<k_tags>::value == rank;
  /// The batch dims (the queries' dims before Queries).
  using batch = boost::mp11::mp_eval_if_c<!ranks_ok, boost::mp11::mp_list<>, boost::mp11::mp_take, q_tags,
                                          boost::mp11::mp_size_t<(ranks_ok ? rank - 2 : 0)>>;
  static constexpr bool ok = ranks_ok && std::is_same_v<q_tags, boost::mp11::mp_push_back<batch, Queries, Hidden>> &&
                             std::is_same_v<k_tags, boost::mp11::mp_push_back<batch, KV, Hidden>>;
};

}  // namespace detail

/// additive_plan<Queries, KV, Hidden, QS, KS>::ok: whether the scores
/// kernel takes projected queries and keys of dims QS and KS.
using detail::additive_plan;

/// @brief Additive attention's scores [batch…, Queries, KV] from the
/// projected queries @p q ([batch…, Queries, Hidden]), keys @p k
/// ([batch…, KV, Hidden], the same batch dims in the same order) and
/// `w_v`'s weight @p w ([Score, Hidden]): Σ_h w_h tanh(q_ih + k_jh), keys
/// past a row's valid length (the masking @p m, checked as masked_softmax
/// checks lengths) 0.  Needs `has_additive_scores_kernel<Backend, T>` and operands of
/// that shape (`detail::additive_plan<…>::ok`).
template <class Queries, class KV, class Hidden, class QT, class KT, class WT, class L>
auto additive_attention_scores(QT const& q, KT const& k, WT const& w, masking<KV, L> const& m) {
  using plan = detail::additive_plan<Queries, KV, Hidden, typename QT::specs, typename KT::specs>;
  using T = typename QT::value_type;
  using Backend = typename QT::backend;
  auto const diagnose = [] {
    if constexpr (!plan::ok) {
      return std::type_identity<diagnostic::additive_scores_operands<call::additive_attention_scores,
                                                                     typename QT::specs, typename KT::specs>>{};
    } else if constexpr (!has_additive_scores_kernel<Backend, T>) {
      return std::type_identity<diagnostic::no_additive_scores_kernel<call::additive_attention_scores, Backend, T>>{};
    } else {
      using scores_specs =
          boost::mp11::mp_push_back<detail::remove_dim<Hidden, typename QT::specs>, detail::spec_for<KV, typename KT::specs>>;
      return detail::masking_diagnosis<call::masked_softmax, KV, tensor_with_dims<Backend, T, scores_specs>, L>();
    }
  }();
  if constexpr (rejects(diagnose)) {
    return ill_formed{};
  } else {
    return checked<call::additive_attention_scores>(
        [&](auto const& q, auto const& k, auto const& w) {
          using batch = typename plan::batch;
          using QS = typename QT::specs;
          using scores_specs =
              boost::mp11::mp_push_back<detail::remove_dim<Hidden, QS>, detail::spec_for<KV, typename KT::specs>>;
          using scores_t = tensor_with_dims<Backend, T, scores_specs>;
          using detail::index_of_v;
          constexpr std::size_t nb = boost::mp11::mp_size<batch>::value;
          // w_v's weight: [Score, Hidden].
          using w_row = boost::mp11::mp_front<detail::tags_of<detail::remove_dim<Hidden, typename WT::specs>>>;

          typename scores_t::extents_type sext{};
          for (std::size_t i = 0; i < nb; ++i) sext[i] = q.extents()[i];
          sext[nb] = q.extents()[index_of_v<Queries, QS>];
          sext[nb + 1] = k.extents()[index_of_v<KV, typename KT::specs>];
          scores_t out(uninitialized, sext);
          bool const record = autograd::should_record(q, k, w);
          auto node = detail::additive_scores_run<Backend, T>(
              detail::attention_side_of<batch, Queries, Hidden>(q), detail::attention_side_of<batch, KV, Hidden>(k),
              detail::attention_side_of<boost::mp11::mp_list<>, w_row, Hidden>(w),
              detail::attention_row_lengths<batch, Queries, scores_specs>(sext, m), out.data(), record);
          if (node) out.attach_grad_fn(std::move(node));
          return out;
        },
        q, k, w);
  }
}

/// @brief additive_attention_scores with the valid lengths in any form
/// `masking_of<KV>` takes: none, `std::nullopt`, a lengths tensor or a
/// `std::optional` of one.
template <class Queries, class KV, class Hidden, class QT, class KT, class WT, class... L>
  requires(sizeof...(L) <= 1 && (!is_masking_v<L> && ...))
auto additive_attention_scores(QT const& q, KT const& k, WT const& w, L const&... valid_lens) {
  return additive_attention_scores<Queries, KV, Hidden>(q, k, w, masking_of<KV>(valid_lens...));
}

}  // namespace dimtensor

/// @cond INTERNAL
// Additive attention's scores: the run-time part and node, compiled once into
// dimtensor::runtime for the CPU's float and double
// (src/instances/attention.cpp defines them): a file calls those copies
// (config.hpp, DIMTENSOR_EXTERN_INSTANCES).
#define DIMTENSOR_ADDITIVE_SCORES_INSTANCES(how, B, T)                                                                \
  how std::shared_ptr<autograd::node> detail::additive_scores_run<B, T>(                                              \
      detail::attention_side<T>, detail::attention_side<T>, detail::attention_side<T>, detail::kept_row_lengths, T*,  \
      bool);                                                                                                          \
  how class detail::additive_scores_node<B, T>;

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_ADDITIVE_SCORES_INSTANCES)
}  // namespace dimtensor
/// @endcond
