#pragma once
/// @file
/// @brief Data-parallel training along Batch: `broadcast_parameters` (the
/// same model on every rank, checked key by key) and `all_reduce_gradients`
/// (the ranks' gradients combined in buckets, in a deterministic order).
///
/// A training step on p ranks, each with its part of the batch:
///
///     loss(model(my_part)).backward();
///     dist::all_reduce_gradients(model, comm);   // the whole batch's gradient
///     optim::clip_grad_norm(model, 1);            // the global norm
///     optimizer.step();
///
/// The reduction sums by default.  With d2l's summed losses (a sum over the
/// batch's tokens), p ranks with the batch cut in p parts then hold exactly
/// the gradient of one process with the whole batch.  `reduce_op::mean`
/// divides by p, which is right only for per-rank mean losses over parts of
/// equal size: masked token losses, whose parts hold different numbers of
/// tokens, are not that.  After `broadcast_parameters`, a backward pass
/// leaves the parameters' gradients partial (this rank's share), and the
/// optimizers and `clip_grad_norm` refuse them, naming the parameter and
/// this call, until `all_reduce_gradients` has combined them.

#include <cstddef>

#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/optim/parameter_list.hpp>

namespace dimtensor::dist {

/// How `all_reduce_gradients` combines the ranks' gradients.
struct gradient_options {
  /// `sum` (the default) or `mean` (the sum divided by the number of ranks).
  reduce_op op = reduce_op::sum;
  /// The largest bucket, in bytes: gradients are copied into buckets of at
  /// most this size (a gradient larger than it is a bucket of its own),
  /// one element type per bucket, and each bucket is one all-reduce.
  std::size_t bucket_bytes = std::size_t{25} << 20;
};

/// @brief Makes every rank's parameters rank @p root's: first checks that
/// every rank has the same keys, element types and extents, in the same
/// order (a hash of each, then, where they differ, a `value_error` on every
/// rank naming the first differing parameter as each of the two ranks has
/// it), then broadcasts the root's values.  Marks the parameters replicated,
/// so that backward passes leave their gradients partial until
/// `all_reduce_gradients`.  Optimizers made before or after start from
/// equal (empty) states.  Collective.  Defined in the runtime.
void broadcast_parameters(optim::parameter_list const& params, communicator const& comm, int root = 0);

/// @brief Combines the gradients of @p params over the ranks (see the file's
/// comment for sum and mean), in buckets, in the reverse of the parameters'
/// order (the order backward finishes them), the same on every rank.
/// A parameter that has a gradient on some rank but not on this one takes
/// part with zeros (and has a gradient afterwards); one that has none on
/// any rank is left without.  The gradients are whole afterwards.  Every
/// rank must give the same parameters (`value_error` on every rank
/// otherwise).  Collective.  Defined in the runtime.
void all_reduce_gradients(optim::parameter_list const& params, communicator const& comm,
                          gradient_options const& options = {});

}  // namespace dimtensor::dist
