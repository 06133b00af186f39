#pragma once
/// @file
/// @brief `nn::feed_forward<In, Hidden, Out, T, Backend>`: d2l's `PositionWiseFFN`,
/// two dense layers with an activation between (ReLU, or GELU in either
/// form, or SiLU: `nn::feed_forward_options`), applied at every position.
///
/// `feed_forward<Feat, FFNHidden, Feat>` maps a tensor's Feat dim through
/// FFNHidden and back, wherever Feat is and whatever the other dims
/// (d2l's [Batch, Steps, num_hiddens]); the state_dict keys are d2l's:
/// `dense1.weight`, `dense1.bias`, `dense2.weight`, `dense2.bias`.

#include <cstdint>
#include <string>
#include <type_traits>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::nn {

/// The activation between a feed_forward's two layers.
enum class activation : std::uint8_t {
  relu,       ///< max(x, 0): d2l's PositionWiseFFN, the original Transformer
  gelu,       ///< GELU, exact (erf) form: BERT's `hidden_act="gelu"`
  gelu_tanh,  ///< GELU, tanh form: GPT-2's `activation_function="gelu_new"`
  silu,       ///< x σ(x)
};

/// @brief A feed_forward's options, by name:
/// `{.act = nn::activation::gelu, .bias = false}`.
struct feed_forward_options {
  /// The activation between the layers.
  activation act = activation::relu;
  /// Whether both layers have a bias (`nn.Linear(..., bias=...)`).
  bool bias = true;
};

/// @brief d2l's `PositionWiseFFN(ffn_num_input, ffn_num_hiddens,
/// ffn_num_outputs)`: dense2(relu(dense1(x))), mapping the dim In to Out
/// through Hidden.
///
/// In and Out may be the same dim (the Transformer's case); Hidden must
/// differ from both.  Applying it to a tensor without In is linear's
/// compile error, naming `linear<In, Hidden>`.  Both layers live on
/// @p Backend.
template <class In, class Hidden, class Out = In, class T = float, class Backend = default_backend>
class feed_forward : public module<feed_forward<In, Hidden, Out, T, Backend>> {
  static_assert(DimTag<In> && DimTag<Hidden> && DimTag<Out>,
                "dimtensor: feed_forward<In, Hidden, Out, T> needs dimension tags declared with DIMTENSOR_DIM");
  static_assert(!std::is_same_v<In, Hidden> && !std::is_same_v<Hidden, Out>,
                "dimtensor: feed_forward<In, Hidden, Out> needs a hidden dim of its own (In and Out may be the same)");

 public:
  /// The backend of the layers and of the input.
  using backend = Backend;
  // dense1 (In → Hidden) and dense2 (Hidden → Out): keys `dense1.weight`,
  // `dense1.bias`, `dense2.weight`, `dense2.bias` (nn/module.hpp).
  BOOST_HANA_DEFINE_STRUCT(feed_forward, (linear<In, Hidden, T, Backend>, dense1),
                           (linear<Hidden, Out, T, Backend>, dense2));

  /// d2l's `PositionWiseFFN(ffn_num_input, ffn_num_hiddens, ffn_num_outputs)`,
  /// both layers with bias, drawn from @p gen in that order (as `nn.Linear`).
  feed_forward(In ffn_num_input, Hidden ffn_num_hiddens, Out ffn_num_outputs, generator& gen)
      : dense1(ffn_num_input, ffn_num_hiddens, true, gen), dense2(ffn_num_hiddens, ffn_num_outputs, true, gen) {}
  /// As above, drawing from `default_generator()`.
  feed_forward(In ffn_num_input, Hidden ffn_num_hiddens, Out ffn_num_outputs)
      : feed_forward(ffn_num_input, ffn_num_hiddens, ffn_num_outputs, default_generator()) {}
  /// With @p options (the activation, the biases); the layers drawn from
  /// @p gen as above.
  feed_forward(In ffn_num_input, Hidden ffn_num_hiddens, Out ffn_num_outputs, feed_forward_options options,
               generator& gen)
      : dense1(ffn_num_input, ffn_num_hiddens, options.bias, gen),
        dense2(ffn_num_hiddens, ffn_num_outputs, options.bias, gen),
        act_(options.act) {}
  /// As above, drawing from `default_generator()`.
  feed_forward(In ffn_num_input, Hidden ffn_num_hiddens, Out ffn_num_outputs, feed_forward_options options)
      : feed_forward(ffn_num_input, ffn_num_hiddens, ffn_num_outputs, options, default_generator()) {}

  /// The activation between the layers.
  activation act() const noexcept { return act_; }

  /// @brief dense2(act(dense1(x))): x's dims with In replaced by Out.
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x) const {
    auto const hidden = dense1(x);
    if constexpr (is_ill_formed_v<std::remove_cvref_t<decltype(hidden)>>) {
      return dense2(relu(hidden));  // the diagnosis, once
    } else {
      // each activation's expression is its own type; the second layer
      // evaluates any of them to one
      using result = std::remove_cvref_t<decltype(dense2(relu(hidden)))>;
      switch (act_) {
        case activation::gelu:
          return result(dense2(gelu(hidden)));
        case activation::gelu_tanh:
          return result(dense2(gelu_tanh(hidden)));
        case activation::silu:
          return result(dense2(silu(hidden)));
        case activation::relu:
          break;
      }
      return result(dense2(relu(hidden)));
    }
  }

 private:
  activation act_ = activation::relu;
};

}  // namespace dimtensor::nn
