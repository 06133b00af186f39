#pragma once
/// @file
/// @brief `nn::layer_norm<Feat, T, Backend>`: PyTorch's `nn.LayerNorm(d)`, normalizing
/// over one named dim.
///
/// PyTorch normalizes over the last dims; here the dim is named, so
/// `layer_norm<Hidden>` normalizes over Hidden wherever it is in the input
/// ([Batch, Steps, Hidden] as d2l's `AddNorm` has it, or any other order).
/// Written with the differentiable ops (mean over Feat kept as extent 1,
/// elementwise arithmetic), so its gradient is theirs.

#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/layer_norm.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

namespace call {
/// `nn::layer_norm<Feat>::operator()`.
struct layer_norm : named<"layer_norm"> {};
}  // namespace call

namespace nn {

namespace detail {

/// What is wrong with applying layer_norm<Feat, T, Backend> to an X: a
/// diagnostic class (named, not yet instantiated), `ill_formed`, or void.
template <class Feat, class T, class Backend, class X>
constexpr auto layer_norm_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!std::is_same_v<typename expr_t<X>::backend, Backend>) {
    return std::type_identity<diagnostic::backends_differ<call::layer_norm, typename expr_t<X>::backend, Backend>>{};
  } else if constexpr (!std::is_same_v<typename expr_t<X>::value_type, T>) {
    return std::type_identity<diagnostic::element_types_differ<call::layer_norm, typename expr_t<X>::value_type, T>>{};
  } else if constexpr (!meta::contains_v<Feat, typename expr_t<X>::specs>) {
    return std::type_identity<diagnostic::not_a_dimension_of<call::layer_norm, Feat, typename expr_t<X>::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief `nn.LayerNorm(d)` over the dim Feat: (x - mean) / √(var + eps) ·
/// weight + bias, mean and (biased) variance taken over Feat.
///
/// `weight` (ones) and `bias` (zeros) are [Feat], PyTorch's keys
/// "weight" and "bias", and require gradients.  They live on @p Backend,
/// and so must the input.
template <class Feat, class T = float, class Backend = default_backend>
class layer_norm : public module<layer_norm<Feat, T, Backend>> {
  static_assert(DimTag<Feat>, "dimtensor: layer_norm<Feat, T> needs a dimension tag declared with DIMTENSOR_DIM");
  static_assert(std::is_floating_point_v<T>, "dimtensor: layer_norm<Feat, T> needs a floating-point T");

 public:
  /// The backend of the parameters and of the input.
  using backend = Backend;
  /// The parameters' type, [Feat].
  using parameter_type = basic_tensor<Backend, T, Feat>;

  // The scale `weight` (starts at ones) and the shift `bias` (zeros), both
  // [Feat]: the module's parameters, in this order (nn/module.hpp).
  BOOST_HANA_DEFINE_STRUCT(layer_norm, (parameter_type, weight), (parameter_type, bias));

  /// Normalizes over @p features features, adding @p eps (PyTorch's 1e-5)
  /// to the variance.  `value_error` unless the extent is positive and eps
  /// is not negative.
  explicit layer_norm(Feat features, double eps = 1e-5) : eps_(eps) {
    if (features.value <= 0 || !(eps >= 0)) {
      throw value_error("layer_norm: the extent must be positive and eps not negative, got " +
                        std::string(dim_name_v<Feat>) + " " + std::to_string(features.value) + " and eps " +
                        std::to_string(eps));
    }
    weight = parameter_type(features);
    weight.fill(T(1));
    bias = parameter_type(features);
    weight.requires_grad_();
    bias.requires_grad_();
  }

  /// The extent of Feat.
  index_t normalized_size() const { return weight.extents()[0]; }
  /// The constant added to the variance.
  double eps() const noexcept { return eps_; }

  /// @brief Normalizes @p x over Feat: a tensor of x's dims.
  ///
  /// x must live on Backend (`backends_differ` otherwise) and have the dim
  /// Feat (`not_a_dimension_of<call::layer_norm, …>`
  /// otherwise) of extent normalized_size() (`shape_error` naming Feat and
  /// both sizes).
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x) const {
    if constexpr (rejects(detail::layer_norm_diagnosis<Feat, T, Backend, X>())) {
      return ill_formed{};
    } else {
      return checked<call::layer_norm>(
          [&](auto const& x) {
            auto const xt = dimtensor::eval(x);
            using xt_t = std::remove_cvref_t<decltype(xt)>;
            index_t const n = xt.template extent<Feat>();
            if (n != normalized_size()) {
              throw_extent_mismatch("layer_norm", dim_name_v<Feat>, n, normalized_size(), "input",
                                                       "weight");
            }
            using tags = meta::tags_of<typename xt_t::specs>;
            if constexpr (std::is_same_v<boost::mp11::mp_back<tags>, Feat>) {
              return normalize(xt);
            } else {
              // weight and bias align from the right: normalize with Feat last, then put it back.
              using feat_last = boost::mp11::mp_push_back<boost::mp11::mp_remove<tags, Feat>, Feat>;
              return detail::permute_to<tags>::apply(normalize(detail::permute_to<feat_last>::apply(xt)));
            }
          },
          x);
    }
  }

 private:
  double eps_;

  // x has Feat last.
  template <class Xt>
  Xt normalize(Xt const& x) const {
    if constexpr (has_layer_norm_kernel<Backend, T>) {
      return layer_norm_last(x, weight, bias, eps_);  // one pass per row each way (ops/layer_norm.hpp)
    } else {
      return normalize_composed(x);
    }
  }

  // As PyTorch defines it, of lazy operations (any backend).
  template <class Xt>
  Xt normalize_composed(Xt const& x) const {
    auto const mu = mean<Feat>(x, keep_dim);
    Xt const centered = x - mu;
    auto const var = mean<Feat>(centered * centered, keep_dim);
    return Xt(centered * (T(1) / sqrt(var + static_cast<T>(eps_))) * weight + bias);
  }
};

}  // namespace nn
}  // namespace dimtensor
