#pragma once
/// @file
/// @brief Each rank's part of a batch: `dist::shard<D>(x, comm)` cuts a
/// tensor along a named dim, `dist::shard_batches(batches, comm)` gives a
/// rank its rows of every batch of an epoch.
///
/// Data parallelism keeps the batches of one process and gives each rank a
/// part of every batch: rank r of p takes rows [r n / p …) of a batch of
/// n rows — n / p each, one more for each of the first n % p ranks.  Every
/// rank draws the same shuffled order (a generator seeded the same on
/// every rank: `shard_batches` checks it), so the ranks' parts of a batch
/// are the batch, and with summed losses the summed gradients are the
/// batch's.  The last batch of an epoch may be smaller than the ranks:
/// then some ranks have no rows (`empty()`), skip the forward and backward
/// passes, and still take part in `all_reduce_gradients` (with zeros).
/// Dropout is another matter: each rank draws its own masks, from a
/// generator seeded with seed + rank.

#include <cstddef>
#include <cstdint>
#include <string>
#include <iterator>
#include <utility>

#include <boost/mp11/algorithm.hpp>

#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/dims.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor::dist {

/// Rows [begin, end) of a batch.
struct row_range {
  std::size_t begin;  ///< The first row.
  std::size_t end;    ///< Past the last row.
  /// The number of rows.
  std::size_t size() const noexcept { return end - begin; }
  /// Whether there are none.
  bool empty() const noexcept { return end == begin; }
};

/// The rows rank @p rank of @p ranks takes of a batch of @p n rows: n / p
/// each, one more for each of the first n % p ranks.
constexpr row_range rows_of(std::size_t n, int rank, int ranks) noexcept {
  auto const p = static_cast<std::size_t>(ranks);
  auto const r = static_cast<std::size_t>(rank);
  std::size_t const base = n / p;
  std::size_t const extra = n % p;
  std::size_t const begin = r * base + (r < extra ? r : extra);
  return {begin, begin + base + (r < extra ? 1 : 0)};
}

/// How `shard` cuts a dim whose extent the ranks do not divide.
enum class split : unsigned char {
  even,   ///< Refuse it (`value_error`): every rank gets the same extent.
  uneven  ///< n / p each, one more for each of the first n % p ranks (rows_of).
};

/// @brief This rank's part of @p x along @p D, a view: rank r of p takes
/// the r-th of p equal parts.  `value_error` naming D and both numbers when
/// p does not divide D's extent, unless @p how is `split::uneven` (then
/// `rows_of`'s parts).
template <class D, class X>
  requires is_tensor_v<X>
auto shard(X const& x, communicator const& comm, split how = split::even) {
  index_t const n = x.template extent<D>();
  int const p = comm.size();
  if (how == split::even && n % p != 0) {
    throw value_error("shard<" + std::string(dim_name_v<D>) + ">: " + std::string(dim_name_v<D>) + "=" +
                      std::to_string(n) + " does not split evenly over " + std::to_string(p) + " ranks (" +
                      std::to_string(n) + " % " + std::to_string(p) + " = " + std::to_string(n % p) +
                      "); give a multiple of " + std::to_string(p) + ", or split::uneven");
  }
  row_range const part = rows_of(static_cast<std::size_t>(n), comm.rank(), p);
  return slice<D>(x, static_cast<index_t>(part.begin), static_cast<index_t>(part.end));
}

/// @brief This rank's part of @p x along @p D as `shard<D>` cuts it, its
/// type saying so: D becomes `D::sharded<Axis>`, so that an elementwise
/// operation with a whole tensor, or using a reduction over D before
/// `dist::all_reduce`, is a compile error naming D and @p Axis.  @p comm is
/// the axis's group.  A view of @p x's elements, not recorded by autograd
/// (a batch of data: the model's parameters are what get gradients).
template <class D, class Axis, class X>
  requires is_tensor_v<X>
auto shard(X const& x, communicator const& comm, split how = split::even) {
  using L = typename X::specs;
  constexpr std::size_t d = meta::index_of_v<D, L>;
  using typed = boost::mp11::mp_replace_at_c<L, d, sharded<meta::spec_for<D, L>, Axis>>;
  auto const part = shard<D>(x, comm, how);
  return tensor_with_dims<typename X::backend, typename X::value_type, typed>(part.storage(), part.data(),
                                                                               part.extents(), part.strides());
}

/// @brief The extent of @p D over the ranks of @p comm: the sum of the
/// ranks' extents of D in @p x (for a tensor whose D is sharded, the whole
/// dim's; a tensor does not keep it).  Collective: one all-reduce of one
/// number.
template <class D, class X>
  requires is_tensor_v<X>
index_t global_extent(X const& x, communicator const& comm) {
  std::int64_t n = x.template extent<D>();
  comm.raw().all_reduce(&n, 1, scalar_type::i64, reduce_op::sum);
  return n;
}

namespace detail {
/// `value_error` on every rank when the ranks' batches differ (another
/// order, batch size or count); collective.  Defined in the runtime.
void check_same_batches(transport& t, std::uint64_t order_hash, std::size_t batch_size, std::size_t count);
}  // namespace detail

/// @brief This rank's rows of every batch of @p Batches (an epoch of
/// `data::nmt_batches`, or any range with `size()`, `batch_size()`,
/// `order()`, `rows_of(i)` and `rows(i, begin, end)`).  Iterate it as the
/// batches; `part(i)` says which rows of batch i are this rank's.
template <class Batches>
class sharded_batches {
 public:
  /// This rank's parts of @p batches; checks (collective) that every rank
  /// drew the same order, `value_error` on every rank otherwise.
  sharded_batches(Batches batches, communicator comm) : batches_(std::move(batches)), comm_(std::move(comm)) {
    std::uint64_t h = detail::fnv1a_offset;
    for (auto const i : batches_.order()) h = detail::fnv1a_mix(h, static_cast<std::uint64_t>(i));
    detail::check_same_batches(comm_.raw(), h, batches_.batch_size(), batches_.size());
  }

  /// An input iterator over this rank's parts.
  class iterator {
   public:
    /// A part of a batch.
    using value_type = decltype(std::declval<Batches const&>().rows(0, 0, 0));
    /// A distance between iterators.
    using difference_type = std::ptrdiff_t;
    /// An input iterator.
    using iterator_category = std::input_iterator_tag;
    /// A singular iterator.
    iterator() = default;
    /// This rank's part of the batch, made now.
    value_type operator*() const {
      row_range const r = owner_->part(index_);
      return owner_->batches_.rows(index_, r.begin, r.end);
    }
    /// The next batch.
    iterator& operator++() {
      ++index_;
      return *this;
    }
    /// The next batch; returns the iterator as it was.
    iterator operator++(int) {
      auto old = *this;
      ++index_;
      return old;
    }
    /// Whether both stand at the same batch.
    friend bool operator==(iterator const& a, iterator const& b) noexcept { return a.index_ == b.index_; }

   private:
    friend class sharded_batches;
    iterator(sharded_batches const* owner, std::size_t index) : owner_(owner), index_(index) {}
    sharded_batches const* owner_ = nullptr;
    std::size_t index_ = 0;
  };

  /// The first batch.
  iterator begin() const { return iterator(this, 0); }
  /// Past the last batch.
  iterator end() const { return iterator(this, size()); }
  /// The number of batches (the same on every rank).
  std::size_t size() const noexcept { return batches_.size(); }
  /// This rank's rows of batch @p i.
  row_range part(std::size_t i) const { return rows_of(batches_.rows_of(i), comm_.rank(), comm_.size()); }
  /// The whole batches.
  Batches const& whole() const noexcept { return batches_; }

 private:
  Batches batches_;
  communicator comm_;
};

/// This rank's rows of every batch of @p batches (see sharded_batches).
template <class Batches>
sharded_batches<Batches> shard_batches(Batches batches, communicator const& comm) {
  return sharded_batches<Batches>(std::move(batches), comm);
}

}  // namespace dimtensor::dist
