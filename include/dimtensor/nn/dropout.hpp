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
#include <dimtensor/kernel/philox.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/dropout.hpp>
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

/// @brief Dropout's scaled keep-mask (@p scale kept, 0 dropped) of the dims
/// and extents of a tensor of specs L, on @p Backend, under @p key and
/// @p threshold (kernel::dropout_keeps): made on the host, the same mask as
/// the CPU's kernel applies.
template <class Backend, class T, class L, std::size_t R, std::size_t... I>
auto dropout_mask_like(std::uint64_t key, std::uint64_t threshold, T scale, std::array<index_t, R> const& ext,
                       std::index_sequence<I...>) {
  auto mask = empty<T>(named_extent_of<boost::mp11::mp_at_c<L, I>>(ext[I])...);
  for (index_t i = 0; i < mask.size(); ++i) mask.data()[i] = kernel::dropout_keeps(i, key, threshold) ? scale : T(0);
  return dimtensor::to<Backend>(mask);
}

}  // namespace detail

/// @brief `nn.Dropout(p)`: in training mode zeroes each element with
/// probability p and scales the others by 1/(1 - p); in eval mode the
/// identity.
///
/// Starts in training mode, as PyTorch modules do.  The mask is drawn from
/// the module's own generator, so a seed fixes the masks of a run: each
/// call takes one 64-bit key from it, and element i is kept when Philox's
/// word for i under that key is below (1 - p) 2^32 (kernel/philox.hpp, as
/// PyTorch's CUDA dropout draws).  On the CPU one pass applies it (and the
/// same pass, the mask computed again, the gradient), in parallel; other
/// backends get the same mask made on the host, so a seed gives the same
/// masks on every backend and whatever the thread count.
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
  /// x · mask with mask 1 / (1 - p) where kept (probability 1 - p), else 0;
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
      using T = typename result_type::value_type;
      using B = typename result_type::backend;
      std::uint64_t const key = gen_.next_u64();
      std::uint64_t const threshold = kernel::keep_threshold(1.0 - p_);
      T const scale = static_cast<T>(1.0 / (1.0 - p_));
      if constexpr (has_dropout_kernel<B, T>) {
        return dropout_apply(result_type(dimtensor::eval(x)), key, threshold, scale);  // ops/dropout.hpp
      } else {
        auto const xt = dimtensor::eval(x);
        auto const mask = detail::dropout_mask_like<B, T, typename result_type::specs>(
            key, threshold, scale, xt.extents(), std::make_index_sequence<result_type::rank>{});
        return result_type(xt * mask);
      }
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
