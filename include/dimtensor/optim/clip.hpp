#pragma once
/// @file
/// @brief `optim::clip_grad_norm`: d2l's `grad_clipping` (PyTorch's
/// `clip_grad_norm_` with the L2 norm).

#include <cmath>
#include <string>
#include <type_traits>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/optim/parameter_list.hpp>

namespace dimtensor::optim {

/// @brief Scales the gradients of @p params (a module, a tensor, or a
/// parameter_list) so that their global L2 norm — over all the gradients'
/// elements together — is at most @p max_norm, and returns the norm they
/// had.
///
/// As d2l's `grad_clipping(net, theta)`: when the norm exceeds max_norm,
/// every gradient is multiplied by max_norm / norm; else nothing changes.
/// Parameters without a gradient are skipped.  The squares add up in
/// double, on each parameter's backend; the scaling runs there too.
/// `value_error` for a negative @p max_norm, and for a partial gradient
/// (a data-parallel rank's share: the norm is the whole batch's, so clip
/// after `dist::all_reduce_gradients`).
inline double clip_grad_norm(parameter_list const& params, double max_norm) {
  if (!(max_norm >= 0)) {
    throw value_error("clip_grad_norm: max_norm must be >= 0, got " + std::to_string(max_norm));
  }
  params.check_not_partial("clip_grad_norm");
  double squares = 0;
  for (parameter_ref const& p : params) {
    if (p.has_grad()) squares += p.grad_squared_sum();
  }
  double const norm = std::sqrt(squares);
  if (norm > max_norm) {
    autograd::no_grad const guard;
    double const factor = max_norm / norm;
    for (parameter_ref const& p : params) {
      if (p.has_grad()) p.scale_grad(factor);
    }
  }
  return norm;
}

}  // namespace dimtensor::optim
