#pragma once
/// @file
/// @brief `nn::dropout`: PyTorch's `nn.Dropout`, with train/eval modes and
/// its own seedable generator.

#include <array>
#include <cstddef>
#include <cstdint>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>
#include <string>
#include <type_traits>
#include <utility>

namespace dimtensor::nn {

namespace detail {

/// The named extent of the spec S of length @p n, as the factories take it:
/// `S{}` when static (so the mask keeps x's static extents), else `Tag(n)`.
template <class S>
auto named_extent_of(index_t n) {
  if constexpr (is_static_v<S>) {
    (void)n;
    return S{};
  } else {
    return dim_of<S>(n);
  }
}

/// `bernoulli<T>(gen, p, …)` of the dims and extents of a tensor of specs L,
/// on @p Backend: drawn on the host, so a seed gives the same mask on every
/// backend.
template <class Backend, class T, class L, std::size_t R, std::size_t... I>
auto bernoulli_like(generator& gen, double p, std::array<index_t, R> const& ext, std::index_sequence<I...>) {
  return dimtensor::to<Backend>(bernoulli<T>(gen, p, named_extent_of<boost::mp11::mp_at_c<L, I>>(ext[I])...));
}

}  // namespace detail

/// @brief `nn.Dropout(p)`: in training mode zeroes each element with
/// probability p and scales the others by 1/(1 - p); in eval mode the
/// identity.
///
/// Starts in training mode, as PyTorch modules do.  The mask is drawn from
/// the module's own generator, so a seed fixes the masks of a run; it is
/// drawn on the host and moved to the input's backend, so a seed gives the
/// same masks on every backend.
class dropout : public module<dropout> {
 public:
  /// Drops with probability @p p, in [0, 1) (`value_error` otherwise),
  /// masks drawn from a generator seeded with @p seed.
  explicit dropout(double p, std::uint64_t seed = generator::default_seed) : p_(checked(p)), gen_(seed) {}
  /// As above, masks drawn from a copy of @p gen (its state, not a reference).
  dropout(double p, generator const& gen) : p_(checked(p)), gen_(gen) {}

  /// The drop probability.
  double p() const noexcept { return p_; }
  /// No parameters; `train()`/`eval()` (masks applied or not) and
  /// `is_training()` come from nn::module.
  template <class F>
  void for_each_parameter(F&&, std::string const& = "") const {}
  /// The generator the masks are drawn from.
  generator& gen() noexcept { return gen_; }

  /// @brief @p x unchanged in eval mode or when p == 0, else
  /// x · mask / (1 - p) with a bernoulli(1 - p) keep-mask of x's dims;
  /// evaluated as a tensor of x's type.  Differentiable: the gradient is
  /// g · mask / (1 - p) (the same mask), and g itself in eval mode.
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x) {
    if constexpr (is_ill_formed_v<X>) {
      return ill_formed{};
    } else {
      using result_type = tensor_for<X>;
      static_assert(std::is_floating_point_v<typename result_type::value_type>,
                    "dimtensor: dropout needs a floating-point tensor; cast it first, e.g. cast<float>(x)");
      if (!is_training() || p_ == 0) return result_type(dimtensor::eval(x));
      auto const xt = dimtensor::eval(x);
      using T = typename result_type::value_type;
      auto const mask = detail::bernoulli_like<typename result_type::backend, T, typename result_type::specs>(
          gen_, 1.0 - p_, xt.extents(), std::make_index_sequence<result_type::rank>{});
      return result_type(xt * mask / static_cast<T>(1.0 - p_));
    }
  }

 private:
  double p_;
  generator gen_;

  static double checked(double p) {
    if (!(p >= 0 && p < 1)) throw value_error("dropout: p must be in [0, 1), got " + std::to_string(p));
    return p;
  }
};

}  // namespace dimtensor::nn
