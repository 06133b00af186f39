#pragma once
/// @file
/// @brief `basic_tensor<Backend, T, Specs...>` and its CPU alias `tensor<T, Specs...>`.

#include <array>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/core/broadcast.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/evaluator.hpp>

namespace dimtensor {

template <class Backend, class T, class... Specs>
class basic_tensor;

/// Whether T is a basic_tensor.
template <class T>
inline constexpr bool is_tensor_v = false;
/// A basic_tensor is a tensor.
template <class B, class T, class... S>
inline constexpr bool is_tensor_v<basic_tensor<B, T, S...>> = true;

namespace autograd {
// Defined with the lazy nodes (tensor/expression.hpp): only an expression that
// is not a tensor reaches them, and making one includes that header.
template <class X>
bool any_requires_grad(X const& x);
namespace detail {
template <class Out, class E>
void record_evaluation(Out& result, E const& e);
template <class Out, class E>
bool evaluate_in_runtime(Out& result, E const& e);
}  // namespace detail
}  // namespace autograd

/// @brief A tensor on the default backend (`cpu` unless `DIMTENSOR_DEFAULT_BACKEND`
/// says otherwise): `tensor<float, Batch, Queries, Hidden::fixed<8>>`.
template <class T, class... Specs>
using tensor = basic_tensor<default_backend, T, Specs...>;

namespace detail {

/// The extent of the dim D in a shape of dims @p Specs with run-time
/// extents @p ext: `std::integral_constant` when static, `index_t` when
/// dynamic; a compile error (`not_a_dimension_of<call::tensor, …>`) when D
/// is not one of them.  What `extent<D>()` of a tensor and of a lazy
/// expression returns.
template <class D, class Specs, class Extents>
auto extent_of(Extents const& ext) {
  if constexpr (!contains_v<D, Specs>) {
    (void)diagnostic::fire<diagnostic::not_a_dimension_of<call::tensor, D, Specs>>;
    return index_t{0};
  } else {
    using S = spec_for<D, Specs>;
    if constexpr (is_static_v<S>) {
      return std::integral_constant<index_t, static_extent_v<S>>{};
    } else {
      return ext[index_of_v<D, Specs>];
    }
  }
}

template <class T, std::size_t R>
struct nested_list {
  using type = std::initializer_list<typename nested_list<T, R - 1>::type>;
};
template <class T>
struct nested_list<T, 0> {
  using type = T;
};

template <std::size_t R, class List>
void nested_extents(List const& list, std::array<index_t, R>& ext, std::size_t level) {
  ext[level] = static_cast<index_t>(list.size());
  if constexpr (!std::is_arithmetic_v<typename List::value_type>) {
    if (list.size() > 0) nested_extents<R>(*list.begin(), ext, level + 1);
  }
}

template <class T, std::size_t R, class List>
void nested_copy(List const& list, std::array<index_t, R> const& ext, std::array<std::string_view, R> const& names,
                 std::size_t level, T*& out) {
  if (static_cast<index_t>(list.size()) != ext[level]) {
    throw_extent_mismatch("tensor: ragged initializer list", names[level], ext[level],
                          static_cast<index_t>(list.size()), "first list", "a later list");
  }
  if constexpr (std::is_arithmetic_v<typename List::value_type>) {
    for (auto const& v : list) *out++ = static_cast<T>(v);
  } else {
    for (auto const& sub : list) nested_copy<T, R>(sub, ext, names, level + 1, out);
  }
}

/// The extent a named-extent argument gives (D(n) or D::fixed<N>{}).
template <class A>
constexpr index_t named_extent(A const& a) {
  if constexpr (is_static_v<A>) {
    return static_extent_v<A>;
  } else {
    return a.value;
  }
}

/// Checks that a dims list has no duplicate; instantiates the diagnostic when it has.
template <class L>
constexpr auto check_unique() {
  if constexpr (!is_unique_v<L>) {
    (void)diagnostic::fire<diagnostic::duplicate_dimension<first_duplicate<L>, L>>;
    return false;
  } else {
    return true;
  }
}

/// A complete type when L has no duplicate; else the diagnostic, whose
/// instantiation (by sizeof) reports the error.  Unlike a constexpr call, it
/// leaves clang nothing to reject as "not a constant expression".
template <class L>
using unique_check_t = std::conditional_t<is_unique_v<L>, std::true_type,
                                          diagnostic::duplicate_dimension<first_duplicate<L>, L>>;

/// A quoted predicate: whether a tag is a dim of L.
template <class L>
struct is_dim_of {
  template <class D>
  using fn = boost::mp11::mp_bool<contains_v<D, L>>;
};

/// The first tag of Given that is not a dim of L.
template <class Given, class L>
using first_foreign =
    boost::mp11::mp_at<Given, boost::mp11::mp_find_if_q<Given, boost::mp11::mp_not_fn_q<is_dim_of<L>>>>;

struct uninitialized_t {};

}  // namespace detail

namespace detail {
/// @p n elements of T in host memory, uninitialized: where elements are
/// staged on their way to a device (a `std::vector<bool>` has no data()).
template <class T>
std::unique_ptr<T[]> host_buffer(index_t n) {
  return std::unique_ptr<T[]>(new T[static_cast<std::size_t>(n > 0 ? n : 1)]);
}

/// The element at @p p of @p Backend's memory, read from the host (a copy of
/// one element where the memory is a device's).
template <class Backend, class T>
T read_element(Backend, T const* p) {
  T v{};
  backend_copy_to_host(Backend{}, &v, p, 1);
  return v;
}
}  // namespace detail

/// Tag asking a constructor not to initialize the elements.
inline constexpr detail::uninitialized_t uninitialized{};

/// @brief A tensor whose dims are part of its type.
///
/// A tensor is a handle: copies share the elements (as PyTorch tensors do);
/// `clone()` copies them.  Views (`transpose`, `unsqueeze`, `slice`, …) share
/// the storage and carry their own strides.
///
/// @tparam Backend `cpu` (or the Thrust backend).
/// @tparam T       float, double, std::int32_t, std::int64_t or bool.
/// @tparam Specs   the dims, outermost first: tags (`Batch`) or static
///                 extents (`Hidden::fixed<8>`); each dim at most once.
template <class Backend, class T, class... Specs>
class basic_tensor {
  static_assert(Element<T>, "dimtensor: tensor element type must be float, double, std::int32_t, std::int64_t or bool");
  static_assert(backend<Backend>,
                "dimtensor: the tensor's backend does not declare every kernel of the backend contract "
                "(dimtensor::backend, backends/backend.hpp); for thrust_cpp, thrust_omp or cuda include "
                "<dimtensor/backends/thrust.hpp>");
  static_assert((DimSpec<Specs> && ...),
                "dimtensor: every dim of a tensor must be a tag declared with DIMTENSOR_DIM or Tag::fixed<N>");
  static_assert(sizeof(detail::unique_check_t<dims<Specs...>>) > 0, "dimtensor: duplicate dimension in a tensor type");

 public:
  /// Element type.
  using value_type = T;
  /// Backend tag.
  using backend = Backend;
  /// The dims, as `dims<Specs...>`.
  using specs = dims<Specs...>;
  /// Number of dims.
  static constexpr std::size_t rank = sizeof...(Specs);
  /// Run-time extents or strides, outermost first.
  using extents_type = std::array<index_t, rank>;
  /// The backend's storage.
  using storage_type = typename Backend::template storage<T>;
  /// Marks the expression concept.
  static constexpr bool is_expression = true;

  /// An empty tensor: dynamic extents 0, static extents as declared, no elements.
  basic_tensor() : extents_(static_default()), strides_(detail::row_major_strides(extents_)) {
    if (size() > 0) allocate();
    fill_value(T{});
  }

  /// A zero-filled tensor of the named extents, in the order of the dims:
  /// `tensor<float, Batch, Queries>(Batch(2), Queries(4))`.
  template <class... Named>
    requires(sizeof...(Named) == rank && sizeof...(Named) > 0 &&
             (std::is_same_v<dim_of<std::remove_cvref_t<Named>>, dim_of<Specs>> && ...))
  explicit basic_tensor(Named const&... named) : basic_tensor(uninitialized, extents_type{detail::named_extent(named)...}) {
    fill_value(T{});
  }

  /// A tensor of extents @p ext with uninitialized elements.
  basic_tensor(detail::uninitialized_t, extents_type const& ext) : extents_(ext) {
    detail::check_static_extents<specs>("tensor", ext);
    allocate();  // checks that the extents' product, hence every stride, fits an index_t
    strides_ = detail::row_major_strides(ext);
  }

  /// A tensor of extents @p ext, zero-filled.
  explicit basic_tensor(extents_type const& ext) : basic_tensor(uninitialized, ext) { fill_value(T{}); }

  /// From nested braces, outermost dim first: `tensor<int, Batch, Queries>{{1, 3}, {2, 4}}`.
  basic_tensor(typename detail::nested_list<T, rank>::type init)
    requires(rank > 0)
  {
    extents_type ext{};
    detail::nested_extents<rank>(init, ext, 0);
    *this = basic_tensor(uninitialized, ext);
    if constexpr (Backend::host_accessible) {
      T* out = data_;
      detail::nested_copy<T, rank>(init, extents_, detail::names_of<specs>::value, 0, out);
    } else {
      auto const staged = detail::host_buffer<T>(size());
      T* out = staged.get();
      detail::nested_copy<T, rank>(init, extents_, detail::names_of<specs>::value, 0, out);
      backend_copy_from_host(Backend{}, data_, static_cast<T const*>(staged.get()), size());
    }
  }

  /// A view over existing storage (used by the structural ops).
  basic_tensor(std::shared_ptr<storage_type> storage, T* data, extents_type const& ext, extents_type const& str)
      : storage_(std::move(storage)), data_(data), extents_(ext), strides_(str) {}

  /// Evaluates an expression of the same dims (static extents are checked).
  template <Expression E>
    requires(!std::is_same_v<E, basic_tensor>)
  basic_tensor(E const& e) {  // NOLINT: implicit, like assigning a result
    if constexpr (!convertible_v<E>) {
      (void)check_convertible<E>();
    } else {
      extents_type const ext = e.extents();
      *this = basic_tensor(uninitialized, ext);
      if constexpr (is_tensor_v<E>) {
        write(e);
        record_copy_of(e);
      } else if (!autograd::detail::evaluate_in_runtime(*this, e)) {
        write(e);
        autograd::detail::record_evaluation(*this, e);
      }
    }
  }

  /// Absorbs the result of a call whose compile-time check failed.
  basic_tensor(ill_formed) {}  // NOLINT

  /// Run-time extents, outermost first.
  extents_type const& extents() const noexcept { return extents_; }
  /// Strides in elements.
  extents_type const& strides() const noexcept { return strides_; }
  /// Number of elements.
  index_t size() const noexcept { return detail::element_count(extents_); }
  /// Whether the elements are row-major and contiguous.
  bool is_contiguous() const noexcept { return detail::is_row_major(extents_, strides_); }

  /// The extent of dim D: `std::integral_constant` when static, `index_t` when dynamic.
  template <class D>
  auto extent() const {
    return detail::extent_of<D, specs>(extents_);
  }
  /// The extent of dim D, as a named extent `D(n)`.
  template <class D>
  D named_extent() const {
    return D(static_cast<index_t>(extent<D>()));
  }

  /// First element (of the view).
  T* data() const noexcept { return data_; }
  /// The shared storage.
  std::shared_ptr<storage_type> const& storage() const noexcept { return storage_; }

  /// @brief Element access by named indices, in any order:
  /// `x(Batch(1), Queries(0))`.  Out of range is a `value_error`.
  template <class... Index>
  T& operator()(Index const&... index) const {
    using given = dims<Index...>;
    if constexpr (!(DimTag<Index> && ...)) {
      static_assert(diagnostic::always_false<Index...>,
                    "dimtensor: element access takes one named index per dim of the tensor, e.g. "
                    "x(Batch(1), Queries(0))");
      return *data_;
    } else if constexpr (!(detail::contains_v<Index, specs> && ...)) {
      (void)diagnostic::fire<
          diagnostic::not_a_dimension_of<call::element_access, detail::first_foreign<given, specs>, specs>>;
      return *data_;
    } else if constexpr (!detail::is_unique_v<given>) {
      (void)diagnostic::fire<diagnostic::duplicate_dimension<detail::first_duplicate<given>, given>>;
      return *data_;
    } else if constexpr (sizeof...(Index) != rank) {
      (void)diagnostic::fire<
          diagnostic::missing_index<call::element_access, detail::first_foreign<detail::tags_of<specs>, given>, specs>>;
      return *data_;
    } else if constexpr (!Backend::host_accessible) {
      static_assert(Backend::host_accessible,
                    "dimtensor: element access reads host memory; this tensor's elements are in device memory: "
                    "copy it first with dimtensor::to<dimtensor::cpu>(x), or read one element with item()");
      return *data_;
    } else {
      return data_[offset_of(index...)];
    }
  }

 private:
  template <class... Index>
  index_t offset_of(Index const&... index) const {
    using given = dims<Index...>;
    std::array<index_t, rank> const given_values{index.value...};
    index_t off = 0;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((off += checked_index<I>(given_values[detail::index_of_v<dim_of<Specs>, given>]) * strides_[I]), ...);
    }(std::make_index_sequence<rank>{});
    return off;
  }

 public:
  /// The one element of a rank-0 tensor, or of a tensor of size 1.
  T item() const {
    if (size() != 1) {
      throw shape_error("item: the tensor " + detail::shape_string<specs>(extents_) + " has " +
                        std::to_string(size()) + " elements, not 1");
    }
    return detail::read_element(Backend{}, static_cast<T const*>(data_));
  }

  /// A contiguous copy with its own storage.
  basic_tensor clone() const {
    basic_tensor out(uninitialized, extents_);
    out.write(*this);
    out.record_copy_of(*this, "clone");
    return out;
  }

  /// Itself (tensors are already evaluated); lets generic code call eval().
  basic_tensor const& eval() const noexcept { return *this; }

  /// This tensor if contiguous, else a contiguous copy.
  basic_tensor contiguous() const { return is_contiguous() ? *this : clone(); }

  /// @brief Writes an expression into these elements (the extents must agree);
  /// safe when the expression reads this tensor.
  template <Expression E>
  basic_tensor& assign(E const& e) {
    if constexpr (!convertible_v<E>) {
      (void)check_convertible<E>();
    } else {
      check_in_place("assign");
      bool needs_grad = false;
      if constexpr (is_tensor_v<E>) {
        needs_grad = e.requires_grad();
      } else {
        needs_grad = autograd::any_requires_grad(e);
      }
      if (autograd::is_grad_enabled() && needs_grad) {
        throw value_error("assign: the value requires grad, and a write into an existing tensor " +
                          detail::shape_string<specs>(extents_) +
                          " is not recorded; use the value itself (auto y = …), or write under autograd::no_grad");
      }
      extents_type const ext = e.extents();
      for (std::size_t i = 0; i < rank; ++i) {
        if (ext[i] != extents_[i]) {
          detail::throw_extent_mismatch("assign", detail::names_of<specs>::value[i], extents_[i], ext[i], "target",
                                        "value");
        }
      }
      bool aliased = true;  // an expression that cannot tell is assumed to read this tensor
      if constexpr (requires { e.reads_storage(static_cast<void const*>(nullptr)); }) {
        aliased = e.reads_storage(static_cast<void const*>(storage_.get()));
      }
      if (is_contiguous() && !aliased) {
        write(e);
      } else {
        basic_tensor tmp(uninitialized, ext);  // the expression may read these elements
        tmp.write(e);
        if (is_contiguous()) {
          backend_copy(Backend{}, data_, tmp.data_, size());
        } else {
          write_strided(tmp);
        }
      }
    }
    return *this;
  }

  /// Sets every element to @p v.
  basic_tensor& fill(T v) {
    check_in_place("fill");
    if (is_contiguous()) {
      fill_value(v);
    } else {
      basic_tensor tmp(uninitialized, extents_);
      tmp.fill_value(v);
      write_strided(tmp);
    }
    return *this;
  }

  /// @name Gradients
  /// A tensor that requires gradients records the operations that use it;
  /// `backward()` on a result fills the gradients of the tensors it came
  /// from.  A gradient is a tensor of exactly this tensor's type.
  /// @{

  /// Whether gradients flow to or through this tensor.
  bool requires_grad() const noexcept { return grad_state_ && grad_state_->requires_grad; }

  /// @brief Makes this tensor (a leaf: not the result of a recorded
  /// operation) a variable whose gradient `backward()` fills.  Copies of the
  /// handle share it; views and results do not.
  basic_tensor& requires_grad_(bool on = true) {
    if constexpr (!std::is_floating_point_v<T>) {
      (void)diagnostic::fire<diagnostic::not_differentiable<call::requires_grad, T>>;
    } else if (grad_state_ && grad_state_->grad_fn) {
      if (!on) {
        throw value_error("requires_grad_(false): the tensor " + detail::shape_string<specs>(extents_) +
                          " is the result of " + std::string(grad_state_->grad_fn->name()) +
                          ", not a leaf; use detach() for a tensor outside the graph");
      }
    } else {
      if (!grad_state_) grad_state_ = std::make_shared<autograd::tensor_state>();
      grad_state_->requires_grad = on;
    }
    return *this;
  }

  /// Whether this tensor is a leaf (not the result of a recorded operation).
  bool is_leaf() const noexcept { return !grad_state_ || !grad_state_->grad_fn; }

  /// Whether a gradient is stored.
  bool has_grad() const noexcept { return grad_state_ && grad_state_->grad; }

  /// @brief The gradient (a handle sharing its elements); `value_error`
  /// when there is none, saying why.
  basic_tensor grad() const {
    if (!has_grad()) {
      std::string const why = !requires_grad() ? "it does not require grad (call requires_grad_())"
                              : is_leaf()      ? "backward() has not reached it, or zero_grad() cleared it"
                                               : "it is the result of an operation (call retain_grad() before backward())";
      throw value_error("grad: the tensor " + detail::shape_string<specs>(extents_) + " has no gradient: " + why);
    }
    if (grad_state_->grad_type != &autograd::type_tag<storage_type>) {
      throw value_error("grad: the stored gradient has another type than the tensor (a backward rule is wrong)");
    }
    return basic_tensor(std::static_pointer_cast<storage_type>(grad_state_->grad),
                        static_cast<T*>(grad_state_->grad_data), extents_, detail::row_major_strides(extents_));
  }

  /// Drops the gradient (PyTorch's `zero_grad(set_to_none=True)`).
  void zero_grad() noexcept {
    if (grad_state_) grad_state_->clear_grad();
  }

  /// Keeps this result's gradient after `backward()` (the last pass's).
  basic_tensor& retain_grad() {
    if (!requires_grad()) {
      throw value_error("retain_grad: the tensor " + detail::shape_string<specs>(extents_) + " does not require grad");
    }
    grad_state_->retains_grad = true;
    return *this;
  }

  /// The same elements, outside the graph (no gradient flows through it).
  basic_tensor detach() const { return basic_tensor(storage_, data_, extents_, strides_); }

  /// @brief Fills the gradients of the leaves this one-element result came
  /// from (d this / d leaf).  A result of more elements needs the gradient
  /// of something with respect to it: `backward(gradient)`.
  void backward() const {
    if constexpr (!std::is_floating_point_v<T>) {
      (void)diagnostic::fire<diagnostic::not_differentiable<call::backward, T>>;
    } else {
      if (size() != 1) {
        throw value_error("backward: the tensor " + detail::shape_string<specs>(extents_) + " has " +
                          std::to_string(size()) +
                          " elements; backward() without a gradient needs a single element (a loss); pass the "
                          "gradient of the loss with respect to this tensor: backward(gradient)");
      }
      basic_tensor seed(uninitialized, extents_);
      seed.fill_value(T(1));
      backward(seed);
    }
  }

  /// @brief Back-propagates @p gradient, the gradient of some scalar with
  /// respect to this tensor (same dims and extents).
  void backward(basic_tensor const& gradient) const {
    if constexpr (!std::is_floating_point_v<T>) {
      (void)diagnostic::fire<diagnostic::not_differentiable<call::backward, T>>;
    } else {
      if (!requires_grad()) {
        throw value_error("backward: the tensor " + detail::shape_string<specs>(extents_) +
                          " does not require grad: none of the tensors it was computed from requires grad, or it "
                          "was computed under autograd::no_grad");
      }
      for (std::size_t i = 0; i < rank; ++i) {
        if (gradient.extents()[i] != extents_[i]) {
          detail::throw_extent_mismatch("backward", detail::names_of<specs>::value[i], extents_[i],
                                        gradient.extents()[i], "tensor", "gradient");
        }
      }
      autograd::detail::run_backward(grad_state_.get(), [&] {
        basic_tensor const dense = gradient.contiguous();
        autograd::add_gradient<Backend, T>(*grad_state_, static_cast<T const*>(dense.data()), dense.size());
      });
    }
  }

  /// @brief This tensor's place in the graph without its elements (its
  /// extents and autograd state): what a backward rule keeps of an operand
  /// it only hands a gradient to, so that the operand's memory is not held
  /// by the graph (softmax's rule reads its result, not its input).
  basic_tensor gradient_target() const {
    basic_tensor t(nullptr, nullptr, extents_, strides_);
    t.grad_state_ = grad_state_;
    return t;
  }

  /// The autograd state (for operations and the engine).
  std::shared_ptr<autograd::tensor_state> const& grad_state() const noexcept { return grad_state_; }

  /// Marks this fresh result as made by the recorded node @p n (for operations).
  void attach_grad_fn(std::shared_ptr<autograd::node> n) {
    grad_state_ = std::make_shared<autograd::tensor_state>();
    grad_state_->requires_grad = true;
    grad_state_->grad_fn = std::move(n);
  }
  /// @}

  /// Whether this tensor's elements live in @p storage (aliasing checks).
  /// Tensors without storage (views of outside memory) answer yes, to stay safe.
  bool reads_storage(void const* storage) const noexcept {
    return storage_ == nullptr || storage == nullptr || storage_.get() == storage;
  }

  /// Binds this tensor, right-aligned, to an output of rank R.
  template <std::size_t R>
  detail::strided_evaluator<T, R> evaluator(std::array<index_t, R> const& out) const {
    return detail::bind_strided<T, R, rank>(data_, extents_, strides_, out);
  }

 private:
  template <class, class, class...>
  friend class basic_tensor;

  static extents_type static_default() {
    extents_type e{};
    for (std::size_t i = 0; i < rank; ++i) {
      index_t const s = detail::static_extents_of<specs>::value[i];
      e[i] = s == dynamic_extent ? 0 : s;
    }
    return e;
  }

  template <std::size_t I>
  index_t checked_index(index_t i) const {
    if (i < 0 || i >= extents_[I]) detail::throw_index_out_of_range(i, detail::names_of<specs>::value[I], extents_[I]);
    return i;
  }

  // Whether check_convertible<E>() passes (it instantiates no diagnostic; see
  // detail::binary_ok_v for why the test and the diagnosis are apart).
  template <class E>
  static constexpr bool convertible_v = std::is_same_v<typename E::backend, Backend> &&
                                        std::is_same_v<typename E::value_type, T> &&
                                        detail::same_tags_v<typename E::specs, specs> &&
                                        detail::broadcast<specs, typename E::specs>::ok;

  template <class E>
  static constexpr auto check_convertible() {
    using ES = typename E::specs;
    if constexpr (!std::is_same_v<typename E::backend, Backend>) {
      (void)diagnostic::fire<diagnostic::backends_differ<call::tensor, typename E::backend, Backend>>;
      return false;
    } else if constexpr (!std::is_same_v<typename E::value_type, T>) {
      (void)diagnostic::fire<diagnostic::element_types_differ<call::tensor, T, typename E::value_type>>;
      return false;
    } else if constexpr (!detail::same_tags_v<ES, specs>) {
      (void)diagnostic::fire<diagnostic::assigned_dims_differ<call::tensor, specs, ES>>;
      return false;
    } else if constexpr (!detail::broadcast<specs, ES>::ok) {
      detail::diagnose_broadcast<call::tensor, specs, ES>();
      return false;
    } else {
      return true;
    }
  }

  void allocate() {
    index_t const n = detail::checked_element_count<specs>("tensor", extents_, sizeof(T));
    storage_ = std::make_shared<storage_type>(n);
    data_ = storage_->data();
  }

  void check_in_place(std::string_view op) const {
    if (autograd::is_grad_enabled() && requires_grad()) {
      throw value_error(std::string(op) + ": an in-place write into the tensor " +
                        detail::shape_string<specs>(extents_) +
                        ", which requires grad; write under autograd::no_grad (as optimizers do)");
    }
  }

  // Records this fresh tensor as a copy of @p x (clone, contiguous, a
  // conversion between tensor types of the same elements).
  template <class X>
  void record_copy_of(X const& x, std::string_view name = "elementwise") {
    if constexpr (std::is_floating_point_v<T>) {
      if (autograd::is_grad_enabled() && x.requires_grad()) {
        attach_grad_fn(autograd::copy_node<Backend, T>(name, x.grad_state(), size()));
      }
    }
  }

  void fill_value(T v) {
    if (data_ == nullptr) return;
    backend_fill(Backend{}, data_, size(), v);
  }

  // Evaluates e into this freshly allocated, contiguous tensor.
  template <class E>
  void write(E const& e) {
    backend_assign(Backend{}, data_, extents_, e.template evaluator<rank>(extents_));
  }

  // Copies a contiguous tensor of the same extents into this strided view.
  void write_strided(basic_tensor const& src) {
    backend_strided_copy(Backend{}, data_, strides_, static_cast<T const*>(src.data_), src.strides_, extents_);
  }

  std::shared_ptr<storage_type> storage_;
  T* data_ = nullptr;
  extents_type extents_{};
  extents_type strides_{};
  std::shared_ptr<autograd::tensor_state> grad_state_;
};

/// The tensor type an expression evaluates to.
template <class E>
using tensor_for = boost::mp11::mp_apply<boost::mp11::mp_bind_front<basic_tensor, typename E::backend, typename E::value_type>::template fn,
                                         typename E::specs>;

/// The tensor type of a backend, an element type and a `dims<...>` list.
template <class Backend, class T, class L>
using tensor_with_dims = boost::mp11::mp_apply<boost::mp11::mp_bind_front<basic_tensor, Backend, T>::template fn, L>;

/// @brief Evaluates an expression into a new tensor; a tensor is returned as is.
template <Expression E>
auto eval(E const& e) {
  if constexpr (is_tensor_v<E>) {
    return e;
  } else {
    return tensor_for<E>(e);
  }
}

/// Absorbs an ill-formed expression.
inline ill_formed eval(ill_formed) { return {}; }

}  // namespace dimtensor

