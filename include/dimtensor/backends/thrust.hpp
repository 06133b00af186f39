#pragma once
/// @file
/// @brief The Thrust backend: `thrust_cpp`, `thrust_omp` (with OpenMP) and
/// `cuda` (under nvcc), each with the CPU backend's operations.
///
/// Include it (or compile with `DIMTENSOR_DEFAULT_BACKEND`, which includes
/// it) to make tensors of the Thrust backend: `basic_tensor<thrust_omp, float, Batch, Hidden>`.

#include <dimtensor/backends/thrust/assign.hpp>
#include <dimtensor/backends/thrust/attention.hpp>
#include <dimtensor/backends/thrust/cross_entropy.hpp>
#include <dimtensor/backends/thrust/gather.hpp>
#include <dimtensor/backends/thrust/gemm.hpp>
#include <dimtensor/backends/thrust/reduce.hpp>
#include <dimtensor/backends/thrust/softmax.hpp>
#include <dimtensor/backends/thrust/storage.hpp>
#include <dimtensor/backends/thrust/strided_copy.hpp>
#include <dimtensor/backends/thrust/system.hpp>
