#pragma once
/// @file
/// @brief The CPU backend's attention kernels of the backend contract:
/// scaled dot-product attention forward and backward, and additive
/// attention's scores forward and backward (kernel/attention.hpp's
/// problems).  For float and double they are the fused kernels of
/// backends/cpu/attention.hpp, compiled in dimtensor::runtime for each
/// instruction set and called through backends/cpu/dispatch.hpp, so that
/// this header, which every program includes, carries none of their code.

#include <type_traits>

#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/attention.hpp>

namespace dimtensor {

/// @brief Scaled dot-product attention's forward pass: the output rows
/// @p o from the problem @p p, and each query row's softmax statistics
/// (@p row_max, @p row_inv: [batch * queries], for the backward pass).
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_attention_forward(cpu, kernel::attention_problem<T> const& p, kernel::attention_operand<T> const& o,
                               T* row_max, T* row_inv) {
  backends::cpu::kernels<T>().attention_forward(p, o, row_max, row_inv);
}

/// @brief Its backward pass: @p dq written, @p dk and @p dv added into
/// (zeros when called), from the output's gradient @p dout and the
/// forward pass's statistics.
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_attention_backward(cpu, kernel::attention_problem<T> const& p, T const* row_max, T const* row_inv,
                                kernel::attention_operand<T const> const& dout, kernel::attention_operand<T> const& dq,
                                kernel::attention_operand<T> const& dk, kernel::attention_operand<T> const& dv) {
  backends::cpu::kernels<T>().attention_backward(p, row_max, row_inv, dout, dq, dk, dv);
}

/// @brief Additive attention's scores [batch, queries, kv] (dense) from
/// the problem @p p, without its [batch, queries, kv, hidden] features
/// (a backend need not offer it; nn::additive_attention composes the
/// scores where it does not).
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_additive_scores(cpu, kernel::additive_problem<T> const& p, T* scores) {
  backends::cpu::kernels<T>().additive_scores_forward(p, scores);
}

/// @brief Their backward pass: @p dq and @p dw written, @p dk added into
/// (zeros when called), from the scores' gradient @p dscores (dense).
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_additive_scores_backward(cpu, kernel::additive_problem<T> const& p, T const* dscores,
                                      kernel::attention_operand<T> const& dq, kernel::attention_operand<T> const& dk,
                                      T* dw) {
  backends::cpu::kernels<T>().additive_scores_backward(p, dscores, dq, dk, dw);
}

}  // namespace dimtensor
