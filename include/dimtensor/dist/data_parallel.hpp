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
#include <memory>

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

/// @brief Data parallelism that overlaps the reduction with the backward
/// pass: made on the thread that runs the backward passes, it broadcasts
/// the parameters (as `broadcast_parameters`), then listens to this
/// thread's backward passes, and hands each bucket of gradients to a
/// communication thread as soon as no node left in the pass can add to it,
/// so that the last layers' gradients travel while the first layers' are
/// computed.  `wait()` after backward returns when every bucket is reduced.
///
///     dist::data_parallel dp(net, comm, {.bucket_bytes = 1 << 20});
///     loss.backward();           // buckets leave as they are ready
///     dp.wait();                 // the whole batch's gradients
///     optim::clip_grad_norm(net, 1);
///     optimizer.step();
///
/// Buckets are made once, in the reverse of the parameters' order, one
/// element type each, and reduced in that order on every rank (a bucket
/// ready before an earlier one waits for it).  Every parameter takes part:
/// one without a gradient at the end of the pass takes part with zeros
/// (and has a gradient afterwards).  `no_sync()` returns a scope in which
/// backward passes only accumulate (gradient accumulation): the next pass
/// outside reduces the sum.  One object per model and thread; not copyable.
class data_parallel {
 public:
  /// Broadcasts @p params from rank 0 (checked key by key) and starts
  /// listening to this thread's backward passes.  Collective.
  data_parallel(optim::parameter_list params, communicator comm, gradient_options options = {});
  data_parallel(data_parallel const&) = delete;
  data_parallel& operator=(data_parallel const&) = delete;
  /// Stops listening; waits for the communication thread.
  ~data_parallel();

  /// @brief Returns when every bucket of the last backward pass is reduced
  /// (those that were not ready, for parameters the pass did not reach,
  /// are reduced now); the gradients are then whole.  Rethrows a failure
  /// of the communication thread.
  void wait();

  /// A scope whose backward passes accumulate without communicating.
  class no_sync_scope {
   public:
    /// Ends the scope: the next backward pass reduces again.
    ~no_sync_scope();
    no_sync_scope(no_sync_scope const&) = delete;
    no_sync_scope& operator=(no_sync_scope const&) = delete;

   private:
    friend class data_parallel;
    explicit no_sync_scope(data_parallel& owner);
    data_parallel* owner_;
  };
  /// Backward passes inside the returned scope only accumulate gradients.
  [[nodiscard]] no_sync_scope no_sync() { return no_sync_scope(*this); }

  /// The number of buckets.
  std::size_t bucket_count() const noexcept;
  /// How many buckets the last pass handed over before it ended (overlap).
  std::size_t buckets_sent_during_backward() const noexcept;

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

}  // namespace dimtensor::dist
