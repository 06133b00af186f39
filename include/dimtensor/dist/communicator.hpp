#pragma once
/// @file
/// @brief `dist::communicator`: a group of ranks (processes or threads) and
/// the byte-level collectives under the tensor ones; `dist::transport`, what
/// a world implements (MPI in dimtensor::dist, threads in the runtime).
///
/// A communicator is a handle: copies share the group.  Every collective is
/// called by every rank of the group in the same order; the tensor
/// collectives (dist/collectives.hpp) first compare what each rank brought
/// (the call, the element type, the dims and their extents), so that a rank
/// that brings something else gets a `shape_error` naming the dim and the
/// ranks instead of a hang or a silent mix.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor::dist {

/// How all_reduce and reduce_scatter combine the ranks' elements.
enum class reduce_op : unsigned char {
  sum,   ///< The sum over the ranks (added in rank order by the thread world).
  mean,  ///< The sum divided by the number of ranks (float and double only).
  max,   ///< The largest.
  min    ///< The smallest.
};

/// The name of @p op ("sum", "mean", …), for messages.
constexpr std::string_view name_of(reduce_op op) noexcept {
  switch (op) {
    case reduce_op::sum: return "sum";
    case reduce_op::mean: return "mean";
    case reduce_op::max: return "max";
    case reduce_op::min: return "min";
  }
  return "?";
}

/// The element types a transport reduces.
enum class scalar_type : unsigned char {
  f32,   ///< float
  f64,   ///< double
  i32,   ///< std::int32_t
  i64,   ///< std::int64_t
  u8     ///< bool, as one byte (max: or, min: and)
};

/// The size of one element of @p t, in bytes.
constexpr std::size_t size_of(scalar_type t) noexcept {
  switch (t) {
    case scalar_type::f32: return 4;
    case scalar_type::f64: return 8;
    case scalar_type::i32: return 4;
    case scalar_type::i64: return 8;
    case scalar_type::u8: return 1;
  }
  return 1;
}

/// The name of @p t ("float", …), for messages.
constexpr std::string_view name_of(scalar_type t) noexcept {
  switch (t) {
    case scalar_type::f32: return "float";
    case scalar_type::f64: return "double";
    case scalar_type::i32: return "int32";
    case scalar_type::i64: return "int64";
    case scalar_type::u8: return "bool";
  }
  return "?";
}

/// The scalar_type of element type @p T.
template <class T>
constexpr scalar_type scalar_type_of() noexcept {
  if constexpr (std::is_same_v<T, float>) {
    return scalar_type::f32;
  } else if constexpr (std::is_same_v<T, double>) {
    return scalar_type::f64;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    return scalar_type::i32;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return scalar_type::i64;
  } else {
    static_assert(std::is_same_v<T, bool>, "dimtensor: a collective's elements are float, double, int32, int64 or bool");
    return scalar_type::u8;
  }
}

/// @brief Another rank of the group failed, or the group was aborted: what
/// the collectives of the other ranks throw instead of waiting forever.
class aborted_error : public error {
 public:
  using error::error;
};

/// @brief The collectives on raw buffers of host memory that a world
/// implements.  Every call is collective: each rank of the group makes it,
/// in the same order, with matching arguments (the tensor collectives check
/// that first, with `all_gather`).  Reductions give every rank the same
/// bits.  A transport throws `aborted_error` from a collective when another
/// rank failed.
class transport {
 public:
  transport() = default;
  transport(transport const&) = delete;
  transport& operator=(transport const&) = delete;
  virtual ~transport() = default;

  /// This rank, from 0.
  virtual int rank() const noexcept = 0;
  /// The number of ranks.
  virtual int size() const noexcept = 0;
  /// The transport's name in messages ("mpi", "threads").
  virtual std::string_view name() const noexcept = 0;

  /// Combines @p count elements of @p type at @p data over the ranks, in
  /// place (sum, max or min; mean is a sum here, divided by the caller).
  virtual void all_reduce(void* data, std::size_t count, scalar_type type, reduce_op op) = 0;
  /// Copies @p bytes at @p data from rank @p root to every other rank.
  virtual void broadcast(void* data, std::size_t bytes, int root) = 0;
  /// Rank r's @p bytes at @p in land at `out + offsets[r]` on every rank,
  /// where `offsets` are the prefix sums of @p bytes_per_rank (which every
  /// rank gives the same).
  virtual void all_gather(void const* in, void* out, std::vector<std::size_t> const& bytes_per_rank) = 0;
  /// Combines the ranks' @p in (the sum of @p counts elements, the same on
  /// every rank) and leaves rank r the r-th part, `counts[r]` elements
  /// after the first r parts, at @p out.
  virtual void reduce_scatter(void const* in, void* out, std::vector<std::size_t> const& counts, scalar_type type,
                              reduce_op op) = 0;
  /// Returns when every rank has called it.
  virtual void barrier() = 0;
  /// The ranks that give the same @p color, in the order of @p key (then of
  /// their rank here), as a new group; collective over this group.
  virtual std::shared_ptr<transport> split(int color, int key) = 0;
  /// Ends the group on every rank after a failure: the others' collectives
  /// throw (threads) or the processes exit with @p code (MPI).
  virtual void abort(int code, std::string_view why) noexcept = 0;

  /// @brief Whether the transport also reduces buffers in a device's
  /// memory (NCCL, for the tensors of the cuda backend): the tensor
  /// collectives then give all_reduce_device and broadcast_device those
  /// buffers instead of copies in host memory.
  virtual bool takes_device_memory() const noexcept { return false; }
  /// The all_reduce of a buffer in device memory (error: host memory only).
  virtual void all_reduce_device(void* /*data*/, std::size_t /*count*/, scalar_type /*type*/, reduce_op /*op*/) {
    throw error(std::string("dist (") + std::string(name()) + "): this transport reduces host memory only");
  }
  /// The broadcast of a buffer in device memory (error: host memory only).
  virtual void broadcast_device(void* /*data*/, std::size_t /*bytes*/, int /*root*/) {
    throw error(std::string("dist (") + std::string(name()) + "): this transport broadcasts host memory only");
  }
};

namespace detail {

/// The collectives, as the agreement check names them.
enum class collective : unsigned char { all_reduce, broadcast, all_gather, reduce_scatter, barrier, split, gradients };

/// @brief What a rank brings to a collective, compared across the ranks by
/// `agree` before any element moves.
struct call_signature {
  collective call;                           ///< Which collective.
  std::string_view call_text;                ///< The call in messages ("all_gather<Batch>").
  scalar_type type;                          ///< The element type.
  reduce_op op;                              ///< The reduction (all_reduce, reduce_scatter).
  int root;                                  ///< The root (broadcast).
  int along;                                 ///< The position of the dim gathered or scattered, or -1.
  std::span<std::string_view const> names;   ///< The tensor's dim names.
  std::span<index_t const> extents;          ///< Its extents.
};

/// @brief Gathers every rank's @p mine and throws on every rank (the same
/// message) when they differ: another call, element type, operation, root,
/// dims, or extents (all but the `along` one for all_gather).  Returns the
/// extent of the `along` dim on each rank (empty when along is -1).
/// Collective.  Defined in the runtime (src/dist/agree.cpp).
std::vector<index_t> agree(transport& t, call_signature const& mine);

/// FNV-1a's start: the hashes the ranks compare (dims, models, orders) begin here.
inline constexpr std::uint64_t fnv1a_offset = 1469598103934665603ULL;
/// One FNV-1a step: @p h with @p v mixed in.
constexpr std::uint64_t fnv1a_mix(std::uint64_t h, std::uint64_t v) noexcept { return (h ^ v) * 1099511628211ULL; }

/// Every rank's @p mine, in rank order.  Collective (an error path's:
/// every rank calls it once it knows the ranks differ).
std::vector<std::string> gather_text(transport& t, std::string const& mine);

}  // namespace detail

/// @brief A group of ranks: this rank's handle on a transport.  Copies
/// share the group.  Made by a world (`dist::mpi_world::communicator()`,
/// `dist::run_threads`), never by hand.
class communicator {
 public:
  /// A handle on @p t (not null).
  explicit communicator(std::shared_ptr<transport> t) : transport_(std::move(t)) {
    if (!transport_) throw value_error("dist::communicator: no transport");
  }

  /// This rank, from 0.
  int rank() const noexcept { return transport_->rank(); }
  /// The number of ranks.
  int size() const noexcept { return transport_->size(); }
  /// The transport's name ("mpi", "threads").
  std::string_view transport_name() const noexcept { return transport_->name(); }

  /// Returns when every rank has called it.
  void barrier() const {
    (void)detail::agree(*transport_, {detail::collective::barrier, "barrier", scalar_type::u8, reduce_op::sum, 0, -1,
                                      {}, {}});
  }

  /// @brief The ranks that give the same @p color, ordered by @p key (then
  /// by rank), as a new communicator: the data-parallel group of a mesh is
  /// `world.split(rank / model_ranks, rank)`.  Collective; `value_error` for
  /// a negative color.
  communicator split(int color, int key) const {
    if (color < 0) throw value_error("dist::communicator::split: the color must be >= 0, got " + std::to_string(color));
    (void)detail::agree(*transport_, {detail::collective::split, "split", scalar_type::u8, reduce_op::sum, 0, -1,
                                      {}, {}});
    return communicator(transport_->split(color, key));
  }

  /// Ends the group after a failure (see transport::abort).
  void abort(int code, std::string_view why) const noexcept { transport_->abort(code, why); }

  /// The transport, for the collectives.
  transport& raw() const noexcept { return *transport_; }

 private:
  std::shared_ptr<transport> transport_;
};

}  // namespace dimtensor::dist
