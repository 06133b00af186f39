#pragma once
// What the backend conformance tests (tests/unit/backends/conformance/*_test.cpp)
// share: the backends every case runs on, buffers in a backend's memory
// filled from and read back to the host through the backend's own copies,
// seeded test values, and comparisons that name the first element that
// differs.  The expected values are computed by plain loops in the tests,
// never by a backend.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/backends/cpu/assign.hpp>
#include <dimtensor/backends/cpu/cross_entropy.hpp>
#include <dimtensor/backends/cpu/gather.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/softmax.hpp>
#include <dimtensor/backends/cpu/strided_copy.hpp>
#include <dimtensor/backends/thrust.hpp>

// Every backend this compiler has: the CPU and Thrust's host systems.
#if defined(_OPENMP)
#define CONFORMANCE_TEST_BACKENDS dimtensor::cpu, dimtensor::thrust_cpp, dimtensor::thrust_omp
#else
#define CONFORMANCE_TEST_BACKENDS dimtensor::cpu, dimtensor::thrust_cpp
#endif

namespace conformance {

namespace dt = dimtensor;
using dt::index_t;

/// @brief @p n elements in backend B's memory: written from the host with
/// backend_copy_from_host and read back with backend_copy_to_host, so a test
/// reads B's results as a program on B would (on CUDA too).
template <class B, class T>
class buffer {
 public:
  /// A copy of @p host.
  explicit buffer(std::vector<T> const& host) : size_(static_cast<index_t>(host.size())), storage_(size_) {
    dt::backend_copy_from_host(B{}, storage_.data(), host.data(), size_);
  }
  /// The first element, in B's memory.
  T* data() noexcept { return storage_.data(); }
  /// The first element, in B's memory.
  T const* data() const noexcept { return storage_.data(); }
  /// The elements, copied to the host.
  std::vector<T> host() const {
    std::vector<T> out(static_cast<std::size_t>(size_));
    dt::backend_copy_to_host(B{}, out.data(), storage_.data(), size_);
    return out;
  }

 private:
  index_t size_;
  typename B::template storage<T> storage_;
};

/// Seeded values: each test case draws from its own engine, so a case's
/// inputs do not depend on which cases ran before it.
class values {
 public:
  explicit values(unsigned seed) : engine_(seed) {}

  /// @p count values uniform in [lo, hi] (integers for integer T).
  template <class T>
  std::vector<T> uniform(index_t count, double lo, double hi) {
    std::vector<T> v(static_cast<std::size_t>(count));
    if constexpr (std::is_floating_point_v<T>) {
      std::uniform_real_distribution<double> d(lo, hi);
      for (auto& x : v) x = static_cast<T>(d(engine_));
    } else {
      std::uniform_int_distribution<long long> d(static_cast<long long>(lo), static_cast<long long>(hi));
      for (auto& x : v) x = static_cast<T>(d(engine_));
    }
    return v;
  }

  /// @p count values from {-2, …, 2}, so that ties are common.
  template <class T>
  std::vector<T> tied(index_t count) {
    return uniform<T>(count, -2, 2);
  }

  /// Replaces about one element in @p every by NaN.
  template <class T>
  void sprinkle_nan(std::vector<T>& v, int every) {
    std::uniform_int_distribution<int> d(0, every - 1);
    for (auto& x : v) {
      if (d(engine_) == 0) x = std::numeric_limits<T>::quiet_NaN();
    }
  }

  /// @p count lengths (or indices) in [0, n], with 0 first and n last.
  template <class L>
  std::vector<L> lengths(index_t count, index_t n) {
    std::vector<L> v = uniform<L>(count, 0, static_cast<double>(n));
    if (count > 0) v.front() = L(0);
    if (count > 1) v.back() = static_cast<L>(n);
    return v;
  }

 private:
  std::mt19937 engine_;
};

/// Output buffers start as a value no kernel writes, so a missed element shows.
template <class T>
std::vector<T> poisoned(index_t count) {
  return std::vector<T>(static_cast<std::size_t>(count), static_cast<T>(-12345));
}

/// The element type's name in messages.
template <class T>
constexpr char const* type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else return "another type";
}

/// A [outer, n, inner] view of a row-major buffer around one dim.
struct shape {
  index_t outer, n, inner;
  /// The number of elements.
  index_t count() const { return outer * n * inner; }
  /// The number of (outer, inner) lines along the middle dim.
  index_t lines() const { return outer * inner; }
  /// The flat position of (o, j, i).
  std::size_t at(index_t o, index_t j, index_t i) const { return static_cast<std::size_t>((o * n + j) * inner + i); }
};

inline std::ostream& operator<<(std::ostream& os, shape s) {
  return os << "[" << s.outer << ", " << s.n << ", " << s.inner << "]";
}

/// @brief The shapes the kernels along one dim run on: the dim last
/// (inner 1) and strided (inner > 1), single elements, rows longer than the
/// CPU's 16 fold lanes (with and without a remainder), and two large enough
/// for the CPU to use threads (n * inner * outer above its parallel grain).
inline std::vector<shape> const& line_shapes() {
  static std::vector<shape> const shapes = {{3, 7, 1}, {2, 5, 4},  {1, 33, 1}, {5, 16, 1},   {4, 40, 3},
                                            {3, 1, 5}, {1, 1, 1},  {2, 3, 17}, {24, 45, 33}, {520, 70, 1}};
  return shapes;
}

/// Whether @p got and @p want are the same number (NaN equal to NaN).
template <class G, class W>
bool same_value(G got, W want) {
  if constexpr (std::is_floating_point_v<G> || std::is_floating_point_v<W>) {
    bool const nan_got = std::isnan(static_cast<double>(got));
    bool const nan_want = std::isnan(static_cast<double>(want));
    if (nan_got || nan_want) return nan_got && nan_want;
  }
  return static_cast<double>(got) == static_cast<double>(want) && got == static_cast<G>(want);
}

/// Whether @p got is within @p tol of @p want, relative to |want| above 1
/// (NaN matches NaN, an infinity only itself).
inline bool near_value(double got, double want, double tol) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol * std::max(1.0, std::abs(want));
}

/// "" when @p got equals @p want element for element, else the first difference.
template <class G, class W>
std::string first_difference(std::vector<G> const& got, std::vector<W> const& want) {
  std::ostringstream os;
  if (got.size() != want.size()) {
    os << got.size() << " elements, want " << want.size();
    return os.str();
  }
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (!same_value(got[k], want[k])) {
      os.precision(17);
      os << "element " << k << ": " << +got[k] << ", want " << +want[k];
      return os.str();
    }
  }
  return "";
}

/// "" when every element of @p got is within @p tol of @p want's (near_value), else the first that is not.
template <class G>
std::string first_difference(std::vector<G> const& got, std::vector<double> const& want, double tol) {
  std::ostringstream os;
  if (got.size() != want.size()) {
    os << got.size() << " elements, want " << want.size();
    return os.str();
  }
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (!near_value(static_cast<double>(got[k]), want[k], tol)) {
      os.precision(17);
      os << "element " << k << ": " << got[k] << ", want " << want[k] << " (tolerance " << tol << ")";
      return os.str();
    }
  }
  return "";
}

/// The tolerance of float math in T against a double reference: @p for_float
/// for float, 1e-10 for double.
template <class T>
constexpr double tolerance(double for_float) {
  return std::is_same_v<T, float> ? for_float : 1e-10;
}

/// @p v rounded to T, for inputs that the kernels and the reference must share.
template <class T>
std::vector<T> rounded(std::vector<double> const& v) {
  std::vector<T> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](double x) { return static_cast<T>(x); });
  return out;
}

}  // namespace conformance
