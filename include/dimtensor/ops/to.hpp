#pragma once
/// @file
/// @brief Moves between backends: `to<cuda>(x)`, `to<cpu>(y)`.
///
/// A tensor's backend is part of its type, and nothing moves implicitly:
/// an expression that mixes backends does not compile.  `to<Backend>(x)`
/// evaluates x and copies its elements into a new tensor of the same dims on
/// Backend (x itself when it is already there).  The move is differentiable:
/// the gradient moves back.

#include <memory>
#include <type_traits>
#include <utility>

#include <dimtensor/autograd/propagate.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace detail {

/// Copies @p n contiguous elements from @p src (on From) to @p dst (on To).
template <class To, class From, class T>
void copy_between(T* dst, T const* src, index_t n) {
  if constexpr (From::host_accessible) {
    backend_copy_from_host(To{}, dst, src, n);
  } else if constexpr (To::host_accessible) {
    backend_copy_to_host(From{}, dst, src, n);
  } else {
    auto const staged = host_buffer<T>(n);
    backend_copy_to_host(From{}, staged.get(), src, n);
    backend_copy_from_host(To{}, dst, staged.get(), n);
  }
}

/// The tensor of x's dims and element type on backend B.
template <class B, class X>
using moved_t = tensor_with_dims<B, typename X::value_type, typename X::specs>;

/// The node of a copy from backend From to To: the gradient is copied back.
template <class To, class From, class T>
class transfer_node final : public autograd::node {
 public:
  /// The copy of @p source, of @p n elements.
  transfer_node(std::shared_ptr<autograd::tensor_state> source, index_t n) : node("to"), n_(n) {
    inputs.push_back(std::move(source));
  }
  /// Copies the gradient back and adds it to the source's.
  void backward(autograd::tensor_state const& out) override {
    auto dx = std::make_shared<typename From::template storage<T>>(n_);
    copy_between<From, To>(dx->data(), static_cast<T const*>(out.grad_data), n_);
    autograd::add_gradient<From, T>(*inputs.front(), std::move(dx), n_);
  }

 private:
  index_t n_;
};

}  // namespace detail

template <class To, Expression X>
detail::moved_t<To, X> to(X const& x);

namespace detail {

/// @brief @p x evaluated into contiguous elements the host can read: on its
/// own backend when the host reads that memory, else copied to the CPU.
/// Not recorded by autograd (printing and saving read values only).
template <Expression X>
auto to_host(X const& x) {
  if constexpr (X::backend::host_accessible) {
    return eval(x).contiguous();
  } else {
    return to<cpu>(eval(x).detach());
  }
}

}  // namespace detail

/// to_host(x): @p x evaluated into contiguous elements the host can read
/// (on its own backend when the host reads that memory, else copied to
/// the CPU), not recorded by autograd: for printing, saving and plotting.
using detail::to_host;

/// @brief The tensor or expression @p x evaluated on its backend and copied
/// to backend @p To: `auto g = to<cuda>(x);` … `auto back = to<cpu>(g);`.
/// Already on To: x itself (a handle to the same elements), as PyTorch's `.to`.
template <class To, Expression X>
detail::moved_t<To, X> to(X const& x) {
  using from = typename X::backend;
  if constexpr (std::is_same_v<from, To>) {
    return eval(x);
  } else {
    auto const src = eval(x).contiguous();
    using out_t = detail::moved_t<To, X>;
    out_t out(uninitialized, src.extents());
    detail::copy_between<To, from>(out.data(), static_cast<typename X::value_type const*>(src.data()), src.size());
    if constexpr (std::is_floating_point_v<typename X::value_type>) {
      if (autograd::should_record(src)) {
        using node_t = detail::transfer_node<To, from, typename X::value_type>;
        out.attach_grad_fn(std::make_shared<node_t>(src.grad_state(), src.size()));
      }
    }
    return out;
  }
}

}  // namespace dimtensor
