#pragma once
/// @file
/// @brief `scaled_dot_product_attention<Queries, KV, Feat>(q, k, v,
/// valid_lens…)`: d2l's scaled dot-product attention as one operation,
/// `bmm(masked_softmax(q kᵀ / √d, valid_lens), v)` over named dims, with
/// its backward rule beside it.
///
/// Where the operands have attention's usual shape (queries [batch…,
/// Queries, Feat] and keys [batch…, KV, Feat] with Feat last, values
/// [batch…, KV, ValueFeat] with one feature dim, last, the same batch dims
/// in all three, in any order), the operation calls the backend's attention
/// kernels, `backend_attention_forward` and `backend_attention_backward`
/// (kernel/attention.hpp's problem: each operand a base pointer, per-entry
/// offsets and a row stride, so strided views such as the named multi-head
/// form's [Batch, Queries, Heads, HeadFeat] are read in place).  Every
/// backend has them for float and double: the CPU's are fused (the weights are never stored:
/// backends/cpu/attention.hpp), the others' are the generic ones
/// (backends/generic/attention.hpp: batched products and the masked
/// softmax).  Other shapes and element types run the same formula as
/// operations (`contract`, `masked_softmax`), with the same numbers up to
/// rounding.
///
/// The valid lengths come as one `masking<KV, L>` (ops/masking.hpp; the
/// forms `masked_softmax<KV>` takes are turned into one by `masking_of`)
/// and are checked as masked_softmax checks them (its messages).  Here
/// they become the one form every kernel reads, `kernel::row_lengths`: in
/// place when the lengths' dims lead the kernels' row order (entries,
/// then Queries), laid out in that order otherwise.  The masking's key
/// mask and additive mask become operands of the problem (read in place,
/// broadcast dims at stride 0: ops/mask_parts.hpp) and its causal masking
/// a flag; their dims are checked at compile time, their extents here.
///
/// The dims-free part (operands as run-time layouts, the kernels' calls,
/// the backward node) is one body per (backend, element type), compiled
/// into the runtime library for the CPU's float and double (declared at
/// the end of this file, defined in src/instances/attention.cpp).

#include <algorithm>
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

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/mask_parts.hpp>
#include <dimtensor/ops/masked_softmax.hpp>
#include <dimtensor/ops/masking.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// Whether backend @p B has the attention kernels for element type @p T
/// (every backend has them for float and double).
template <class B, class T>
inline constexpr bool has_attention_kernels =
    requires(kernel::attention_problem<T> const& p, kernel::attention_operand<T> const& o, T* stats) {
      backend_attention_forward(B{}, p, o, stats, stats);
    };

namespace detail {

/// @brief An operand of the attention kernels as run-time data: its
/// elements (kept alive), layout, the positions of its batch dims (in the
/// kernels' batch order), of its row dim and of its feature dim, and its
/// autograd state when it requires gradients.
template <class T>
struct attention_side {
  std::shared_ptr<void const> keep;
  T const* data = nullptr;
  kernel::layout layout;
  kernel::positions batch;
  std::size_t row = 0;
  std::size_t feat = 0;
  std::shared_ptr<autograd::tensor_state> state;
};

/// The operand @p s with its features contiguous (what the kernels read
/// along): itself, or a dense row-major copy of it (dims in their order).
template <class B, class T>
attention_side<T> attention_dense_features(attention_side<T> s) {
  if (s.layout.str[s.feat] == 1 || s.layout.ext[s.feat] <= 1) return s;
  kernel::layout const dense = dense_layout(s.layout);
  auto copy = std::make_shared<typename B::template storage<T>>(element_count(dense.ext));
  kernel::positions in_order;
  in_order.size = s.layout.rank;
  for (std::size_t i = 0; i < s.layout.rank; ++i) in_order.at[i] = i;
  copy_permuted<B>(copy->data(), s.data, s.layout, in_order);
  s.data = copy->data();
  s.keep = std::move(copy);
  s.layout = dense;
  return s;
}

/// The kernels' view of @p s (offsets in @p off).
template <class P, class T>
kernel::attention_operand<P> attention_view(attention_side<T> const& s, P* data, std::vector<index_t> const& off) {
  return {data, off.data(), s.layout.str[s.row]};
}

/// @brief The gradient of operand @p s that a backward kernel writes: a
/// dense buffer of its extents (zeroed when the kernel adds into it), its
/// batch offsets, and the hand-over to the operand's state.
template <class B, class T>
struct attention_gradient {
  kernel::layout layout;
  std::shared_ptr<typename B::template storage<T>> buffer;
  std::vector<index_t> off;

  attention_gradient(attention_side<T> const& s, bool zeroed)
      : layout(dense_layout(s.layout)),
        buffer(std::make_shared<typename B::template storage<T>>(size())),
        off(kernel::entry_offsets(layout, s.batch)) {
    if (zeroed) backend_fill(B{}, buffer->data(), size(), T(0));
  }
  /// Its elements.
  index_t size() const noexcept { return element_count(layout.ext); }
  /// The kernels' view of it (rows along @p s's row dim).
  kernel::attention_operand<T> view(attention_side<T> const& s) const {
    return {buffer->data(), off.data(), layout.str[s.row]};
  }
  /// Adds it to @p s's gradient, when @p s requires one.
  void hand_to(attention_side<T> const& s) {
    if (s.state) autograd::add_gradient<B, T>(*s.state, std::move(buffer), size());
  }
};

/// @brief Each query row's valid length as the kernels read it
/// (`kernel::row_lengths`), with the elements it points to kept alive.
struct kept_row_lengths {
  /// The lengths' elements.
  std::shared_ptr<void const> keep;
  /// The kernels' form.
  kernel::row_lengths rows;
};

/// @brief The key masks, additive mask and causal flag as the kernels read
/// them (kernel::attention_problem's `keep`, `bias`, `causal`), with what
/// they point to kept alive.
template <class T>
struct kept_key_masks {
  /// The key mask's operand (its view's data null: none).
  kept_mask_operand<bool> keep;
  /// The additive mask's operand (its view's data null: none).
  kept_mask_operand<T> bias;
  /// Causal along the queries.
  bool causal = false;
};

/// @brief The backward pass of scaled dot-product attention: the operands,
/// the row lengths, the masks and the forward kernel's row statistics, and
/// the output's layout (its gradient is dense in it).
template <class B, class T>
class attention_node final : public autograd::node {
 public:
  using storage_t = typename B::template storage<T>;

  attention_node(attention_side<T> q, attention_side<T> k, attention_side<T> v, kept_row_lengths lens,
                 kept_key_masks<T> masks, std::shared_ptr<storage_t> stats, kernel::layout out, kernel::positions out_batch, std::size_t out_row,
                 kernel::attention_problem<T> p)
      : node("scaled_dot_product_attention"),
        q_(std::move(q)),
        k_(std::move(k)),
        v_(std::move(v)),
        lens_(std::move(lens)),
        masks_(std::move(masks)),
        stats_(std::move(stats)),
        out_(out),
        out_batch_(out_batch),
        out_row_(out_row),
        p_(p) {
    for (auto const* s : {&q_, &k_, &v_}) {
      if (s->state) inputs.push_back(s->state);
    }
    off_q_ = kernel::entry_offsets(q_.layout, q_.batch);
    off_k_ = kernel::entry_offsets(k_.layout, k_.batch);
    off_v_ = kernel::entry_offsets(v_.layout, v_.batch);
    p_.q = attention_view(q_, q_.data, off_q_);
    p_.k = attention_view(k_, k_.data, off_k_);
    p_.v = attention_view(v_, v_.data, off_v_);
  }

  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    kernel::layout const gl = dense_layout(out_);
    auto const g_off = kernel::entry_offsets(gl, out_batch_);
    attention_gradient<B, T> dq(q_, false), dk(k_, true), dv(v_, true);  // dk, dv: a kernel may add into them
    T const* const stats = stats_->data();
    backend_attention_backward(B{}, p_, stats, stats + p_.batch * p_.queries,
                               kernel::attention_operand<T const>{g, g_off.data(), gl.str[out_row_]}, dq.view(q_),
                               dk.view(k_), dv.view(v_));
    dq.hand_to(q_);
    dk.hand_to(k_);
    dv.hand_to(v_);
  }

 private:
  attention_side<T> q_, k_, v_;
  kept_row_lengths lens_;    // p_.lens points into it
  kept_key_masks<T> masks_;  // p_.keep and p_.bias point into it
  std::shared_ptr<storage_t> stats_;
  kernel::layout out_;
  kernel::positions out_batch_;
  std::size_t out_row_;
  kernel::attention_problem<T> p_;
  std::vector<index_t> off_q_, off_k_, off_v_;
};

/// @brief The run-time part of scaled dot-product attention: the output
/// rows into @p out (layout @p lo, batch dims at @p out_batch, rows at
/// @p out_row, features contiguous) from @p q, @p k, @p v, with the valid
/// length of each query row in @p lens (rows in the kernels' order:
/// entries, then Queries) and the scale √d; and, when @p record, the node
/// of its backward pass (null otherwise).
template <class B, class T>
std::shared_ptr<autograd::node> attention_run(attention_side<T> q, attention_side<T> k, attention_side<T> v,
                                              kept_row_lengths lens, kept_key_masks<T> masks, T scale, T* out,
                                              kernel::layout const& lo,
                                              kernel::positions const& out_batch, std::size_t out_row, bool record) {
  q = attention_dense_features<B>(std::move(q));
  k = attention_dense_features<B>(std::move(k));
  v = attention_dense_features<B>(std::move(v));
  auto const off_q = kernel::entry_offsets(q.layout, q.batch);
  auto const off_k = kernel::entry_offsets(k.layout, k.batch);
  auto const off_v = kernel::entry_offsets(v.layout, v.batch);
  auto const off_o = kernel::entry_offsets(lo, out_batch);
  kernel::attention_problem<T> p;
  p.batch = static_cast<index_t>(off_q.size());
  p.queries = q.layout.ext[q.row];
  p.kv = k.layout.ext[k.row];
  p.d = q.layout.ext[q.feat];
  p.dv = v.layout.ext[v.feat];
  p.q = attention_view(q, q.data, off_q);
  p.k = attention_view(k, k.data, off_k);
  p.v = attention_view(v, v.data, off_v);
  p.lens = lens.rows;
  p.keep = masks.keep.view;
  p.bias = masks.bias.view;
  p.causal = masks.causal;
  p.scale = scale;
  auto stats = std::make_shared<typename B::template storage<T>>(std::max<index_t>(2 * p.batch * p.queries, 1));
  backend_attention_forward(B{}, p, kernel::attention_operand<T>{out, off_o.data(), lo.str[out_row]}, stats->data(),
                            stats->data() + p.batch * p.queries);
  if (!record) return nullptr;
  return std::make_shared<attention_node<B, T>>(std::move(q), std::move(k), std::move(v), std::move(lens),
                                                std::move(masks), std::move(stats), lo, out_batch, out_row, p);
}

/// @brief The type-level plan of attention over queries @p QS, keys @p KS,
/// values @p VS (shapes): `ok` when the backend's attention kernels take
/// them.
template <class Queries, class KV, class Feat, class QS, class KS, class VS>
struct attention_plan {
  /// The scores' contraction (over Feat) and the output's (over KV).
  using scores_plan = contraction_plan<Feat, QS, KS>;
  using output_plan = contraction_plan<KV, typename scores_plan::result, VS>;
  /// The batch dims, in the queries' order.
  using batch = typename scores_plan::batch;
  /// The output's shape (the composed formula's: queries' dims without Feat, then ValueFeat).
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
  /// Whether the kernels take these operands: attention's shapes, features last.
  static constexpr bool ok = shapes_ok && std::is_same_v<boost::mp11::mp_back<tags_of<QS>>, Feat> &&
                             std::is_same_v<boost::mp11::mp_back<tags_of<KS>>, Feat> &&
                             std::is_same_v<boost::mp11::mp_back<tags_of<VS>>, value_feat>;
};

/// @brief The masking @p m as the kernels read it: each query row's valid
/// length, rows in the kernels' order (the batch dims @p Batch, then
/// @p Queries), for scores of dims @p S (the queries' dims without the
/// features, then KV) and extents @p sext; checked as masked_softmax<KV>
/// checks lengths against its scores (its messages).
///
/// Lengths whose dims lead the kernels' order are read in place (a
/// pointer and a repeat); others (e.g. [Batch, Queries] for the named
/// multi-head form, whose kernels take the rows by entry (Batch, Heads)
/// and then Queries) are laid out in the kernels' order first.
template <class Batch, class Queries, class S, class KV, class L, class P, class A, class Q, std::size_t R>
kept_row_lengths attention_row_lengths(std::array<index_t, R> const& sext, masking<KV, L, P, A, Q> const& m) {
  if constexpr (std::is_void_v<L>) {
    return {};
  } else {
    if (!m.lengths) return {};
    auto const lens = as_int64(*m.lengths).contiguous();
    using LT = std::remove_cvref_t<decltype(lens)>;
    using B = typename LT::backend;
    index_t const repeat = check_valid_lens_extents<KV, S>("masked_softmax", "scores", sext, lens);
    using order = boost::mp11::mp_rename<boost::mp11::mp_push_back<Batch, Queries>, boost::mp11::mp_list>;
    using lens_tags = boost::mp11::mp_rename<tags_of<typename LT::specs>, boost::mp11::mp_list>;
    constexpr std::size_t nl = boost::mp11::mp_size<lens_tags>::value;
    if constexpr (nl <= boost::mp11::mp_size<order>::value &&
                  std::is_same_v<lens_tags, boost::mp11::mp_take_c<order, (nl <= boost::mp11::mp_size<order>::value ? nl : 0)>>) {
      return {lens.storage(), {lens.data(), repeat}};
    } else {
      // The rows in the scores' order are their dims without KV, row-major;
      // the kernels' order permutes those dims.
      using lines = boost::mp11::mp_pop_back<tags_of<S>>;
      constexpr std::size_t r = boost::mp11::mp_size<lines>::value;
      std::array<index_t, r> line_stride{};
      index_t count = 1;
      for (std::size_t k = r; k-- > 0;) {
        line_stride[k] = count;
        count *= sext[k];
      }
      constexpr auto pos = positions_in<lines, order>::value;
      std::array<index_t, r> ext{};
      for (std::size_t k = 0; k < r; ++k) ext[k] = sext[pos[k]];
      auto const host = to_host(lens);
      std::vector<index_t> rows(static_cast<std::size_t>(count));
      std::array<index_t, r> idx{};
      for (index_t c = 0; c < count; ++c) {
        index_t line = 0;
        for (std::size_t k = 0; k < r; ++k) line += idx[k] * line_stride[pos[k]];
        rows[static_cast<std::size_t>(c)] = host.data()[line / repeat];
        for (std::size_t k = r; k-- > 0;) {
          if (++idx[k] < ext[k]) break;
          idx[k] = 0;
        }
      }
      auto laid = std::make_shared<typename B::template storage<index_t>>(count);
      backend_copy_from_host(B{}, laid->data(), rows.data(), count);
      index_t const* const data = laid->data();
      return {std::move(laid), {data, 1}};
    }
  }
}

/// @p x as an operand of the attention kernels: its batch dims @p Batch
/// (in that order), its row dim @p Row and feature dim @p Feat by
/// position, and its autograd state when it requires gradients.
template <class Batch, class Row, class Feat, class X>
attention_side<typename X::value_type> attention_side_of(X const& x) {
  using S = typename X::specs;
  attention_side<typename X::value_type> s{x.storage(),          x.data(),
                                           kernel::layout(x.extents(), x.strides()),
                                           positions_in<S, Batch>::value,
                                           index_of_v<Row, S>,   index_of_v<Feat, S>,
                                           nullptr};
  if (x.requires_grad()) s.state = x.grad_state();
  return s;
}

}  // namespace detail

/// @brief d2l's scaled dot-product attention over named dims:
/// `contract<KV>(masked_softmax<KV>(contract<Feat>(q, k) / √d, valid_lens…), v)`,
/// with d the extent of @p Feat, as one operation with one backward rule.
///
/// @p queries have @p Queries and @p Feat, @p keys @p KV and @p Feat,
/// @p values @p KV and their feature dim; the other dims are shared batch
/// dims.  @p valid_lens: none, `std::nullopt`, a `std::optional` of lengths,
/// or a lengths tensor over the scores' leading dims (masked_softmax's
/// rules and messages).  The result has the queries' dims without Feat,
/// then the values' feature dim.  The weights are not returned (the
/// attention modules keep them, computed when asked for).
template <class Queries, class KV, class Feat, Expression Q, Expression K, Expression V, class L, class P, class A,
          class C>
auto scaled_dot_product_attention(Q const& queries, K const& keys, V const& values,
                                  masking<KV, L, P, A, C> const& m) {
  auto const q = dimtensor::eval(queries);
  auto const k = dimtensor::eval(keys);
  auto const v = dimtensor::eval(values);
  using plan = detail::attention_plan<Queries, KV, Feat, typename decltype(q)::specs, typename decltype(k)::specs,
                                      typename decltype(v)::specs>;
  using T = typename decltype(q)::value_type;
  using Backend = typename decltype(q)::backend;
  if constexpr (plan::ok && has_attention_kernels<Backend, T>) {
    using scores_t = tensor_with_dims<Backend, T, typename plan::scores_plan::result>;
    if constexpr (rejects(first_diagnosis(
                      detail::masking_diagnosis<call::masked_softmax, KV, scores_t, L>(),
                      detail::mask_parts_diagnosis<call::scaled_dot_product_attention, KV, Queries, scores_t,
                                                   masking<KV, L, P, A, C>>::value()))) {
      return ill_formed{};
    } else {
      // The kernels' path: the lengths in their one form (kernel::row_lengths),
      // then one dims-free call.
      using QS = typename decltype(q)::specs;
      using batch = typename plan::batch;
      using VF = typename plan::value_feat;
      using out_t = tensor_with_dims<Backend, T, typename plan::output>;
      using OS = typename out_t::specs;
      using detail::index_of_v;
      using detail::positions_in;
      index_t const nk = k.extents()[index_of_v<KV, typename decltype(k)::specs>];
      index_t const d = q.extents()[index_of_v<Feat, QS>];
      index_t const dv = v.extents()[index_of_v<VF, typename decltype(v)::specs>];
      constexpr auto from_q = positions_in<QS, detail::tags_of<detail::remove_dim<Feat, QS>>>::value;

      // The scores' extents, which the lengths are checked against; the output's.
      std::array<index_t, from_q.size() + 1> sext{};
      typename out_t::extents_type oext{};
      for (std::size_t i = 0; i < from_q.size(); ++i) sext[i] = oext[i] = q.extents()[from_q[i]];
      sext[from_q.size()] = nk;
      oext[from_q.size()] = dv;
      detail::kept_row_lengths lens =
          detail::attention_row_lengths<batch, Queries, typename plan::scores_plan::result>(sext, m);
      using scores_s = typename plan::scores_plan::result;
      detail::kept_key_masks<T> masks;
      if constexpr (!std::is_void_v<P>) {
        if (m.keep) {
          detail::check_mask_extents<scores_s>("scaled_dot_product_attention", "key_mask", sext, *m.keep);
          masks.keep = detail::mask_operand<batch, Queries, scores_s>(sext, *m.keep);
        }
      }
      if constexpr (!std::is_void_v<A>) {
        if (m.additive) {
          detail::check_mask_extents<scores_s>("scaled_dot_product_attention", "additive_mask", sext, *m.additive);
          masks.bias = detail::mask_operand<batch, Queries, scores_s>(sext, *m.additive);
        }
      }
      masks.causal = m.is_causal;
      out_t out(uninitialized, oext);
      // d2l divides by math.sqrt(d): a double, rounded to T.
      T const scale = static_cast<T>(std::sqrt(static_cast<double>(d)));
      auto node = detail::attention_run<Backend, T>(
          detail::attention_side_of<batch, Queries, Feat>(q), detail::attention_side_of<batch, KV, Feat>(k),
          detail::attention_side_of<batch, KV, VF>(v), std::move(lens), std::move(masks), scale, out.data(),
          kernel::layout(out.extents(), out.strides()), positions_in<OS, batch>::value, index_of_v<Queries, OS>,
          autograd::should_record(q, k, v));
      if (node) out.attach_grad_fn(std::move(node));
      return out;
    }
  } else {
    index_t const d = q.template extent<Feat>();
    // d2l divides by math.sqrt(d): a double, rounded to T, then a division.
    auto const scores = contract<Feat>(q, k) / static_cast<T>(std::sqrt(static_cast<double>(d)));
    return contract<KV>(masked_softmax<KV>(scores, m), v);
  }
}

/// @brief scaled_dot_product_attention with the valid lengths in any form
/// `masking_of<KV>` takes: none, `std::nullopt`, a lengths tensor or a
/// `std::optional` of one.
template <class Queries, class KV, class Feat, Expression Q, Expression K, Expression V, class... L>
  requires(sizeof...(L) <= 1 && (!is_masking_v<L> && ...))
auto scaled_dot_product_attention(Q const& queries, K const& keys, V const& values, L const&... valid_lens) {
  return scaled_dot_product_attention<Queries, KV, Feat>(queries, keys, values, masking_of<KV>(valid_lens...));
}

}  // namespace dimtensor

/// @cond INTERNAL
// Scaled dot-product attention's run-time part and node, compiled once into
// dimtensor::runtime for the CPU's float and double
// (src/instances/attention.cpp defines them): a file calls those copies
// (config.hpp, DIMTENSOR_EXTERN_INSTANCES).
#define DIMTENSOR_ATTENTION_INSTANCES(how, B, T)                                                                         \
  how std::shared_ptr<autograd::node> detail::attention_run<B, T>(                                                       \
      detail::attention_side<T>, detail::attention_side<T>, detail::attention_side<T>, detail::kept_row_lengths,         \
      detail::kept_key_masks<T>, T, T*, kernel::layout const&, kernel::positions const&, std::size_t, bool);     \
  how class detail::attention_node<B, T>;

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_ATTENTION_INSTANCES)
}  // namespace dimtensor
/// @endcond
