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
