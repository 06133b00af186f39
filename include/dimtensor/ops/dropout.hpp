#pragma once
/// @file
/// @brief Dropout's mask applied as one operation, where the backend has
/// the kernel (`has_dropout_kernel<B, T>`: the CPU for float and double):
/// element i kept under a call's key by Philox (kernel/philox.hpp), the
/// same mask computed again for the backward pass.  nn::dropout calls it,
/// and multiplies by the same mask made on the host elsewhere.

#include <cstdint>
#include <memory>
#include <utility>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/philox.hpp>
#include <dimtensor/tensor/expression.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// Whether backend B applies dropout's mask to T in one kernel.
template <class B, class T>
inline constexpr bool has_dropout_kernel = requires(T const* in, T* out, index_t n, std::uint64_t u, T s) {
  backend_dropout(B{}, in, out, n, u, u, s);
};

namespace detail {

/// @brief The backward pass of dropout_apply: the same mask, computed again
/// from the key, applied to the gradient.
template <class B, class T>
class dropout_node final : public autograd::node {
 public:
  dropout_node(std::shared_ptr<autograd::tensor_state> source, index_t n, std::uint64_t key, std::uint64_t threshold,
               T scale)
      : node("dropout"), n_(n), key_(key), threshold_(threshold), scale_(scale) {
    inputs.push_back(std::move(source));
  }

  void backward(autograd::tensor_state const& out) override {
    auto dx = std::make_shared<typename B::template storage<T>>(n_);
    backend_dropout(B{}, static_cast<T const*>(out.grad_data), dx->data(), n_, key_, threshold_, scale_);
    autograd::add_gradient<B, T>(*inputs.front(), std::move(dx), n_);
  }

 private:
  index_t n_;
  std::uint64_t key_, threshold_;
  T scale_;
};

}  // namespace detail

/// @brief @p x with element i (row-major) times @p scale where
/// kernel::dropout_keeps(i, key, threshold), else 0.  Differentiable: the
/// gradient takes the same mask.
template <class X>
  requires has_dropout_kernel<typename X::backend, typename X::value_type>
X dropout_apply(X const& x, std::uint64_t key, std::uint64_t threshold, typename X::value_type scale) {
  using B = typename X::backend;
  using T = typename X::value_type;
  X const xc = x.contiguous();
  X y(uninitialized, xc.extents());
  backend_dropout(B{}, xc.data(), y.data(), xc.size(), key, threshold, scale);
  if (autograd::should_record(xc)) {
    y.attach_grad_fn(std::make_shared<detail::dropout_node<B, T>>(xc.grad_state(), xc.size(), key, threshold, scale));
  }
  return y;
}

}  // namespace dimtensor
