// The thread world (dist/threads.hpp): ranks that are threads of this
// process, meeting in shared memory.

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/threads.hpp>

namespace dimtensor::dist {

namespace {

// What every group of one run_threads call shares: one lock and one
// condition for all the meetings, whether the world was aborted and why,
// and which ranks (of the world) have returned from their function.
struct world_state {
  std::mutex mutex;
  std::condition_variable changed;
  bool aborted = false;
  std::string why;
  std::vector<char> finished;
};

// A group: its members (ranks of the world, in the group's order), the
// meeting count, and the slots where each rank posts what the others read
// between two meetings.
struct group {
  group(std::shared_ptr<world_state> w, std::vector<int> m)
      : world(std::move(w)), members(std::move(m)), posted(members.size(), nullptr),
        children(members.size()) {}

  std::shared_ptr<world_state> world;
  std::vector<int> members;
  std::uint64_t generation = 0;
  std::size_t arrived = 0;
  std::vector<void const*> posted;
  std::vector<std::shared_ptr<group>> children;
};

template <class T>
void combine(T* out, std::vector<T const*> const& in, std::size_t n, reduce_op op) {
  for (std::size_t i = 0; i < n; ++i) {
    T v = in[0][i];
    for (std::size_t r = 1; r < in.size(); ++r) {
      T const x = in[r][i];
      switch (op) {
        case reduce_op::sum:
        case reduce_op::mean:
          if constexpr (std::is_same_v<T, std::uint8_t>) {
            v = static_cast<T>(v + x);
          } else {
            v = v + x;
          }
          break;
        case reduce_op::max: v = x > v ? x : v; break;
        case reduce_op::min: v = x < v ? x : v; break;
      }
    }
    out[i] = v;
  }
}

// out[i] = the ranks' in[offset + i] combined, in rank order.
void combine_bytes(void* out, std::vector<void const*> const& in, std::size_t offset, std::size_t count,
                   scalar_type type, reduce_op op) {
  auto const typed = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T const*> ptrs;
    ptrs.reserve(in.size());
    for (void const* p : in) ptrs.push_back(static_cast<T const*>(p) + offset);
    combine(static_cast<T*>(out), ptrs, count, op);
  };
  switch (type) {
    case scalar_type::f32: typed(float{}); break;
    case scalar_type::f64: typed(double{}); break;
    case scalar_type::i32: typed(std::int32_t{}); break;
    case scalar_type::i64: typed(std::int64_t{}); break;
    case scalar_type::u8: typed(std::uint8_t{}); break;
  }
}

class thread_transport final : public transport {
 public:
  thread_transport(std::shared_ptr<group> g, int rank) : group_(std::move(g)), rank_(rank) {}

  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return static_cast<int>(group_->members.size()); }
  std::string_view name() const noexcept override { return "threads"; }

  void all_reduce(void* data, std::size_t count, scalar_type type, reduce_op op) override {
    std::size_t const bytes = count * size_of(type);
    std::vector<unsigned char> copy(static_cast<unsigned char*>(data), static_cast<unsigned char*>(data) + bytes);
    post(copy.data());
    meet();
    combine_bytes(data, group_->posted, 0, count, type, op);
    meet();  // the copies outlive every reader
  }

  void broadcast(void* data, std::size_t bytes, int root) override {
    post(data);
    meet();
    if (rank_ != root && bytes > 0) std::memcpy(data, group_->posted[static_cast<std::size_t>(root)], bytes);
    meet();
  }

  void all_gather(void const* in, void* out, std::vector<std::size_t> const& bytes_per_rank) override {
    post(in);
    meet();
    std::size_t at = 0;
    for (std::size_t r = 0; r < bytes_per_rank.size(); ++r) {
      if (bytes_per_rank[r] > 0) std::memcpy(static_cast<unsigned char*>(out) + at, group_->posted[r], bytes_per_rank[r]);
      at += bytes_per_rank[r];
    }
    meet();
  }

  void reduce_scatter(void const* in, void* out, std::vector<std::size_t> const& counts, scalar_type type,
                      reduce_op op) override {
    post(in);
    meet();
    std::size_t offset = 0;
    for (int r = 0; r < rank_; ++r) offset += counts[static_cast<std::size_t>(r)];
    combine_bytes(out, group_->posted, offset, counts[static_cast<std::size_t>(rank_)], type, op);
    meet();
  }

  void barrier() override { meet(); }

  std::shared_ptr<transport> split(int color, int key) override {
    std::array<int, 2> const mine{color, key};
    post(mine.data());
    meet();
    // The members of this color, ordered by key then rank.
    std::vector<std::pair<std::pair<int, int>, std::size_t>> same;
    for (std::size_t r = 0; r < group_->posted.size(); ++r) {
      auto const* theirs = static_cast<int const*>(group_->posted[r]);
      if (theirs[0] == color) same.push_back({{theirs[1], static_cast<int>(r)}, r});
    }
    std::sort(same.begin(), same.end());
    std::size_t const leader = same.front().second;
    int new_rank = 0;
    for (std::size_t i = 0; i < same.size(); ++i) {
      if (same[i].second == static_cast<std::size_t>(rank_)) new_rank = static_cast<int>(i);
    }
    meet();  // every rank has read the colors before any slot is reused
    if (leader == static_cast<std::size_t>(rank_)) {
      std::vector<int> members;
      for (auto const& s : same) members.push_back(group_->members[s.second]);
      group_->children[leader] = std::make_shared<group>(group_->world, std::move(members));
    }
    meet();
    std::shared_ptr<group> child = group_->children[leader];
    meet();
    if (leader == static_cast<std::size_t>(rank_)) group_->children[leader].reset();
    return std::make_shared<thread_transport>(std::move(child), new_rank);
  }

  void abort(int, std::string_view why) noexcept override {
    world_state& w = *group_->world;
    std::lock_guard<std::mutex> const lock(w.mutex);
    if (!w.aborted) {
      w.aborted = true;
      w.why.assign(why);
    }
    w.changed.notify_all();
  }

 private:
  void post(void const* p) { group_->posted[static_cast<std::size_t>(rank_)] = p; }

  // Returns when every member has arrived; throws aborted_error when the
  // world was aborted, or when a member has returned from its function
  // (it will never arrive) — after aborting the world, so no one waits.
  void meet() {
    group& g = *group_;
    world_state& w = *g.world;
    std::unique_lock<std::mutex> lock(w.mutex);
    if (w.aborted) throw aborted_error("dist (threads): the group was aborted: " + w.why);
    std::uint64_t const generation = g.generation;
    if (++g.arrived == g.members.size()) {
      g.arrived = 0;
      ++g.generation;
      w.changed.notify_all();
      return;
    }
    int gone = -1;
    w.changed.wait(lock, [&] {
      if (g.generation != generation || w.aborted) return true;
      for (int m : g.members) {
        if (w.finished[static_cast<std::size_t>(m)] != 0) {
          gone = m;
          return true;
        }
      }
      return false;
    });
    if (g.generation != generation) return;
    if (!w.aborted) {
      w.aborted = true;
      w.why = "rank " + std::to_string(gone) + " returned while rank " +
              std::to_string(g.members[static_cast<std::size_t>(rank_)]) +
              " waited for it in a collective (every rank makes the same collectives)";
      w.changed.notify_all();
    }
    throw aborted_error("dist (threads): the group was aborted: " + w.why);
  }

  std::shared_ptr<group> group_;
  int rank_;
};

}  // namespace

void run_threads(int ranks, std::function<void(communicator)> const& f) {
  if (ranks < 1) throw value_error("dist::run_threads: the number of ranks must be >= 1, got " + std::to_string(ranks));
  auto world = std::make_shared<world_state>();
  world->finished.assign(static_cast<std::size_t>(ranks), 0);
  std::vector<int> members(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) members[static_cast<std::size_t>(r)] = r;
  auto const root = std::make_shared<group>(world, std::move(members));

  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(ranks));
  std::vector<char> own_failure(static_cast<std::size_t>(ranks), 0);
  auto const body = [&](int r) {
    auto const t = std::make_shared<thread_transport>(root, r);
    auto const fail = [&](std::string const& what) {
      errors[static_cast<std::size_t>(r)] = std::current_exception();
      own_failure[static_cast<std::size_t>(r)] = 1;
      t->abort(1, "rank " + std::to_string(r) + " of " + std::to_string(ranks) + " failed: " + what);
    };
    try {
      f(communicator(t));
      std::lock_guard<std::mutex> const lock(world->mutex);
      world->finished[static_cast<std::size_t>(r)] = 1;
      world->changed.notify_all();
    } catch (aborted_error const&) {
      errors[static_cast<std::size_t>(r)] = std::current_exception();
      std::lock_guard<std::mutex> const lock(world->mutex);
      world->finished[static_cast<std::size_t>(r)] = 1;
      world->changed.notify_all();
    } catch (std::exception const& e) {
      fail(e.what());
    } catch (...) {
      fail("an exception that is not a std::exception");
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) threads.emplace_back(body, r);
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < ranks; ++r) {
    if (own_failure[static_cast<std::size_t>(r)] != 0) std::rethrow_exception(errors[static_cast<std::size_t>(r)]);
  }
  for (std::exception_ptr const& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace dimtensor::dist
