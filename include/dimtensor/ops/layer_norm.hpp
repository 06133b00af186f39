#pragma once
/// @file
/// @brief Layer normalization over a tensor's last dim as one operation,
/// where the backend has the kernels (`has_layer_norm_kernel<B, T>`: the
/// CPU for float and double, backends/cpu/layer_norm.hpp): one pass per row
/// forward, one backward, each row's mean and 1/σ kept between them.
/// nn::layer_norm calls it, and composes the operations elsewhere.

#include <memory>
#include <utility>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/tensor/expression.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// Whether backend B has layer normalization's kernels for T.
template <class B, class T>
inline constexpr bool has_layer_norm_kernel = requires(T const* in, T* out, index_t n, T eps) {
  backend_layer_norm(B{}, in, in, in, out, out, out, n, n, eps);
  backend_layer_norm_backward(B{}, in, in, in, in, in, out, out, out, n, n);
};

namespace detail {

/// @brief The backward pass of layer_norm_last: dx, dw and db from the
/// input, the weight and each row's mean and 1/σ.
template <class B, class T>
class layer_norm_node final : public autograd::node {
 public:
  using storage_type = typename B::template storage<T>;

  /// A tensor's elements and state (null where no gradient flows).
  struct operand {
    std::shared_ptr<void const> keep;
    T const* data = nullptr;
    std::shared_ptr<autograd::tensor_state> state;
  };

  layer_norm_node(operand x, operand w, operand b, std::shared_ptr<storage_type> stats, index_t rows, index_t n)
      : node("layer_norm"), x_(std::move(x)), w_(std::move(w)), b_(std::move(b)), stats_(std::move(stats)),
        rows_(rows), n_(n) {
    for (auto const* o : {&x_, &w_, &b_}) {
      if (o->state) inputs.push_back(o->state);
    }
  }

  void backward(autograd::tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    auto dx = x_.state ? std::make_shared<storage_type>(rows_ * n_) : nullptr;
    auto dw = w_.state ? std::make_shared<storage_type>(n_) : nullptr;
    auto db = b_.state ? std::make_shared<storage_type>(n_) : nullptr;
    backend_layer_norm_backward(B{}, x_.data, w_.data, stats_->data(), stats_->data() + rows_, g,
                                dx ? dx->data() : nullptr, dw ? dw->data() : nullptr, db ? db->data() : nullptr,
                                rows_, n_);
    if (dx) autograd::add_gradient<B, T>(*x_.state, std::move(dx), rows_ * n_);
    if (dw) autograd::add_gradient<B, T>(*w_.state, std::move(dw), n_);
    if (db) autograd::add_gradient<B, T>(*b_.state, std::move(db), n_);
  }

 private:
  operand x_, w_, b_;
  std::shared_ptr<storage_type> stats_;  // rows_ means, then rows_ reciprocal standard deviations
  index_t rows_, n_;
};

}  // namespace detail

/// @brief (x - μ) / √(var + eps) · weight + bias along @p x's last dim, μ
/// and the (biased) variance per row, as torch.nn.functional.layer_norm;
/// @p weight and @p bias hold the last dim's extent (the caller checks
/// it).  Differentiable in all three.
template <class X, class W>
  requires has_layer_norm_kernel<typename X::backend, typename X::value_type>
X layer_norm_last(X const& x, W const& weight, W const& bias, double eps) {
  using B = typename X::backend;
  using T = typename X::value_type;
  X const xc = x.contiguous();
  X y(uninitialized, xc.extents());
  index_t const n = weight.size();
  index_t const rows = n == 0 ? 0 : xc.size() / n;
  auto stats = std::make_shared<typename B::template storage<T>>(2 * rows);
  backend_layer_norm(B{}, xc.data(), weight.data(), bias.data(), y.data(), stats->data(), stats->data() + rows, rows,
                     n, static_cast<T>(eps));
  if (autograd::should_record(xc, weight, bias)) {
    using node_t = detail::layer_norm_node<B, T>;
    auto const operand = [](auto const& t) {
      return typename node_t::operand{t.storage(), t.data(), t.requires_grad() ? t.grad_state() : nullptr};
    };
    y.attach_grad_fn(std::make_shared<node_t>(operand(xc), operand(weight), operand(bias), std::move(stats), rows, n));
  }
  return y;
}

}  // namespace dimtensor
