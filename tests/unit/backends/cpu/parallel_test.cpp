// Tests of backends/cpu/parallel.hpp: parallel_for and the thread setting.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <dimtensor/backends/cpu/parallel.hpp>

namespace dt = dimtensor;
using dt::index_t;
using dt::backends::cpu::parallel_for;

namespace {

// Runs parallel_for and returns how often each index was visited and the chunks.
struct coverage {
  std::vector<std::atomic<int>> hits;
  std::vector<std::pair<index_t, index_t>> chunks;
  std::mutex mutex;
  explicit coverage(index_t n, index_t cost) : hits(static_cast<std::size_t>(n)) {
    parallel_for(n, cost, [&](index_t b, index_t e) {
      {
        std::lock_guard lock(mutex);
        chunks.emplace_back(b, e);
      }
      for (index_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
    });
  }
  bool exactly_once() const {
    for (auto const& h : hits)
      if (h.load() != 1) return false;
    return true;
  }
};

// Restores the default thread count when a test ends.
struct thread_guard {
  ~thread_guard() { dt::set_num_threads(0); }
};

}  // namespace

TEST_CASE("parallel: parallel_for covers [0, n) exactly once", "[backends][cpu][parallel]") {
  thread_guard guard;
  for (int threads : {1, 2, 3, 4}) {
    dt::set_num_threads(threads);
    for (index_t n : {index_t{1}, index_t{7}, index_t{32767}, index_t{32768}, index_t{100003}}) {
      coverage c(n, 1);
      INFO("threads " << threads << ", n " << n);
      REQUIRE(c.exactly_once());
      index_t total = 0;
      for (auto [b, e] : c.chunks) {
        REQUIRE(b < e);
        total += e - b;
      }
      REQUIRE(total == n);
#if defined(_OPENMP)
      // Large work is split over the threads; small work runs in one call.
      if (n >= dt::backends::cpu::parallel_grain) {
        CHECK(c.chunks.size() == static_cast<std::size_t>(threads));
      } else {
        CHECK(c.chunks.size() == 1);
      }
#else
      CHECK(c.chunks.size() == 1);
#endif
    }
  }
}

TEST_CASE("parallel: the cost per item counts towards the grain", "[backends][cpu][parallel]") {
  thread_guard guard;
  dt::set_num_threads(4);
  coverage rows(100, 1000);  // 100 rows of 1000 elements: worth threads
  REQUIRE(rows.exactly_once());
#if defined(_OPENMP)
  CHECK(rows.chunks.size() == 4);
#endif
  coverage few(100, 1);
  REQUIRE(few.exactly_once());
  CHECK(few.chunks.size() == 1);
}

TEST_CASE("parallel: parallel_for_dynamic takes every item once, with one state per thread",
          "[backends][cpu][parallel]") {
  thread_guard guard;
  for (int threads : {1, 2, 3}) {
    dt::set_num_threads(threads);
    for (index_t n : {index_t{1}, index_t{7}, index_t{1000}}) {
      for (index_t cost : {index_t{1}, index_t{100000}}) {
        INFO("threads " << threads << ", n " << n << ", cost " << cost);
        std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
        std::atomic<int> states{0};
#if defined(_OPENMP)
        std::mutex mutex;
        std::set<int> owners;  // the threads that took items
#endif
        dt::backends::cpu::parallel_for_dynamic(
            n, cost,
            [&] {
              states.fetch_add(1);
              return std::vector<int>(4, 0);  // a scratch buffer
            },
            [&](std::vector<int>& state, index_t i) {
              state[0] += 1;
              hits[static_cast<std::size_t>(i)].fetch_add(1);
#if defined(_OPENMP)
              std::lock_guard lock(mutex);
              owners.insert(omp_get_thread_num());
#endif
            });
        for (auto const& h : hits) REQUIRE(h.load() == 1);
        CHECK(states.load() >= 1);
        CHECK(states.load() <= threads);
#if defined(_OPENMP)
        // Only work large enough for threads gets them; each thread that took an item made its own state.
        if (n * cost < dt::backends::cpu::parallel_grain || n == 1) CHECK(states.load() == 1);
        CHECK(owners.size() <= static_cast<std::size_t>(states.load()));
#endif
      }
    }
  }
  int calls = 0;
  dt::backends::cpu::parallel_for_dynamic(
      0, 1'000'000, [] { return 0; }, [&](int&, index_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("parallel: n = 0 calls nothing", "[backends][cpu][parallel]") {
  int calls = 0;
  parallel_for(0, 1'000'000, [&](index_t, index_t) { ++calls; });
  parallel_for(-5, 1, [&](index_t, index_t) { ++calls; });
  CHECK(calls == 0);
}

#if defined(_OPENMP)
TEST_CASE("parallel: inside a parallel region the loop runs on the calling thread", "[backends][cpu][parallel]") {
  thread_guard guard;
  dt::set_num_threads(2);
  std::atomic<int> chunks{0};
  std::atomic<int> bad{0};
#pragma omp parallel num_threads(2)
  {
    int const me = omp_get_thread_num();
    parallel_for(100000, 1, [&](index_t b, index_t e) {
      chunks.fetch_add(1);
      if (omp_get_thread_num() != me || b != 0 || e != 100000) bad.fetch_add(1);
    });
  }
  CHECK(bad.load() == 0);
  CHECK(chunks.load() == omp_get_max_threads());
}
#endif

TEST_CASE("parallel: set_num_threads / get_num_threads", "[backends][cpu][parallel]") {
  thread_guard guard;
  int const initial = dt::get_num_threads();
  CHECK(initial >= 1);
  dt::set_num_threads(3);
#if defined(_OPENMP)
  CHECK(dt::get_num_threads() == 3);
  dt::set_num_threads(1);
  CHECK(dt::get_num_threads() == 1);
  dt::set_num_threads(0);  // the default again
  CHECK(dt::get_num_threads() == initial);
#else
  CHECK(dt::get_num_threads() == 1);
#endif
}

TEST_CASE("parallel: set_num_threads rejects counts out of range and keeps the setting", "[backends][cpu][parallel]") {
  thread_guard guard;
  dt::set_num_threads(2);
  int const before = dt::get_num_threads();
  // 100000 threads used to reach OpenMP, which aborted at the next parallel loop.
  for (int n : {100000, dt::max_num_threads + 1, -2}) {
    INFO("n " << n);
    REQUIRE_THROWS_AS(dt::set_num_threads(n), dt::value_error);
    REQUIRE_THROWS_WITH(dt::set_num_threads(n), Catch::StartsWith("set_num_threads: " + std::to_string(n) +
                                                                  " threads requested; the CPU backend takes 1 to "));
    CHECK(dt::get_num_threads() == before);
  }
  // A loop large enough for threads still runs, on the kept setting.
  coverage c(100003, 1);
  CHECK(c.exactly_once());
  dt::set_num_threads(dt::max_num_threads);
  CHECK(dt::backends::cpu::thread_setting() == dt::max_num_threads);
}
