#pragma once
/// @file
/// @brief `partial<Tensor, D, Axis, Reduction>`: this rank's part of a
/// reduction over a dim sharded over a mesh axis: what `sum`, `mean`,
/// `max`, `min` and `contract` over `D::sharded<Axis>` return.
///
/// Each rank holds a part of the sharded dim, so a reduction over it is,
/// on each rank, the reduction of its part only.  The type says so: a
/// partial is not a tensor.  Using it as one, reading an element or
/// `item()`, printing it, assigning it to a tensor, or giving it to an
/// operation, is a compile error naming the dim and the axis
/// (`diagnostic::partial_value_used<use, dim, axis>`).  `dist::all_reduce`
/// of it (dist/collectives.hpp) combines the ranks' parts into the plain
/// tensor.  Its `backward()` is allowed: a loss summed over a sharded
/// Batch is back-propagated on every rank, and the gradients it leaves are
/// partial too (the run-time flag `autograd::tensor_state::grad_partial`,
/// cleared by `dist::all_reduce_gradients`).

#include <iosfwd>
#include <type_traits>
#include <utility>

#include <dimtensor/config.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::call {
/// A partial value read as a number (`item()`, element access, `data()`).
struct read : named<"read"> {};
/// A partial value printed.
struct print : named<"print"> {};
/// A partial value given to an operation.
struct operand : named<"operand"> {};
}  // namespace dimtensor::call

namespace dimtensor {

/// @brief This rank's part of the reduction @p Reduction (`call::sum`,
/// `call::mean`, `call::max`, `call::min`) over the dim @p D, sharded over
/// the mesh axis @p Axis: the value @p Tensor of the reduction of this
/// rank's part.  See the file's comment.
template <class Tensor, class D, class Axis, class Reduction>
class partial {
 public:
  /// The tensor type the all-reduce gives.
  using local_type = Tensor;
  /// The dim reduced over.
  using dim_type = D;
  /// The mesh axis it is sharded over.
  using axis_type = Axis;
  /// The reduction (`call::sum`, `call::mean`, `call::max` or `call::min`).
  using reduction = Reduction;

  /// This rank's part @p local of the reduction over @p reduced_extent
  /// elements of D (its local extent: a mean's parts are weighted by it).
  partial(Tensor local, index_t reduced_extent) : local_(std::move(local)), reduced_extent_(reduced_extent) {}

  /// @brief This rank's part, not the reduction: for the all-reduce that
  /// completes it, or for code that knows what it does with a part.
  Tensor const& local_part() const noexcept { return local_; }
  /// The local extent of D the part reduced.
  index_t reduced_extent() const noexcept { return reduced_extent_; }

  /// Back-propagates from this rank's part (a loss over a sharded Batch):
  /// the gradients it leaves are this rank's share, partial until
  /// `dist::all_reduce_gradients`.
  template <class... A>
  void backward(A const&... gradient) const {
    local_.backward(gradient...);
  }

  /// @name Uses of the value, each a compile error naming D and Axis
  /// @{

  /// Read as one number (item): a compile error.
  template <class... A>
  auto item(A const&...) const {
    (void)diagnostic::fire<diagnostic::partial_value_used<call::read, D, Axis>>;
    return ill_formed{};
  }
  /// Read one element: a compile error.
  template <class... A>
  auto operator()(A const&...) const {
    (void)diagnostic::fire<diagnostic::partial_value_used<call::element_access, D, Axis>>;
    return ill_formed{};
  }
  /// Read the elements' address (data): a compile error.
  template <class... A>
  auto data(A const&...) const {
    (void)diagnostic::fire<diagnostic::partial_value_used<call::read, D, Axis>>;
    return ill_formed{};
  }
  /// Read the extents: a compile error.
  template <class... A>
  auto extents(A const&...) const {
    (void)diagnostic::fire<diagnostic::partial_value_used<call::read, D, Axis>>;
    return ill_formed{};
  }
  /// Copied into a tensor (clone): a compile error.
  template <class... A>
  auto clone(A const&...) const {
    (void)diagnostic::fire<diagnostic::partial_value_used<call::tensor, D, Axis>>;
    return ill_formed{};
  }
  /// Assigned to, or made into, a tensor: a compile error.
  template <class U>
    requires is_tensor_v<U>
  operator U() const {  // NOLINT: implicit, to name the mistake where a tensor is made of it
    (void)diagnostic::fire<diagnostic::partial_value_used<call::tensor, D, Axis>>;
    return U{};
  }
  /// Printed: a compile error.
  template <class C, class Traits>
  friend std::basic_ostream<C, Traits>& operator<<(std::basic_ostream<C, Traits>& os, partial const&) {
    (void)diagnostic::fire<diagnostic::partial_value_used<call::print, D, Axis>>;
    return os;
  }
  /// @}

 private:
  Tensor local_;
  index_t reduced_extent_;
};

/// Whether T is a `partial`.
template <class T>
inline constexpr bool is_partial_v = false;
/// A `partial` is.
template <class Tensor, class D, class Axis, class Reduction>
inline constexpr bool is_partial_v<partial<Tensor, D, Axis, Reduction>> = true;

namespace detail {
/// An operation asks of each operand whether it is `ill_formed`: of a
/// partial, the question is the diagnosis.
template <class Tensor, class D, class Axis, class Reduction>
struct ill_formed_trait<partial<Tensor, D, Axis, Reduction>>
    : std::bool_constant<diagnostic::fire<diagnostic::partial_value_used<call::operand, D, Axis>>> {};
}  // namespace detail

}  // namespace dimtensor
