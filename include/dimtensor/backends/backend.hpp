#pragma once
/// @file
/// @brief What a backend is: the `backend` concept (its storage and the
/// kernels every operation calls), and `default_backend`, the backend of
/// `tensor<T, ...>`, of the factories and of the modules when none is named.
///
/// Operations include this header, never a backend's own files: they call
/// the kernels unqualified, `backend_softmax(Backend{}, ...)`, and
/// argument-dependent lookup finds the backend's overloads.  A backend is a
/// tag type with a nested `storage<T>`, `host_accessible`, `name`, and the
/// free functions the concept lists, each taking the tag first; the CPU
/// backend (backends/cpu.hpp) is always included, the Thrust backend
/// (backends/thrust.hpp) when asked for.  `backend<B>` states the contract in
/// the language: a tensor of a backend whose kernels are not all declared
/// stops at one assertion that names the backend (basic_tensor), not deep
/// inside an operation.

#include <array>
#include <concepts>
#include <cstdint>
#include <string_view>
#include <type_traits>

#include <dimtensor/backends/cpu.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/kernel/blas_layout.hpp>
#include <dimtensor/kernel/evaluator.hpp>

#if defined(DIMTENSOR_DEFAULT_BACKEND)
#include <dimtensor/backends/thrust.hpp>
#endif

namespace dimtensor {

namespace backends::detail {
/// The index functor the contract's `backend_for_each` is checked with.
struct contract_index_functor {
  /// Called once per index.
  DIMTENSOR_HOST_DEVICE void operator()(index_t) const {}
};
}  // namespace backends::detail

/// @brief The backend contract, checked for element type @p T (labels and
/// lengths are `std::int64_t`): storage, the memory kernels, the
/// reductions, the softmax family, the sequence mask, cross-entropy, gather
/// and index_add, the batched product, and for floating-point @p T scaled
/// dot-product attention.  The shapes are `[outer, n, inner]` (the dim
/// worked on has extent n) or a rank-2 strided layout; attention takes
/// kernel/attention.hpp's problem.
template <class B, class T = float>
concept backend =
    requires {
      typename B::template storage<T>;
      { B::host_accessible } -> std::convertible_to<bool>;
      { B::name } -> std::convertible_to<std::string_view>;
    } &&
    requires(B b, T* out, T const* in, T value, index_t n, std::int64_t const* labels, std::int64_t* positions,
             std::array<index_t, 2> const& layout, kernel::strided_matrix<T const> operand,
             kernel::strided_matrix<T> result) {
      // memory
      backend_assign(b, out, layout, detail::scalar_evaluator<T>{value});
      backend_fill(b, out, n, value);
      backend_copy(b, out, in, n);
      backend_strided_copy(b, out, layout, in, layout, layout);
      backend_copy_from_host(b, out, in, n);
      backend_copy_to_host(b, out, in, n);
      backend_for_each(b, n, backends::detail::contract_index_functor{});
      // reductions over n, and the backward passes of max and min
      backend_sum(b, in, out, n, n, n);
      backend_mean(b, in, out, n, n, n);
      backend_max(b, in, out, n, n, n);
      backend_min(b, in, out, n, n, n);
      backend_argmax(b, in, positions, n, n, n);
      backend_extremum_backward(b, in, in, in, out, n, n, n);
      backend_extremum_all_backward(b, in, n, value, value, out);
      // the softmax family and the sequence mask
      backend_softmax(b, in, out, n, n, n);
      backend_log_softmax(b, in, out, n, n, n);
      backend_softmax_backward(b, in, in, out, n, n, n);
      backend_log_softmax_backward(b, in, in, out, n, n, n);
      backend_masked_softmax(b, in, out, n, n, n, labels, n, value);
      backend_masked_softmax_backward(b, in, in, out, n, n, n, labels, n);
      backend_sequence_mask(b, in, out, n, n, n, labels, n, value);
      { backend_first_invalid_length(b, labels, n, n) } -> std::convertible_to<index_t>;
      // cross-entropy, gather, index_add
      backend_cross_entropy(b, in, labels, out, out, out, n, n, n);
      backend_cross_entropy_backward(b, in, labels, in, in, in, n, value, out, n, n, n);
      backend_gather(b, out, in, n, n, n, labels, n);
      backend_index_add(b, out, in, n, n, n, labels, n, n);
      { backend_first_out_of_range(b, labels, n, n) } -> std::convertible_to<index_t>;
      // the batched matrix product
      backend_gemm_batched(b, n, n, n, n, operand, operand, result);
    } &&
    // scaled dot-product attention, for floating-point elements
    // (backends/generic/attention.hpp has it from the kernels above)
    (!std::is_floating_point_v<T> ||
     requires(B b, T* out, T const* in, kernel::attention_problem<T> const& attention,
              kernel::attention_operand<T const> const& rows_in, kernel::attention_operand<T> const& rows) {
       backend_attention_forward(b, attention, rows, out, out);
       backend_attention_backward(b, attention, in, in, rows_in, rows, rows, rows);
     });

/// The backend whose memory is the host's, whatever the default: what is
/// read from files and corpora is staged there (data/nmt.hpp's arrays).
using host_backend = cpu;

#if defined(DIMTENSOR_DEFAULT_BACKEND)
/// The backend of `tensor<T, ...>`, of the factories and of the modules when
/// none is named: `cpu`, or the one `DIMTENSOR_DEFAULT_BACKEND` names.
using default_backend = DIMTENSOR_DEFAULT_BACKEND;
#else
/// The backend of `tensor<T, ...>`, of the factories and of the modules when
/// none is named: `cpu`, or the one `DIMTENSOR_DEFAULT_BACKEND` names.
using default_backend = cpu;
#endif

}  // namespace dimtensor
