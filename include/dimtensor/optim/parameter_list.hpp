#pragma once
/// @file
/// @brief `optim::parameter_list`: the parameters an optimizer updates, from
/// a module (`for_each_parameter`) or from tensors, each kept as a handle of
/// its own type behind one interface.
///
/// Parameters have different tensor types, so the list erases them: an
/// entry keeps a copy of the tensor handle (which shares the elements and
/// the autograd state with the module's tensor) and reads the elements and
/// the gradient as a flat float or double array.  Parameters must be
/// contiguous float or double tensors.

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/core/tensor.hpp>
#include <dimtensor/nn/parameters.hpp>

namespace dimtensor::optim {

/// @brief One parameter, its type erased: a key, its elements and its gradient.
class parameter_ref {
 public:
  /// Refers to @p tensor (a contiguous float or double tensor) under @p key.
  /// The tensor is given its own autograd state if it has none, so that a
  /// later `requires_grad_()` on it reaches this entry too.
  template <class Tensor>
  parameter_ref(std::string key, Tensor& tensor) : key_(std::move(key)) {
    using T = typename Tensor::value_type;
    static_assert(is_tensor_v<Tensor> && std::is_floating_point_v<T>,
                  "dimtensor: an optimizer's parameters are float or double tensors");
    if (!tensor.is_contiguous()) {
      throw value_error("optim: the parameter " + key_ + " " +
                        dimtensor::detail::shape_string<typename Tensor::specs>(tensor.extents()) +
                        " is a strided view; an optimizer updates contiguous tensors");
    }
    if (tensor.grad_state() == nullptr) tensor.requires_grad_(false);  // creates the shared state
    holder_ = std::make_shared<Tensor>(tensor);
    state_ = tensor.grad_state();
    data_ = tensor.data();
    size_ = tensor.size();
    is_double_ = std::is_same_v<T, double>;
    grad_data_ = [](autograd::tensor_state const& s) -> void* {
      auto const& g = *static_cast<Tensor const*>(s.grad.get());
      if (!g.is_contiguous()) throw value_error("optim: a strided gradient (a backward rule is wrong)");
      return g.data();
    };
    describe_ = [](void const* t) {
      auto const& x = *static_cast<Tensor const*>(t);
      return dimtensor::detail::shape_string<typename Tensor::specs>(x.extents());
    };
  }

  /// The key (`W_q.weight`, or the position for a list of tensors).
  std::string const& key() const noexcept { return key_; }
  /// The number of elements.
  index_t size() const noexcept { return size_; }
  /// Whether the elements are double (else float).
  bool is_double() const noexcept { return is_double_; }
  /// The shape, as text (`[Out=4, In=3]`), for messages.
  std::string shape() const { return describe_(holder_.get()); }
  /// Whether the parameter holds a gradient (backward reached it since the last zero_grad).
  bool has_grad() const noexcept { return state_->grad != nullptr; }
  /// Drops the gradient.
  void zero_grad() const noexcept { state_->grad.reset(); }

  /// @brief Calls `f(data, grad, size)` with `T*` pointers of the element
  /// type (float or double) to the elements and the gradient, which must
  /// exist (has_grad()).
  template <class F>
  void visit(F&& f) const {
    void* const g = grad_data_(*state_);
    if (is_double_) {
      f(static_cast<double*>(data_), static_cast<double*>(g), size_);
    } else {
      f(static_cast<float*>(data_), static_cast<float*>(g), size_);
    }
  }

 private:
  std::string key_;
  std::shared_ptr<void> holder_;  // keeps the handle, hence the storage and the state, alive
  std::shared_ptr<autograd::tensor_state> state_;
  void* data_ = nullptr;
  index_t size_ = 0;
  bool is_double_ = false;
  void* (*grad_data_)(autograd::tensor_state const&) = nullptr;
  std::string (*describe_)(void const*) = nullptr;
};

/// @brief The parameters of an optimizer: those of a module, in its
/// `for_each_parameter` order and with its keys, or tensors given one by
/// one (keyed "0", "1", …).
///
/// Converts implicitly from a module and from one tensor, so an optimizer
/// takes either: `optim::sgd(net, 0.5)`, `optim::sgd(w, 0.5)`,
/// `optim::adam(optim::parameter_list(w, b), 1e-3)`.
class parameter_list {
 public:
  /// No parameters.
  parameter_list() = default;

  /// Every parameter of @p module.
  template <class M>
    requires(nn::Module<M> && !std::is_const_v<M> && !is_tensor_v<M>)
  parameter_list(M& module) {  // NOLINT: implicit, so optimizers take modules
    module.for_each_parameter([&](std::string const& key, auto& p) { entries_.emplace_back(key, p); }, "");
  }

  /// The tensors @p tensors, keyed by position.
  template <class... Tensors>
    requires(sizeof...(Tensors) > 0 && (is_tensor_v<Tensors> && ...) && (!std::is_const_v<Tensors> && ...))
  parameter_list(Tensors&... tensors) {  // NOLINT: implicit for one tensor
    (add(std::to_string(entries_.size()), tensors), ...);
  }

  /// Appends @p tensor under @p key.
  template <class Tensor>
  parameter_list& add(std::string key, Tensor& tensor) {
    entries_.emplace_back(std::move(key), tensor);
    return *this;
  }

  /// The number of parameters.
  std::size_t size() const noexcept { return entries_.size(); }
  /// The number of scalars in all of them.
  index_t element_count() const noexcept {
    index_t n = 0;
    for (auto const& e : entries_) n += e.size();
    return n;
  }
  /// The entries, in order.
  std::vector<parameter_ref> const& entries() const noexcept { return entries_; }
  /// First entry.
  auto begin() const noexcept { return entries_.begin(); }
  /// Past the last entry.
  auto end() const noexcept { return entries_.end(); }
  /// Drops every gradient (PyTorch's `zero_grad(set_to_none=True)`).
  void zero_grad() const noexcept {
    for (auto const& e : entries_) e.zero_grad();
  }

 private:
  std::vector<parameter_ref> entries_;
};

namespace detail {

/// Optimizer state of one parameter, in its element type.
class state_buffer {
 public:
  /// Whether the buffer has been set.
  bool empty() const noexcept { return floats_.empty() && doubles_.empty(); }
  /// The elements as T (float or double), sized @p n (zeros) on first use.
  template <class T>
  std::vector<T>& get(index_t n) {
    std::vector<T>& v = [&]() -> std::vector<T>& {
      if constexpr (std::is_same_v<T, double>) {
        return doubles_;
      } else {
        return floats_;
      }
    }();
    if (v.size() != static_cast<std::size_t>(n)) v.assign(static_cast<std::size_t>(n), T(0));
    return v;
  }

 private:
  std::vector<float> floats_;
  std::vector<double> doubles_;
};

}  // namespace detail
}  // namespace dimtensor::optim
