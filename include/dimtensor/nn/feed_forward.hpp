#pragma once
/// @file
/// @brief `nn::feed_forward<In, Hidden, Out, T, Backend>`: d2l's `PositionWiseFFN`,
/// two dense layers with a ReLU between, applied at every position.
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

  /// @brief dense2(relu(dense1(x))): x's dims with In replaced by Out.
  template <class X>
    requires(Expression<expr_t<X>> || is_ill_formed_v<X>)
  auto operator()(X const& x) const {
    return dense2(relu(dense1(x)));
  }
};

}  // namespace dimtensor::nn
