#pragma once
/// @file
/// @brief The CPU backend's dims-free code for float and double, compiled
/// once into the library instead of in every translation unit.
///
/// Below the typed shell, most of what a model compiles depends only on the
/// backend and the element type: the kernels (softmax, reductions, GEMM,
/// gathers, strided copies), the gradient buffers, the
/// elementwise program's interpreter, the nodes of views, contractions and line operations, and
/// the GRU's passes and back-propagation through time.
/// Every program that uses `cpu` with float or double needs the same
/// functions; this header declares them as explicit instantiations
/// (`extern template`), so that a file that includes <dimtensor/dimtensor.hpp>
/// calls them instead of compiling and optimizing them again, and the
/// library (src/instances/) defines them once.  Other backends and element
/// types are instantiated where they are used, as before.  The hot kernels
/// (softmax, fused attention) are not here: the runtime compiles them once
/// per instruction set and calls the CPU's (backends/cpu/dispatch.hpp).
///
/// The declarations are left out when `DIMTENSOR_NO_EXTERN_INSTANCES` is
/// defined (config.hpp) and under nvcc: such a file compiles its own copies,
/// with its own flags (the benchmarks do, to build every kernel with
/// -march=native as their peers are).

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <dimtensor/autograd/program.hpp>
#include <dimtensor/autograd/rules/line.hpp>
#include <dimtensor/backends/cpu.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/nn/gru.hpp>
#include <dimtensor/nn/loss.hpp>
#include <dimtensor/ops/additive_scores.hpp>
#include <dimtensor/ops/attention.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/reduce.hpp>

/// @cond INTERNAL
// DIMTENSOR_INSTANCES_(how, T) lists the instances of one element type T,
// each introduced by `how`: `extern template` declares them,
// `template` defines them (src/instances/cpu_<T>.cpp defines
// DIMTENSOR_DEFINE_INSTANCES as its T before including this header).
// Both helper macros are undefined at the end of the file.
#define DIMTENSOR_INSTANCES_INDEX_(how, T, L)                                                                      \
  how void backend_masked_softmax<T, L>(cpu, T const*, T*, index_t, index_t, index_t, L const*, index_t, T);     \
  how void backend_masked_softmax_backward<T, L>(cpu, T const*, T const*, T*, index_t, index_t, index_t, L const*, \
                                                 index_t);                                                        \
  how void backend_sequence_mask<T, L>(cpu, T const*, T*, index_t, index_t, index_t, L const*, index_t, T);       \
  how void backend_cross_entropy<T, L>(cpu, T const*, L const*, T*, T*, T*, index_t, index_t, index_t);          \
  how void backend_cross_entropy_backward<T, L>(cpu, T const*, L const*, T const*, T const*, T const*, index_t, T, \
                                                T*, index_t, index_t, index_t);                                   \
  how void backend_gather<T, L>(cpu, T*, T const*, index_t, index_t, index_t, L const*, index_t);                \
  how void backend_index_add<T, L>(cpu, T*, T const*, index_t, index_t, index_t, L const*, index_t);

#define DIMTENSOR_INSTANCES_RANK_(how, T, R)                                                               \
  how void backend_strided_copy<T, R>(cpu, T*, std::array<index_t, R> const&, T const*,                  \
                                      std::array<index_t, R> const&, std::array<index_t, R> const&);

#define DIMTENSOR_INSTANCES_(how, T)                                                                                 \
  how void backend_copy<T>(cpu, T*, T const*, index_t);                                                              \
  how void backend_fill<T>(cpu, T*, index_t, T);                                                                     \
  how void backend_softmax<T>(cpu, T const*, T*, index_t, index_t, index_t);                                         \
  how void backend_log_softmax<T>(cpu, T const*, T*, index_t, index_t, index_t);                                     \
  how void backend_softmax_backward<T>(cpu, T const*, T const*, T*, index_t, index_t, index_t);                      \
  how void backend_log_softmax_backward<T>(cpu, T const*, T const*, T*, index_t, index_t, index_t);                  \
  how void backend_sum<T, T>(cpu, T const*, T*, index_t, index_t, index_t);                                          \
  how void backend_mean<T>(cpu, T const*, T*, index_t, index_t, index_t);                                            \
  how void backend_max<T>(cpu, T const*, T*, index_t, index_t, index_t);                                             \
  how void backend_min<T>(cpu, T const*, T*, index_t, index_t, index_t);                                             \
  how void backend_argmax<T>(cpu, T const*, std::int64_t*, index_t, index_t, index_t);                               \
  how void backend_extremum_backward<T>(cpu, T const*, T const*, T const*, T*, index_t, index_t, index_t);           \
  how void backend_extremum_all_backward<T>(cpu, T const*, index_t, T, T, T*);                                       \
  how void backend_gemm_batched<T>(cpu, index_t, index_t, index_t, index_t, kernel::strided_matrix<T const>,         \
                                   kernel::strided_matrix<T const>, kernel::strided_matrix<T>);                      \
  DIMTENSOR_INSTANCES_INDEX_(how, T, std::int32_t)                                                                   \
  DIMTENSOR_INSTANCES_INDEX_(how, T, std::int64_t)                                                                   \
  DIMTENSOR_INSTANCES_RANK_(how, T, 1)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 2)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 3)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 4)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 5)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 6)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 7)                                                                               \
  DIMTENSOR_INSTANCES_RANK_(how, T, 8)                                                                               \
  how void autograd::add_gradient<cpu, T>(autograd::tensor_state&, T const*, index_t);                               \
  how void autograd::add_gradient<cpu, T>(autograd::tensor_state&, std::shared_ptr<cpu::storage<T>>, index_t);       \
  how std::pair<std::shared_ptr<cpu::storage<T>>, T const*> autograd::sum_broadcast<cpu, T>(                         \
      T const*, autograd::padded_extents&, autograd::broadcast_mask const&);                                         \
  how void autograd::accumulate_gradient<cpu, T>(autograd::tensor_state&, T const*, autograd::padded_extents,        \
                                                 autograd::broadcast_mask const&);                                   \
  how void autograd::detail::read_leaf<cpu, T, float>(autograd::program_leaf<T> const&,                              \
                                                      autograd::padded_extents const&, T*);                          \
  how void autograd::detail::read_leaf<cpu, T, double>(autograd::program_leaf<T> const&,                             \
                                                       autograd::padded_extents const&, T*);                         \
  how void autograd::detail::read_leaf<cpu, T, std::int32_t>(autograd::program_leaf<T> const&,                       \
                                                             autograd::padded_extents const&, T*);                   \
  how void autograd::detail::read_leaf<cpu, T, std::int64_t>(autograd::program_leaf<T> const&,                       \
                                                             autograd::padded_extents const&, T*);                   \
  how void autograd::detail::read_leaf<cpu, T, bool>(autograd::program_leaf<T> const&,                               \
                                                     autograd::padded_extents const&, T*);                           \
  how void autograd::detail::accumulate_leaf<cpu, T, float>(autograd::program_leaf<T> const&,                        \
                                                            autograd::padded_extents const&, T const*);              \
  how void autograd::detail::accumulate_leaf<cpu, T, double>(autograd::program_leaf<T> const&,                       \
                                                             autograd::padded_extents const&, T const*);             \
  how std::shared_ptr<autograd::node> autograd::copy_node<cpu, T>(std::string_view,                                  \
                                                                  std::shared_ptr<autograd::tensor_state>, index_t); \
  how class autograd::program_node<cpu, T>;                                                                          \
  how class autograd::view_node<cpu, T>;                                                                             \
  how std::shared_ptr<autograd::node> autograd::make_view_node<cpu, T>(                                              \
      std::string_view, std::shared_ptr<autograd::tensor_state>, index_t, autograd::padded_extents const&,           \
      autograd::padded_extents const&, index_t);                                                                     \
  how void detail::copy_permuted<cpu, T>(T*, T const*, detail::run_layout const&, detail::run_positions const&);     \
  how struct detail::matrix_operand<cpu, T>;                                                                         \
  how void detail::batched_product<cpu, T>(                                                                          \
      T const*, detail::run_layout const&, detail::run_positions const&, detail::run_positions const&,               \
      detail::run_positions const&, T const*, detail::run_layout const&, detail::run_positions const&,               \
      detail::run_positions const&, detail::run_positions const&, T*, detail::run_layout const&,                     \
      detail::run_positions const&, detail::run_positions const&, detail::run_positions const&);                     \
  how std::shared_ptr<autograd::node> detail::contract_run<cpu, T>(                                                  \
      std::string_view, detail::contract_side<T>, detail::contract_side<T>, T*, detail::run_layout const&,           \
      detail::run_positions const&, detail::run_positions const&, detail::run_positions const&, bool);               \
  how class detail::contract_node<cpu, T>;                                                                           \
  how class autograd::line_node<cpu, T>;                                                                             \
  how nn::detail::gru_saved<T, cpu> nn::detail::gru_layer_pass<T, cpu>(                                              \
      nn::detail::gru_weights<T, cpu> const&, nn::detail::gru_input<T, cpu> const&,                                  \
      std::optional<nn::detail::gru_state<T, cpu>> const&, index_t);                                                 \
  how class nn::detail::gru_layer_node<T, cpu>;                                                                      \
  how std::pair<nn::detail::gru_seq<T, cpu>, std::shared_ptr<autograd::node>> nn::detail::gru_layer_run<T, cpu>(     \
      nn::detail::gru_weights<T, cpu> const&, nn::detail::gru_input<T, cpu> const&,                                  \
      std::shared_ptr<autograd::tensor_state>, std::optional<nn::detail::gru_state<T, cpu>> const&,                  \
      std::shared_ptr<autograd::tensor_state>, index_t, bool);                                                       \
  how class nn::detail::gru_final_node<T, cpu>;                                                                      \
  how std::shared_ptr<autograd::node> detail::attention_run<cpu, T>(                                                 \
      detail::attention_side<T>, detail::attention_side<T>, detail::attention_side<T>, detail::kept_row_lengths, T, T*, \
      detail::run_layout const&, detail::run_positions const&, std::size_t, bool);                                   \
  how class detail::attention_node<cpu, T>;                                                                          \
  how std::shared_ptr<autograd::node> detail::additive_scores_run<cpu, T>(                                           \
      detail::attention_side<T>, detail::attention_side<T>, detail::attention_side<T>, detail::kept_row_lengths, T*, \
      bool);                                                                                                         \
  how class detail::additive_scores_node<cpu, T>;
/// @endcond

namespace dimtensor {

#if defined(DIMTENSOR_DEFINE_INSTANCES)
DIMTENSOR_INSTANCES_(template, DIMTENSOR_DEFINE_INSTANCES)
#elif !defined(DIMTENSOR_NO_EXTERN_INSTANCES) && !defined(__CUDACC__)
DIMTENSOR_INSTANCES_(extern template, float)
DIMTENSOR_INSTANCES_(extern template, double)
#endif

}  // namespace dimtensor

#undef DIMTENSOR_INSTANCES_
#undef DIMTENSOR_INSTANCES_RANK_
#undef DIMTENSOR_INSTANCES_INDEX_
