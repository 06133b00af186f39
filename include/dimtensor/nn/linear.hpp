#pragma once
/// @file
/// @brief `nn::linear<In, Out, T, Backend>`: PyTorch's `nn.Linear`, named by
/// the dims it maps.
///
/// `linear<QueryFeat, Hidden>` maps a tensor's QueryFeat dim to Hidden,
/// wherever QueryFeat is: [Batch, Queries, QueryFeat] → [Batch, Queries, Hidden].
/// Because the module names its input dim, applying it to the wrong tensor
/// (d2l's `W_q(keys)`, keys being [Batch, KVPairs, KeyFeat]) is a compile
/// error naming the module and the tensor's dims, not a silent matmul of two
/// feature sizes that happen to agree.

#include <boost/mp11/algorithm.hpp>
#include <cmath>
#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/checked.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>
#include <string>
#include <string_view>
#include <type_traits>

namespace dimtensor {

namespace call {
/// `nn::linear<In, Out>::operator()`.
struct linear : named<"linear"> {};
}  // namespace call

namespace diagnostic {

/// `linear<In, Out>` applied to a tensor of dims @p Dims, which lack In.
template <class In, class Out, class Dims>
struct linear_input_lacks_dim {
  static_assert(always_false<In, Out, Dims>,
                "dimtensor: linear<In, Out> applied to a tensor without its input dim In "
                "(see linear_input_lacks_dim<In, Out, dims of the tensor> above); "
                "apply the module built for this tensor's features, or rename the dim");
};

/// `linear<In, Out>` applied to a tensor of dims @p Dims, which already have Out.
template <class In, class Out, class Dims>
struct linear_output_dim_present {
  static_assert(always_false<In, Out, Dims>,
                "dimtensor: linear<In, Out> applied to a tensor that already has its output dim Out, "
                "and a dim may appear only once (see linear_output_dim_present<In, Out, dims of the tensor> above)");
};

}  // namespace diagnostic

namespace nn {

namespace detail {

/// permute<Ds...>(x) for the tags of a list.
template <class Tags>
struct permute_to;
template <template <class...> class List, class... Ds>
struct permute_to<List<Ds...>> {
  template <class X>
  static auto apply(X const& x) {
    return dimtensor::permute<Ds...>(x);
  }
};

/// What is wrong with applying linear<In, Out, T, Backend> to an X: a
/// diagnostic class (named, not yet instantiated), `ill_formed`, or void.
template <class In, class Out, class T, class Backend, class X>
constexpr auto linear_diagnosis() {
  if constexpr (is_ill_formed_v<X>) {
    return std::type_identity<ill_formed>{};
  } else if constexpr (!std::is_same_v<typename X::backend, Backend>) {
    return std::type_identity<diagnostic::backends_differ<call::linear, typename X::backend, Backend>>{};
  } else if constexpr (!std::is_same_v<typename X::value_type, T>) {
    return std::type_identity<diagnostic::element_types_differ<call::linear, typename X::value_type, T>>{};
  } else if constexpr (!meta::contains_v<In, typename X::specs>) {
    return std::type_identity<diagnostic::linear_input_lacks_dim<In, Out, typename X::specs>>{};
  } else if constexpr (!std::is_same_v<In, Out> && meta::contains_v<Out, typename X::specs>) {
    return std::type_identity<diagnostic::linear_output_dim_present<In, Out, typename X::specs>>{};
  } else {
    return std::type_identity<void>{};
  }
}

}  // namespace detail

/// @brief `nn.Linear` mapping the dim In to the dim Out: y = x·Wᵀ + b.
///
/// `weight` has PyTorch's layout [Out, In]; `bias` is [Out] (zeros, and
/// unused, when built without one).  Both start as PyTorch initializes them:
/// uniform in [-1/√in, 1/√in), and require gradients (PyTorch's
/// `nn.Parameter`): `backward()` fills `weight.grad()` and `bias.grad()`;
/// write into them only under `autograd::no_grad` (optimizers and
/// `load_parameters` do).
/// A square layer, `linear<Hidden, Hidden>` (d2l's `W_o`), maps Hidden to
/// Hidden; its weight names its input dim `prime<Hidden>` (printed
/// `Hidden'`), since a shape may not name a dim twice.
///
/// The parameters live on @p Backend (`default_backend` unless named:
/// `linear<In, Out, float, thrust_omp>`), and the layer applies to tensors
/// of that backend.  They are drawn on the host, so a seed gives the same
/// numbers on every backend.
template <class In, class Out, class T = float, class Backend = default_backend>
class linear : public module<linear<In, Out, T, Backend>> {
  static_assert(DimTag<In> && DimTag<Out>,
                "dimtensor: linear<In, Out, T> needs dimension tags declared with DIMTENSOR_DIM for In and Out");

 public:
  /// The dim naming the weight's input features: In, or prime<In> when In
  /// and Out are the same dim.
  using weight_in = std::conditional_t<std::is_same_v<In, Out>, prime<In>, In>;
  /// The backend of the parameters and of the tensors the layer applies to.
  using backend = Backend;
  /// The weight's type, [Out, weight_in].
  using weight_type = basic_tensor<Backend, T, Out, weight_in>;
  /// The bias's type, [Out].
  using bias_type = basic_tensor<Backend, T, Out>;

  /// The weight, [Out, In] as in PyTorch (In primed when it is Out).
  weight_type weight;
  /// The bias, [Out]; zeros and unused unless has_bias().
  bias_type bias;

  /// A layer mapping @p in features to @p out, with a bias if @p with_bias,
  /// drawn from @p gen (kaiming-uniform, as `nn.Linear.reset_parameters`).
  /// `value_error` when an extent is not positive.
  linear(In in, Out out, bool with_bias, generator& gen) : has_bias_(with_bias) {
    if (in.value <= 0 || out.value <= 0) {
      throw value_error("linear: extents must be positive, got " + std::string(dim_name_v<In>) + " " +
                        std::to_string(in.value) + " and " + std::string(dim_name_v<Out>) + " " +
                        std::to_string(out.value));
    }
    double const bound = 1.0 / std::sqrt(static_cast<double>(in.value));
    {
      autograd::no_grad const drawing;
      weight = dimtensor::to<Backend>(uniform<T>(gen, -bound, bound, out, weight_in(in.value)));
      bias = has_bias_ ? dimtensor::to<Backend>(uniform<T>(gen, -bound, bound, out))
                       : bias_type(typename bias_type::extents_type{out.value});
    }
    // Parameters are variables from the start, as PyTorch's nn.Parameter.
    weight.requires_grad_();
    if (has_bias_) bias.requires_grad_();
  }
  /// As above, drawing from `default_generator()`.
  linear(In in, Out out, bool with_bias = true) : linear(in, out, with_bias, default_generator()) {}
  /// With a bias, drawn from @p gen.
  linear(In in, Out out, generator& gen) : linear(in, out, true, gen) {}

  /// Whether the layer adds a bias.
  bool has_bias() const noexcept { return has_bias_; }
  /// The extent of In.
  index_t in_features() const { return weight.template extent<weight_in>(); }
  /// The extent of Out.
  index_t out_features() const { return weight.template extent<Out>(); }

  /// @brief Applies the layer: @p x's dims with In replaced by Out, in place.
  ///
  /// x must be an expression on Backend (`backends_differ` otherwise) of
  /// element type T with the dim In and,
  /// unless the layer is square, without Out (compile-time diagnostics `linear_input_lacks_dim`,
  /// `linear_output_dim_present`, `element_types_differ` name the module's
  /// dims); In's extent must be in_features() (`shape_error` naming
  /// "linear", In and both sizes).  When In is not x's last dim the result
  /// is a permuted view of a fresh tensor.  Differentiable: the product's
  /// gradients go through the same GEMM as the forward pass (see
  /// `contract`), the bias's gradient is the sum of the output's gradient
  /// over every dim but Out.  The bias is the GEMM's C where the backend's
  /// GEMM accumulates (`contract_affine_checked`): no pass of its own.
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x) const {
    if constexpr (rejects(detail::linear_diagnosis<In, Out, T, Backend, X>())) {
      return ill_formed{};
    } else {
      return checked<call::linear>(
          [&](auto const& x) {
            auto const xt = eval(x);
            index_t const n = xt.template extent<In>();
            if (n != in_features())
              throw_extent_mismatch("linear", dim_name_v<In>, n, in_features(), "input", "weight");
            auto const product = [&](auto const& input, auto contracted) {
              using D = typename decltype(contracted)::type;
              return has_bias_ ? contract_affine_checked<D>("linear", input, weight, bias)
                               : contract_checked<D>("linear", input, weight);
            };
            auto y = [&] {
              if constexpr (std::is_same_v<In, Out>) {
                return product(rename<In, weight_in>(xt), std::type_identity<weight_in>{});
              } else {
                return product(xt, std::type_identity<In>{});
              }
            }();
            using target = boost::mp11::mp_replace<meta::tags_of<typename X::specs>, In, Out>;
            return detail::permute_to<target>::apply(y);
          },
          x);
    }
  }

  /// @brief Calls `f(key, parameter)` for each parameter under its PyTorch
  /// `state_dict` key, @p prefix first: "weight", then "bias" when the
  /// layer has one.  The protocol of nn/module.hpp.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    visit(*this, f, prefix);
  }
  /// As above, read-only.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    visit(*this, f, prefix);
  }

 private:
  bool has_bias_;

  template <class Self, class F>
  static void visit(Self& self, F& f, std::string const& prefix) {
    f(prefix + "weight", self.weight);
    if (self.has_bias_) f(prefix + "bias", self.bias);
  }
};

}  // namespace nn

}  // namespace dimtensor
