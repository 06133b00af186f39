#pragma once
/// @file
/// @brief The CPU backend, `dimtensor::cpu`: its storage and every kernel of
/// the backend contract (backends/backend.hpp), OpenMP-parallel, with BLAS
/// products when `DIMTENSOR_HAS_CBLAS` is 1.  It is the default backend, so
/// backends/backend.hpp includes it.

#include <dimtensor/backends/cpu/allocator.hpp>
#include <dimtensor/backends/cpu/assign.hpp>
#include <dimtensor/backends/cpu/cross_entropy.hpp>
#include <dimtensor/backends/cpu/fused_attention.hpp>
#include <dimtensor/backends/cpu/gather.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/softmax.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/backends/cpu/strided_copy.hpp>
#include <dimtensor/config.hpp>

/// @cond INTERNAL
// The CPU kernels' entries for float and double, compiled once into
// dimtensor::runtime (src/instances/cpu_kernels.cpp defines them): a file
// calls those copies (config.hpp, DIMTENSOR_EXTERN_INSTANCES).  Per index
// type L and per rank R:
#define DIMTENSOR_CPU_INDEX_INSTANCES_(how, B, T, L)                                                                  \
  how void backend_masked_softmax<T, L>(B, T const*, T*, index_t, index_t, index_t, L const*, index_t, T);            \
  how void backend_masked_softmax_backward<T, L>(B, T const*, T const*, T*, index_t, index_t, index_t, L const*,      \
                                                 index_t);                                                            \
  how void backend_sequence_mask<T, L>(B, T const*, T*, index_t, index_t, index_t, L const*, index_t, T);             \
  how void backend_cross_entropy<T, L>(B, T const*, L const*, T*, T*, T*, index_t, index_t, index_t);                 \
  how void backend_cross_entropy_backward<T, L>(B, T const*, L const*, T const*, T const*, T const*, index_t, T, T*,  \
                                                index_t, index_t, index_t);                                           \
  how void backend_gather<T, L>(B, T*, T const*, index_t, index_t, index_t, L const*, index_t);                       \
  how void backend_index_add<T, L>(B, T*, T const*, index_t, index_t, index_t, L const*, index_t, index_t);
#define DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, R)                                                                   \
  how void backend_strided_copy<T, R>(B, T*, std::array<index_t, R> const&, T const*, std::array<index_t, R> const&,  \
                                      std::array<index_t, R> const&);
// and in all:
#define DIMTENSOR_CPU_KERNEL_INSTANCES(how, B, T)                                                           \
  how void backend_copy<T>(B, T*, T const*, index_t);                                                       \
  how void backend_fill<T>(B, T*, index_t, T);                                                              \
  how void backend_softmax<T>(B, T const*, T*, index_t, index_t, index_t);                                  \
  how void backend_log_softmax<T>(B, T const*, T*, index_t, index_t, index_t);                              \
  how void backend_softmax_backward<T>(B, T const*, T const*, T*, index_t, index_t, index_t);               \
  how void backend_log_softmax_backward<T>(B, T const*, T const*, T*, index_t, index_t, index_t);           \
  how void backend_sum<T, T>(B, T const*, T*, index_t, index_t, index_t);                                   \
  how void backend_mean<T>(B, T const*, T*, index_t, index_t, index_t);                                     \
  how void backend_max<T>(B, T const*, T*, index_t, index_t, index_t);                                      \
  how void backend_min<T>(B, T const*, T*, index_t, index_t, index_t);                                      \
  how void backend_argmax<T>(B, T const*, std::int64_t*, index_t, index_t, index_t);                        \
  how void backend_extremum_backward<T>(B, T const*, T const*, T const*, T*, index_t, index_t, index_t);    \
  how void backend_extremum_all_backward<T>(B, T const*, index_t, T, T, T*);                                \
  how void backend_gemm_batched<T>(B, index_t, index_t, index_t, index_t, kernel::strided_matrix<T const>,  \
                                   kernel::strided_matrix<T const>, kernel::strided_matrix<T>, bool);       \
  DIMTENSOR_CPU_INDEX_INSTANCES_(how, B, T, std::int32_t)                                                   \
  DIMTENSOR_CPU_INDEX_INSTANCES_(how, B, T, std::int64_t)                                                   \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 1)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 2)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 3)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 4)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 5)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 6)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 7)                                                               \
  DIMTENSOR_CPU_RANK_INSTANCES_(how, B, T, 8)

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_CPU_KERNEL_INSTANCES)
}  // namespace dimtensor
/// @endcond
