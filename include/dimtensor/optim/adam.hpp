#pragma once
/// @file
/// @brief `optim::adam`: Adam with PyTorch's update rule (`torch.optim.Adam`,
/// amsgrad off).

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/optim/parameter_list.hpp>

namespace dimtensor::optim {

/// @brief Adam, PyTorch's rule: with g the gradient and t the parameter's
/// own step count (from 1),
///
///     g ← g + weight_decay · p                     (when weight_decay ≠ 0)
///     m ← β₁ m + (1 − β₁) g
///     v ← β₂ v + (1 − β₂) g²
///     p ← p − lr / (1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + eps)
///
/// the moments kept in the parameter's element type, the bias corrections
/// in double, in PyTorch's order, on the parameter's backend (where the
/// moments live too).  Parameters without a gradient are
/// skipped and their step count stays.  Writes the parameters in place
/// under `autograd::no_grad`.
class adam {
 public:
  /// An optimizer over @p params (a module, a tensor, or a parameter_list);
  /// `value_error` for a negative lr, eps or weight_decay or a beta outside [0, 1).
  explicit adam(parameter_list params, double lr = 1e-3, std::pair<double, double> betas = {0.9, 0.999},
                double eps = 1e-8, double weight_decay = 0)
      : lr(lr), betas(betas), eps(eps), weight_decay(weight_decay), params_(std::move(params)),
        states_(params_.size()) {
    auto const check = [](bool ok, std::string const& what, double v) {
      if (!ok) throw value_error("adam: " + what + ", got " + std::to_string(v));
    };
    check(lr >= 0, "the learning rate must be >= 0", lr);
    check(eps >= 0, "eps must be >= 0", eps);
    check(weight_decay >= 0, "weight_decay must be >= 0", weight_decay);
    check(betas.first >= 0 && betas.first < 1, "betas.first must lie in [0, 1)", betas.first);
    check(betas.second >= 0 && betas.second < 1, "betas.second must lie in [0, 1)", betas.second);
  }

  /// One update of every parameter that has a gradient.
  void step() {
    params_.check_not_partial("adam::step()");
    autograd::no_grad const guard;
    for (std::size_t k = 0; k < params_.size(); ++k) {
      parameter_ref const& p = params_.entries()[k];
      if (!p.has_grad()) continue;
      state& s = states_[k];
      ++s.step;
      double const bias_correction1 = 1 - std::pow(betas.first, static_cast<double>(s.step));
      double const bias_correction2 = 1 - std::pow(betas.second, static_cast<double>(s.step));
      p.adam_step(s.exp_avg, s.exp_avg_sq,
                  detail::adam_coefficients{lr, betas.first, betas.second, eps, weight_decay, bias_correction1,
                                            bias_correction2});
    }
  }

  /// Drops every parameter's gradient (PyTorch's `zero_grad(set_to_none=True)`).
  void zero_grad() const noexcept { params_.zero_grad(); }

  /// The parameters.
  parameter_list const& parameters() const noexcept { return params_; }

  /// The learning rate (may be changed between steps).
  double lr;
  /// β₁ and β₂, the decay rates of the moments.
  std::pair<double, double> betas;
  /// Added to the denominator for stability.
  double eps;
  /// The L2 penalty added to the gradient (0: none).
  double weight_decay;

 private:
  struct state {
    std::int64_t step = 0;
    detail::state_buffer exp_avg;
    detail::state_buffer exp_avg_sq;
  };
  parameter_list params_;
  std::vector<state> states_;
};

}  // namespace dimtensor::optim
