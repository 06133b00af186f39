#pragma once
/// @file
/// @brief The CPU backend's fused kernels of the backend contract:
/// scaled dot-product attention forward and backward, additive
/// attention's scores forward and backward (kernel/attention.hpp's
/// problems), layer normalization forward and backward, and dropout.  For
/// float and double they are the kernels of backends/cpu/attention.hpp,
/// layer_norm.hpp and Philox's dropout (src/cpu/kernels.inl), compiled in
/// dimtensor::runtime for each instruction set and called through
/// backends/cpu/dispatch.hpp, so that this header, which every program
/// includes, carries none of their code.

#include <cstdint>
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

/// @brief Layer normalization over the last dim of row-major [rows, n]
/// (backends/cpu/layer_norm.hpp): y, and each row's mean and 1/σ.
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_layer_norm(cpu, T const* x, T const* w, T const* b, T* y, T* mean, T* rstd, index_t rows, index_t n,
                        T eps) {
  backends::cpu::kernels<T>().layer_norm(x, w, b, y, mean, rstd, rows, n, eps);
}

/// @brief Its backward pass: dx, dw and db (each unless null), written.
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_layer_norm_backward(cpu, T const* x, T const* w, T const* mean, T const* rstd, T const* g, T* dx, T* dw,
                                 T* db, index_t rows, index_t n) {
  backends::cpu::kernels<T>().layer_norm_backward(x, w, mean, rstd, g, dx, dw, db, rows, n);
}

/// @brief Dropout's mask under @p key and @p threshold (kernel/philox.hpp)
/// applied to @p n elements: out = in · (kept ? scale : 0).
template <class T>
  requires backends::cpu::has_level_kernels<T>
void backend_dropout(cpu, T const* in, T* out, index_t n, std::uint64_t key, std::uint64_t threshold, T scale) {
  backends::cpu::kernels<T>().dropout(in, out, n, key, threshold, scale);
}

}  // namespace dimtensor
