#pragma once
/// @file
/// @brief The library a model is written with: dims, tensors, their
/// operations, autograd, the modules, the optimizers, and printing tensors
/// (io/print.hpp).  Reading and writing files (`.npy`, safetensors,
/// `load_parameters`) is in `<dimtensor/io.hpp>`, plots in `<dimtensor/viz.hpp>`,
/// the attention modules in `<dimtensor/nn/attention.hpp>`, Thrust's
/// backends in `<dimtensor/backends/thrust.hpp>`.

#include <dimtensor/config.hpp>
#include <dimtensor/version.hpp>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>

#include <dimtensor/kernel/math.hpp>

#include <dimtensor/tensor/expression.hpp>
#include <dimtensor/tensor/lengths.hpp>
#include <dimtensor/tensor/tensor.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/autograd/propagate.hpp>

#include <dimtensor/backends/cpu/parallel.hpp>

#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/random.hpp>
#include <dimtensor/ops/compare.hpp>

#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/index_select.hpp>
#include <dimtensor/ops/merge.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/ops/repeat_interleave.hpp>
#include <dimtensor/ops/select.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/split.hpp>
#include <dimtensor/ops/squeeze.hpp>
#include <dimtensor/ops/stack.hpp>
#include <dimtensor/ops/transpose.hpp>
#include <dimtensor/ops/unsqueeze.hpp>

#include <dimtensor/ops/reduce.hpp>
#include <dimtensor/ops/softmax.hpp>
#include <dimtensor/ops/sequence_mask.hpp>
#include <dimtensor/ops/masked_softmax.hpp>

#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/attention.hpp>
#include <dimtensor/ops/additive_scores.hpp>
#include <dimtensor/ops/dropout.hpp>
#include <dimtensor/ops/layer_norm.hpp>

#include <dimtensor/io/print.hpp>

#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/feed_forward.hpp>
#include <dimtensor/nn/gru.hpp>
#include <dimtensor/nn/layer_norm.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/loss.hpp>

#include <dimtensor/optim.hpp>

