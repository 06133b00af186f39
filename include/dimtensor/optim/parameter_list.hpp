#pragma once
/// @file
/// @brief `optim::parameter_list`: the parameters an optimizer updates, from
/// a module (`for_each_parameter`) or from tensors, each kept as a handle of
/// its own type behind one interface.
///
/// Parameters have different tensor types, so the list erases them: an
/// entry keeps a copy of the tensor handle (which shares the elements and
/// the autograd state with the module's tensor) and the updates the
/// optimizers make, instantiated for the parameter's element type (float or
/// double) and backend when the entry is made.  Each update runs on the
/// parameter's own backend, over its elements and its gradient as flat
/// arrays; the optimizer states live there too.  Parameters must be
/// contiguous float or double tensors.

#include <cmath>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::optim {

class parameter_ref;

namespace detail {

/// What one SGD step needs besides the arrays (see `optim::sgd`).
struct sgd_coefficients {
  double lr;            ///< The learning rate.
  double momentum;      ///< The momentum factor (0: none).
  double weight_decay;  ///< The L2 penalty (0: none).
  bool started;         ///< Whether the momentum buffer holds a previous step's value.
};

/// What one Adam step needs besides the arrays (see `optim::adam`).
struct adam_coefficients {
  double lr;                ///< The learning rate.
  double beta1;             ///< The decay rate of the first moment.
  double beta2;             ///< The decay rate of the second moment.
  double eps;               ///< Added to the denominator.
  double weight_decay;      ///< The L2 penalty (0: none).
  double bias_correction1;  ///< 1 - beta1^t.
  double bias_correction2;  ///< 1 - beta2^t.
};

/// @brief Element i of an SGD step, PyTorch's rule in the element type:
/// d = g (+ wd·p), b = started ? μ·b + d : d (with momentum), p += −lr·d.
template <class T>
struct sgd_update {
  T* data;          ///< The parameter.
  T const* grad;    ///< Its gradient.
  T* buf;           ///< The momentum buffer (unused without momentum).
  T wd;             ///< The weight decay, as T.
  T mu;             ///< The momentum, as T.
  T step_size;      ///< −lr, as T.
  bool decay;       ///< Whether weight_decay ≠ 0.
  bool momentum;    ///< Whether momentum ≠ 0.
  bool started;     ///< Whether buf holds a previous step's value.

  /// Updates element @p i.
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    T d = grad[i];
    if (decay) d = d + wd * data[i];
    if (momentum) {
      buf[i] = started ? buf[i] * mu + d : d;
      d = buf[i];
    }
    data[i] = data[i] + step_size * d;
  }
};

/// @brief Element i of an Adam step, PyTorch's rule in the element type
/// (the bias corrections computed in double by the caller).
template <class T>
struct adam_update {
  T* data;                ///< The parameter.
  T const* grad;          ///< Its gradient.
  T* m;                   ///< The first moment.
  T* v;                   ///< The second moment.
  T b1;                   ///< β₁.
  T b2;                   ///< β₂.
  T one_minus_b1;         ///< 1 − β₁.
  T one_minus_b2;         ///< 1 − β₂.
  T wd;                   ///< The weight decay.
  T correction2_sqrt;     ///< √(1 − β₂ᵗ).
  T step_size;            ///< −lr / (1 − β₁ᵗ).
  T epsilon;              ///< eps.
  bool decay;             ///< Whether weight_decay ≠ 0.

  /// Updates element @p i.
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    T g = grad[i];
    if (decay) g = g + wd * data[i];
    m[i] = m[i] * b1 + one_minus_b1 * g;
    v[i] = v[i] * b2 + one_minus_b2 * (g * g);
    T const denom = std::sqrt(v[i]) / correction2_sqrt + epsilon;
    data[i] = data[i] + step_size * (m[i] / denom);
  }
};

/// Element i of the squares, in double, of @p n elements, zero past n (padding).
template <class T>
struct square_in_double {
  double* out;     ///< The squares.
  T const* in;     ///< The elements.
  index_t n;       ///< The number of elements.

  /// Writes out[i].
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const {
    double const x = i < n ? static_cast<double>(in[i]) : 0.0;
    out[i] = x * x;
  }
};

/// Element i multiplied by a factor.
template <class T>
struct scale_elements {
  T* x;   ///< The elements.
  T f;    ///< The factor.

  /// Scales x[i].
  DIMTENSOR_HOST_DEVICE void operator()(index_t i) const { x[i] = x[i] * f; }
};

/// @brief Optimizer state of one parameter: @p n elements of its type on its
/// backend, zeros when first used.
class state_buffer {
 public:
  /// Whether the buffer has been set.
  bool empty() const noexcept { return data_ == nullptr; }
  /// The number of elements (0 until set).
  index_t size() const noexcept { return size_; }

 private:
  friend class optim::parameter_ref;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
  index_t size_ = 0;
  void const* owner_ = nullptr;  // the operations that allocated it: one element type and backend
};

/// The updates of a parameter of element type T on Backend, as plain functions.
template <class Backend, class T>
struct parameter_operations {
  /// Allocates @p n zeros of T on Backend; @p data receives the first.
  static std::shared_ptr<void> zeros(index_t n, void*& data) {
    auto storage = std::make_shared<typename Backend::template storage<T>>(n);
    backend_fill(Backend{}, storage->data(), n, T(0));
    data = storage->data();
    return storage;
  }

  /// One SGD step over @p n elements.
  static void sgd(void* data, void const* grad, void* buf, index_t n, sgd_coefficients const& c) {
    backend_for_each(Backend{}, n,
                     sgd_update<T>{static_cast<T*>(data), static_cast<T const*>(grad), static_cast<T*>(buf),
                                   static_cast<T>(c.weight_decay), static_cast<T>(c.momentum),
                                   static_cast<T>(-c.lr), c.weight_decay != 0, c.momentum != 0, c.started});
  }

  /// One Adam step over @p n elements.
  static void adam(void* data, void const* grad, void* m, void* v, index_t n, adam_coefficients const& c) {
    backend_for_each(Backend{}, n,
                     adam_update<T>{static_cast<T*>(data), static_cast<T const*>(grad), static_cast<T*>(m),
                                    static_cast<T*>(v), static_cast<T>(c.beta1), static_cast<T>(c.beta2),
                                    static_cast<T>(1 - c.beta1), static_cast<T>(1 - c.beta2),
                                    static_cast<T>(c.weight_decay), static_cast<T>(std::sqrt(c.bias_correction2)),
                                    static_cast<T>(-(c.lr / c.bias_correction1)), static_cast<T>(c.eps),
                                    c.weight_decay != 0});
  }

  /// The sum of the squares of @p n elements, in double.  The squares are
  /// laid out as [rows, columns] (zero-padded) and summed down the columns
  /// first, so that every column is a line of its own to the backend.
  static double squared_sum(void const* x, index_t n) {
    if (n <= 0) return 0;
    index_t const columns = n < 1024 ? n : 1024;
    index_t const rows = (n + columns - 1) / columns;
    typename Backend::template storage<double> squares(rows * columns);
    backend_for_each(Backend{}, rows * columns, square_in_double<T>{squares.data(), static_cast<T const*>(x), n});
    typename Backend::template storage<double> partial(columns);
    backend_sum(Backend{}, static_cast<double const*>(squares.data()), partial.data(), 1, rows, columns);
    typename Backend::template storage<double> total(1);
    backend_sum(Backend{}, static_cast<double const*>(partial.data()), total.data(), 1, columns, 1);
    double host = 0;
    backend_copy_to_host(Backend{}, &host, static_cast<double const*>(total.data()), 1);
    return host;
  }

  /// Multiplies @p n elements by @p factor (rounded to T).
  static void scale(void* x, index_t n, double factor) {
    backend_for_each(Backend{}, n, scale_elements<T>{static_cast<T*>(x), static_cast<T>(factor)});
  }

  /// Copies @p n elements from the backend's memory at @p from to host memory at @p to.
  static void to_host(void* to, void const* from, index_t n) {
    backend_copy_to_host(Backend{}, static_cast<T*>(to), static_cast<T const*>(from), n);
  }

  /// Copies @p n elements from host memory at @p from to the backend's memory at @p to.
  static void from_host(void* to, void const* from, index_t n) {
    backend_copy_from_host(Backend{}, static_cast<T*>(to), static_cast<T const*>(from), n);
  }
};

/// A parameter's operations, type-erased.
struct operations_table {
  std::shared_ptr<void> (*zeros)(index_t, void*&);                                    ///< parameter_operations::zeros
  void (*sgd)(void*, void const*, void*, index_t, sgd_coefficients const&);           ///< parameter_operations::sgd
  void (*adam)(void*, void const*, void*, void*, index_t, adam_coefficients const&);  ///< parameter_operations::adam
  double (*squared_sum)(void const*, index_t);                                        ///< parameter_operations::squared_sum
  void (*scale)(void*, index_t, double);                                              ///< parameter_operations::scale
  void (*to_host)(void*, void const*, index_t);                                       ///< parameter_operations::to_host
  void (*from_host)(void*, void const*, index_t);                                     ///< parameter_operations::from_host
  std::string_view backend_name;                                                      ///< The backend's name.
  bool host_accessible;                                                               ///< Backend::host_accessible.
  void const* grad_type;                                                              ///< The tag of the gradient's storage type.
};

/// The table of parameter_operations<Backend, T>.
template <class Backend, class T>
inline constexpr operations_table operations_of{
    &parameter_operations<Backend, T>::zeros,       &parameter_operations<Backend, T>::sgd,
    &parameter_operations<Backend, T>::adam,        &parameter_operations<Backend, T>::squared_sum,
    &parameter_operations<Backend, T>::scale,       &parameter_operations<Backend, T>::to_host,
    &parameter_operations<Backend, T>::from_host,   Backend::name,
    Backend::host_accessible,                       &autograd::type_tag<typename Backend::template storage<T>>};

}  // namespace detail

/// @brief One parameter, its type erased: a key, its elements and its
/// gradient, and the optimizers' updates for its element type and backend.
class parameter_ref {
 public:
  /// Refers to @p tensor (a contiguous float or double tensor, on any
  /// backend) under @p key.  The tensor is given its own autograd state if
  /// it has none, so that a later `requires_grad_()` on it reaches this
  /// entry too.
  template <class Tensor>
  parameter_ref(std::string key, Tensor& tensor) : key_(std::move(key)) {
    using T = typename Tensor::value_type;
    static_assert(is_tensor_v<Tensor> && std::is_floating_point_v<T>,
                  "dimtensor: an optimizer's parameters are float or double tensors");
    if (!tensor.is_contiguous()) {
      throw value_error("optim: the parameter " + key_ + " " +
                        shape_string<typename Tensor::specs>(tensor.extents()) +
                        " is a strided view; an optimizer updates contiguous tensors");
    }
    if (tensor.grad_state() == nullptr) tensor.requires_grad_(false);  // creates the shared state
    holder_ = std::make_shared<Tensor>(tensor);
    state_ = tensor.grad_state();
    data_ = tensor.data();
    size_ = tensor.size();
    is_double_ = std::is_same_v<T, double>;
    ops_ = &detail::operations_of<typename Tensor::backend, T>;
    grad_data_ = [](autograd::tensor_state const& s) -> void* {
      if (s.grad_type != &autograd::type_tag<typename Tensor::storage_type>) {
        throw value_error("optim: a gradient of another type than its parameter (a backward rule is wrong)");
      }
      return s.grad_data;
    };
    describe_ = [](void const* t) {
      auto const& x = *static_cast<Tensor const*>(t);
      return shape_string<typename Tensor::specs>(x.extents());
    };
  }

  /// The key (`W_q.weight`, or the position for a list of tensors).
  std::string const& key() const noexcept { return key_; }
  /// The number of elements.
  index_t size() const noexcept { return size_; }
  /// Whether the elements are double (else float).
  bool is_double() const noexcept { return is_double_; }
  /// The name of the parameter's backend ("cpu", "thrust_omp", "cuda", …).
  std::string_view backend_name() const noexcept { return ops_->backend_name; }
  /// The shape, as text (`[Out=4, In=3]`), for messages.
  std::string shape() const { return describe_(holder_.get()); }
  /// Whether the parameter holds a gradient (backward reached it since the last zero_grad).
  bool has_grad() const noexcept { return state_->grad != nullptr; }
  /// Drops the gradient.
  void zero_grad() const noexcept { state_->clear_grad(); }
  /// Whether the gradient is this rank's share only (see `autograd::tensor_state::grad_partial`).
  bool grad_partial() const noexcept { return state_->grad && state_->grad_partial; }
  /// Marks the gradient partial or whole (dist's reductions).
  void set_grad_partial(bool partial) const noexcept { state_->grad_partial = partial; }
  /// Whether the parameter is kept equal on the ranks of a data-parallel group.
  bool replicated() const noexcept { return state_->replicated; }
  /// Marks the parameter replicated (`dist::broadcast_parameters`), so that
  /// backward passes leave its gradient partial.
  void set_replicated(bool on) const noexcept { state_->replicated = on; }
  /// The autograd state the parameter shares with its tensor (what a backward pass visits).
  autograd::tensor_state const* state() const noexcept { return state_.get(); }
  /// Whether the elements live in host memory (the backend is `host_accessible`).
  bool host_accessible() const noexcept { return ops_->host_accessible; }
  /// The elements' first element (in the backend's memory).
  void* data() const noexcept { return data_; }
  /// The gradient's first element (in the backend's memory); it must exist (has_grad()).
  void* grad_data() const { return grad_data_(*state_); }
  /// Gives the parameter a gradient of zeros when it has none.
  void ensure_grad() const {
    if (state_->grad) return;
    void* g = nullptr;
    state_->grad = ops_->zeros(size_, g);
    state_->grad_data = g;
    state_->grad_type = ops_->grad_type;
  }
  /// Copies the @p size() elements at @p from (the backend's memory) to host memory at @p to.
  void copy_to_host(void* to, void const* from) const { ops_->to_host(to, from, size_); }
  /// Copies @p size() elements from host memory at @p from to @p to (the backend's memory).
  void copy_from_host(void* to, void const* from) const { ops_->from_host(to, from, size_); }

  /// @brief Calls `f(data, grad, size)` with `T*` pointers of the element
  /// type (float or double) to the elements and the gradient, which must
  /// exist (has_grad()).  The pointers are in the backend's memory: device
  /// memory for a parameter on `cuda`, never to be read on the host there.
  template <class F>
  void visit(F&& f) const {
    void* const g = grad_data_(*state_);
    if (is_double_) {
      f(static_cast<double*>(data_), static_cast<double*>(g), size_);
    } else {
      f(static_cast<float*>(data_), static_cast<float*>(g), size_);
    }
  }

  /// @name Updates on the parameter's backend
  /// What the optimizers do to a parameter, run where its elements live.
  /// The gradient must exist (has_grad()).
  /// @{

  /// One SGD step (PyTorch's rule, see `optim::sgd`) with the momentum
  /// buffer @p momentum_buffer (allocated here, zeros, on first use).
  void sgd_step(detail::state_buffer& momentum_buffer, detail::sgd_coefficients const& c) const {
    void* const g = grad_data_(*state_);
    void* buf = nullptr;
    if (c.momentum != 0) buf = state_of(momentum_buffer);
    ops_->sgd(data_, g, buf, size_, c);
  }

  /// One Adam step (PyTorch's rule, see `optim::adam`) with the moments
  /// @p exp_avg and @p exp_avg_sq (allocated here, zeros, on first use).
  void adam_step(detail::state_buffer& exp_avg, detail::state_buffer& exp_avg_sq,
                 detail::adam_coefficients const& c) const {
    void* const g = grad_data_(*state_);
    void* const m = state_of(exp_avg);
    void* const v = state_of(exp_avg_sq);
    ops_->adam(data_, g, m, v, size_, c);
  }

  /// The sum of the squares of the gradient's elements, added up in double.
  double grad_squared_sum() const { return ops_->squared_sum(grad_data_(*state_), size_); }

  /// Multiplies the gradient by @p factor, rounded to the element type.
  void scale_grad(double factor) const { ops_->scale(grad_data_(*state_), size_, factor); }
  /// @}

 private:
  // The buffer's elements, (re)allocated as zeros of this parameter's type,
  // size and backend when it holds anything else.
  void* state_of(detail::state_buffer& b) const {
    if (b.data_ == nullptr || b.size_ != size_ || b.owner_ != ops_) {
      b.storage_ = ops_->zeros(size_, b.data_);
      b.size_ = size_;
      b.owner_ = ops_;
    }
    return b.data_;
  }

  std::string key_;
  std::shared_ptr<void> holder_;  // keeps the handle, hence the storage and the state, alive
  std::shared_ptr<autograd::tensor_state> state_;
  void* data_ = nullptr;
  index_t size_ = 0;
  bool is_double_ = false;
  detail::operations_table const* ops_ = nullptr;
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

  /// Every parameter of @p model.
  template <class M>
    requires(nn::Module<M> && !std::is_const_v<M> && !is_tensor_v<M>)
  parameter_list(M& model) {  // NOLINT: implicit, so optimizers take modules
    model.for_each_parameter([&](std::string const& key, auto& p) { entries_.emplace_back(key, p); }, "");
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

  /// @brief `value_error` naming the first parameter whose gradient is
  /// partial (a data-parallel rank's share, before
  /// `dist::all_reduce_gradients`): what @p call refuses to use.
  void check_not_partial(std::string_view call) const {
    for (auto const& e : entries_) {
      if (e.grad_partial()) {
        throw value_error(std::string(call) + ": the gradient of " + e.key() + " " + e.shape() +
                          " is partial, this rank's share of a data-parallel batch; call "
                          "dist::all_reduce_gradients(model, comm) after backward and before " +
                          std::string(call));
      }
    }
  }

 private:
  std::vector<parameter_ref> entries_;
};

}  // namespace dimtensor::optim
