#pragma once
/// @file
/// @brief The Thrust backend's scaled dot-product attention kernels: the
/// generic ones (backends/generic/attention.hpp), from its batched product
/// and masked softmax, on every Thrust system (the host ones and CUDA).
/// It offers no additive-scores kernel: ops/additive_scores.hpp composes
/// the scores from the contract's other kernels there.

#include <dimtensor/backends/generic/attention.hpp>
#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/gemm.hpp>
#include <dimtensor/backends/thrust/softmax.hpp>
#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/attention.hpp>

namespace dimtensor {

/// @brief Scaled dot-product attention's forward pass (generic kernels).
template <class System, class T>
void backend_attention_forward(thrust_backend<System>, kernel::attention_problem<T> const& p,
                               kernel::attention_operand<T> const& o, T* row_max, T* row_inv) {
  backends::generic::attention_forward<thrust_backend<System>>(p, o, row_max, row_inv);
}

/// @brief Its backward pass (generic kernels).
template <class System, class T>
void backend_attention_backward(thrust_backend<System>, kernel::attention_problem<T> const& p, T const* row_max,
                                T const* row_inv, kernel::attention_operand<T const> const& dout,
                                kernel::attention_operand<T> const& dq, kernel::attention_operand<T> const& dk,
                                kernel::attention_operand<T> const& dv) {
  backends::generic::attention_backward<thrust_backend<System>>(p, row_max, row_inv, dout, dq, dk, dv);
}

}  // namespace dimtensor
