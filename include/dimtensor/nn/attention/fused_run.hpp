#pragma once
/// @file
/// @brief The dims-free part of the fused attention paths (nn/attention/
/// fused.hpp): operands as run-time layouts, their batch offsets, dense
/// copies where the features are strided, the kernels' calls
/// (backends/cpu/attention.hpp) and the autograd nodes of their backward
/// passes.  One body per element type, compiled into the runtime library
/// (instances.hpp), so that a model file compiles only the typed shell:
/// which dim is which, and the tensors it allocates.

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/cpu.hpp>
#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/ops/contract.hpp>

namespace dimtensor::nn::detail {

using dimtensor::detail::run_layout;
using dimtensor::detail::run_positions;

/// @brief An operand of a fused kernel as run-time data: its elements
/// (kept alive), layout, the positions of its batch dims (in the kernel's
/// batch order), of its row dim and of its feature dim, and its autograd
/// state when it requires gradients.
template <class T>
struct fused_side {
  std::shared_ptr<void const> keep;
  T const* data = nullptr;
  run_layout layout;
  run_positions batch;
  std::size_t row = 0;
  std::size_t feat = 0;
  std::shared_ptr<autograd::tensor_state> state;
};

/// Each batch entry's offset in a layout @p l whose batch dims sit at
/// @p batch (outermost first), the entries in row-major order of those dims.
inline std::vector<index_t> fused_offsets(run_layout const& l, run_positions const& batch) {
  index_t count = 1;
  for (std::size_t i = 0; i < batch.size; ++i) count *= l.ext[batch.at[i]];
  std::vector<index_t> off(static_cast<std::size_t>(count));
  std::array<index_t, dimtensor::detail::max_contract_rank> idx{};
  for (index_t b = 0; b < count; ++b) {
    index_t o = 0;
    for (std::size_t i = 0; i < batch.size; ++i) o += idx[i] * l.str[batch.at[i]];
    off[static_cast<std::size_t>(b)] = o;
    for (std::size_t i = batch.size; i-- > 0;) {
      if (++idx[i] < l.ext[batch.at[i]]) break;
      idx[i] = 0;
    }
  }
  return off;
}

/// The operand @p s with its features contiguous (what the kernels read
/// along): itself, or a dense row-major copy of it (contract.hpp's strided
/// copy, dims in their order).
template <class T>
fused_side<T> fused_dense_features(fused_side<T> s) {
  if (s.layout.str[s.feat] == 1 || s.layout.ext[s.feat] <= 1) return s;
  run_layout const dense = dimtensor::detail::dense_layout(s.layout);
  auto copy = std::make_shared<typename cpu::template storage<T>>(dimtensor::detail::element_count(dense.ext));
  run_positions in_order;
  in_order.size = s.layout.rank;
  for (std::size_t i = 0; i < s.layout.rank; ++i) in_order.at[i] = i;
  dimtensor::detail::copy_permuted<cpu>(copy->data(), s.data, s.layout, in_order);
  s.data = copy->data();
  s.keep = std::move(copy);
  s.layout = dense;
  return s;
}

/// The kernel's view of @p s (offsets in @p off).
template <class P, class T>
kernel::attention_operand<P> fused_view(fused_side<T> const& s, P* data, std::vector<index_t> const& off) {
  return {data, off.data(), s.layout.str[s.row]};
}

/// @brief The gradient of operand @p s that a backward kernel writes: a
/// dense buffer of its extents (zeroed when the kernel adds into it), its
/// batch offsets, and the hand-over to the operand's state.
template <class T>
struct fused_gradient {
  run_layout layout;
  std::shared_ptr<typename cpu::template storage<T>> buffer;
  std::vector<index_t> off;

  fused_gradient(fused_side<T> const& s, bool zeroed)
      : layout(dimtensor::detail::dense_layout(s.layout)),
        buffer(std::make_shared<typename cpu::template storage<T>>(size())),
        off(fused_offsets(layout, s.batch)) {
    if (zeroed) std::fill(buffer->data(), buffer->data() + size(), T(0));
  }
  /// Its elements.
  index_t size() const noexcept { return dimtensor::detail::element_count(layout.ext); }
  /// The kernel's view of it (rows along @p s's row dim).
  kernel::attention_operand<T> view(fused_side<T> const& s) const {
    return {buffer->data(), off.data(), layout.str[s.row]};
  }
  /// Adds it to @p s's gradient, when @p s requires one.
  void hand_to(fused_side<T> const& s) {
    if (s.state) autograd::add_gradient<cpu, T>(*s.state, std::move(buffer), size());
  }
};

/// @brief The backward pass of fused scaled dot-product attention: the
/// operands, the row lengths and softmax statistics of the forward pass,
/// and the output's layout (its gradient is dense in it).
template <class T>
class fused_attention_node final : public autograd::node {
 public:
  fused_attention_node(fused_side<T> q, fused_side<T> k, fused_side<T> v, std::vector<index_t> lens,
                       std::vector<T> stats, run_layout out, run_positions out_batch, std::size_t out_row,
                       kernel::attention_problem<T> p)
      : node("scaled_dot_product_attention"),
        q_(std::move(q)),
        k_(std::move(k)),
        v_(std::move(v)),
        lens_(std::move(lens)),
        stats_(std::move(stats)),
        out_(out),
        out_batch_(out_batch),
        out_row_(out_row),
        p_(p) {
    for (auto const* s : {&q_, &k_, &v_}) {
      if (s->state) inputs.push_back(s->state);
    }
    off_q_ = fused_offsets(q_.layout, q_.batch);
    off_k_ = fused_offsets(k_.layout, k_.batch);
    off_v_ = fused_offsets(v_.layout, v_.batch);
    p_.q = fused_view(q_, q_.data, off_q_);
    p_.k = fused_view(k_, k_.data, off_k_);
    p_.v = fused_view(v_, v_.data, off_v_);
    p_.lens = lens_.empty() ? nullptr : lens_.data();
  }

  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    run_layout const gl = dimtensor::detail::dense_layout(out_);
    auto const g_off = fused_offsets(gl, out_batch_);
    fused_gradient<T> dq(q_, false), dk(k_, true), dv(v_, true);  // dk, dv: the kernel adds into them
    backends::cpu::kernels<T>().attention_backward(p_, stats_.data(), stats_.data() + p_.batch * p_.queries,
                                         {g, g_off.data(), gl.str[out_row_]}, dq.view(q_), dk.view(k_), dv.view(v_));
    dq.hand_to(q_);
    dk.hand_to(k_);
    dv.hand_to(v_);
  }

 private:
  fused_side<T> q_, k_, v_;
  std::vector<index_t> lens_;
  std::vector<T> stats_;
  run_layout out_;
  run_positions out_batch_;
  std::size_t out_row_;
  kernel::attention_problem<T> p_;
  std::vector<index_t> off_q_, off_k_, off_v_;
};

/// @brief The run-time part of fused scaled dot-product attention: the
/// output rows into @p out (layout @p lo, batch dims at @p out_batch, rows
/// at @p out_row, features contiguous) from @p q, @p k, @p v, with the
/// valid length of each query row in @p lens (entries, then Queries; empty:
/// every key) and the scale √d; and, when @p record, the node of its
/// backward pass (null otherwise).
template <class T>
std::shared_ptr<autograd::node> fused_attention_run(fused_side<T> q, fused_side<T> k, fused_side<T> v,
                                                    std::vector<index_t> lens, T scale, T* out, run_layout const& lo,
                                                    run_positions const& out_batch, std::size_t out_row, bool record) {
  q = fused_dense_features(std::move(q));
  k = fused_dense_features(std::move(k));
  v = fused_dense_features(std::move(v));
  auto const off_q = fused_offsets(q.layout, q.batch);
  auto const off_k = fused_offsets(k.layout, k.batch);
  auto const off_v = fused_offsets(v.layout, v.batch);
  auto const off_o = fused_offsets(lo, out_batch);
  kernel::attention_problem<T> p;
  p.batch = static_cast<index_t>(off_q.size());
  p.queries = q.layout.ext[q.row];
  p.kv = k.layout.ext[k.row];
  p.d = q.layout.ext[q.feat];
  p.dv = v.layout.ext[v.feat];
  p.q = fused_view(q, q.data, off_q);
  p.k = fused_view(k, k.data, off_k);
  p.v = fused_view(v, v.data, off_v);
  p.lens = lens.empty() ? nullptr : lens.data();
  p.scale = scale;
  std::vector<T> stats(static_cast<std::size_t>(2 * p.batch * p.queries));
  backends::cpu::kernels<T>().attention_forward(p, {out, off_o.data(), lo.str[out_row]}, stats.data(),
                                      stats.data() + p.batch * p.queries);
  if (!record) return nullptr;
  return std::make_shared<fused_attention_node<T>>(std::move(q), std::move(k), std::move(v), std::move(lens),
                                                   std::move(stats), lo, out_batch, out_row, p);
}

/// @brief The backward pass of additive attention's fused scores.
template <class T>
class fused_additive_node final : public autograd::node {
 public:
  fused_additive_node(fused_side<T> q, fused_side<T> k, fused_side<T> w, std::vector<index_t> lens,
                      kernel::additive_problem<T> p)
      : node("additive_scores"), q_(std::move(q)), k_(std::move(k)), w_(std::move(w)), lens_(std::move(lens)), p_(p) {
    for (auto const* s : {&q_, &k_, &w_}) {
      if (s->state) inputs.push_back(s->state);
    }
    off_q_ = fused_offsets(q_.layout, q_.batch);
    off_k_ = fused_offsets(k_.layout, k_.batch);
    p_.q = fused_view(q_, q_.data, off_q_);
    p_.k = fused_view(k_, k_.data, off_k_);
    p_.w = w_.data;
    p_.lens = lens_.empty() ? nullptr : lens_.data();
  }

  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);  // dense [batch…, Queries, KV]
    fused_gradient<T> dq(q_, false), dk(k_, true), dw(w_, false);  // dk: the kernel adds into it
    backends::cpu::kernels<T>().additive_scores_backward(p_, g, dq.view(q_), dk.view(k_), dw.buffer->data());
    dq.hand_to(q_);
    dk.hand_to(k_);
    dw.hand_to(w_);
  }

 private:
  fused_side<T> q_, k_, w_;
  std::vector<index_t> lens_;
  kernel::additive_problem<T> p_;
  std::vector<index_t> off_q_, off_k_;
};

/// @brief The run-time part of additive attention's fused scores: writes
/// the dense scores [batch…, Queries, KV] into @p out from the projected
/// queries @p q, keys @p k and `w_v`'s weight @p w (its feature dim
/// `feat`), with each query row's valid length in @p lens (empty: every
/// key); and, when @p record, the node of its backward pass.
template <class T>
std::shared_ptr<autograd::node> fused_additive_run(fused_side<T> q, fused_side<T> k, fused_side<T> w,
                                                   std::vector<index_t> lens, T* out, bool record) {
  q = fused_dense_features(std::move(q));
  k = fused_dense_features(std::move(k));
  w = fused_dense_features(std::move(w));
  auto const off_q = fused_offsets(q.layout, q.batch);
  auto const off_k = fused_offsets(k.layout, k.batch);
  kernel::additive_problem<T> p;
  p.batch = static_cast<index_t>(off_q.size());
  p.queries = q.layout.ext[q.row];
  p.kv = k.layout.ext[k.row];
  p.hidden = q.layout.ext[q.feat];
  p.q = fused_view(q, q.data, off_q);
  p.k = fused_view(k, k.data, off_k);
  p.w = w.data;
  p.lens = lens.empty() ? nullptr : lens.data();
  backends::cpu::kernels<T>().additive_scores_forward(p, out);
  if (!record) return nullptr;
  return std::make_shared<fused_additive_node<T>>(std::move(q), std::move(k), std::move(w), std::move(lens), p);
}

}  // namespace dimtensor::nn::detail
