#pragma once
/// @file
/// @brief `optim::sgd`: stochastic gradient descent with PyTorch's update
/// rule (`torch.optim.SGD` with dampening 0, nesterov off).
///
/// @code
/// dt::optim::sgd trainer(net, 0.5);          // net.for_each_parameter(...)
/// for (int epoch = 0; epoch < 5; ++epoch) {
///   trainer.zero_grad();
///   auto l = dt::nn::mse_loss(net(x, keys, values), y, dt::nn::reduction::none);
///   dt::sum(l).backward();
///   trainer.step();
/// }
/// @endcode

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/optim/parameter_list.hpp>

namespace dimtensor::optim {

/// @brief Stochastic gradient descent, PyTorch's rule: with g the gradient,
///
///     g ← g + weight_decay · p                     (when weight_decay ≠ 0)
///     b ← g on the first step, else momentum · b + g   (when momentum ≠ 0)
///     p ← p − lr · (momentum ≠ 0 ? b : g)
///
/// computed in the parameter's element type, in PyTorch's order, on the
/// parameter's backend (where the momentum buffers live too).
/// Parameters without a gradient are skipped (their momentum is left as
/// it is).  Writes the parameters in place under `autograd::no_grad`.
class sgd {
 public:
  /// An optimizer over @p params (a module, a tensor, or a parameter_list).
  /// `value_error` for a negative @p lr, @p momentum or @p weight_decay.
  explicit sgd(parameter_list params, double lr, double momentum = 0, double weight_decay = 0)
      : lr(lr), momentum(momentum), weight_decay(weight_decay), params_(std::move(params)),
        buffers_(params_.size()) {
    if (!(lr >= 0)) throw value_error("sgd: the learning rate must be >= 0, got " + std::to_string(lr));
    if (!(momentum >= 0)) throw value_error("sgd: momentum must be >= 0, got " + std::to_string(momentum));
    if (!(weight_decay >= 0)) {
      throw value_error("sgd: weight_decay must be >= 0, got " + std::to_string(weight_decay));
    }
  }

  /// One update of every parameter that has a gradient.
  void step() {
    params_.check_not_partial("sgd::step()");
    autograd::no_grad const guard;
    for (std::size_t k = 0; k < params_.size(); ++k) {
      parameter_ref const& p = params_.entries()[k];
      if (!p.has_grad()) continue;
      buffer& b = buffers_[k];
      p.sgd_step(b.values, detail::sgd_coefficients{lr, momentum, weight_decay, b.started});
      b.started = b.started || momentum != 0;
    }
  }

  /// Drops every parameter's gradient (PyTorch's `zero_grad(set_to_none=True)`).
  void zero_grad() const noexcept { params_.zero_grad(); }

  /// The parameters.
  parameter_list const& parameters() const noexcept { return params_; }

  /// The learning rate (may be changed between steps).
  double lr;
  /// The momentum factor (0: none).
  double momentum;
  /// The L2 penalty added to the gradient (0: none).
  double weight_decay;

 private:
  struct buffer {
    detail::state_buffer values;
    bool started = false;
  };
  parameter_list params_;
  std::vector<buffer> buffers_;
};

}  // namespace dimtensor::optim
