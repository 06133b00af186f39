#pragma once
// Shared helpers of the CUDA tests (tests/cuda/*_test.cu): the backend under
// test, moving inputs to it, and comparing a result computed there with the
// same computation on the CPU backend.
//
// Compiled by nvcc, the backend under test is dimtensor::cuda. The same
// sources also compile as C++ with a host compiler (g++ -x c++), where it is
// the Thrust backend's C++ system: a check of the tests' own logic on a
// machine without nvcc or a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include <dimtensor/backends/thrust.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/to.hpp>

namespace cuda_test {

namespace dt = dimtensor;

#if defined(__CUDACC__)
/// The backend under test.
using device = dt::cuda;
#else
using device = dt::thrust_cpp;
#endif

/// The tolerance of every comparison with the CPU backend: |got - want| <= tol + tol · |want|.
inline constexpr double tolerance = 1e-5;

/// @p x (on the CPU backend) copied to the backend under test.
template <class X>
auto on_device(X const& x) {
  return dt::to<device>(x);
}

/// The same tensor type on the backend under test.
template <class Tensor>
using device_t = dt::tensor_with_dims<device, typename Tensor::value_type, typename Tensor::specs>;

/// @brief Checks that @p got (computed on the backend under test) equals
/// @p want (computed on the CPU backend from the same inputs): same dims
/// (at compile time), same extents, every element within @p tol (absolute
/// plus relative; integers and booleans exactly). Returns the largest
/// absolute difference, shown with -s.
template <class Got, class Want>
double check_same(std::string const& what, Got const& got, Want const& want, double tol = tolerance) {
  static_assert(std::is_same_v<typename Got::backend, device>, "check_same: the first operand is not on the device");
  static_assert(std::is_same_v<typename Want::backend, dt::cpu>, "check_same: the second operand is not on the CPU");
  static_assert(std::is_same_v<typename Got::specs, typename Want::specs>, "check_same: the dims differ");
  static_assert(std::is_same_v<typename Got::value_type, typename Want::value_type>,
                "check_same: the element types differ");
  using T = typename Want::value_type;
  dt::autograd::no_grad const no_recording;
  auto const g = dt::to<dt::cpu>(dt::eval(got)).contiguous();
  auto const w = dt::eval(want).contiguous();
  INFO(what);
  REQUIRE(g.extents() == w.extents());
  double worst = 0;
  dt::index_t bad = -1;
  for (dt::index_t i = 0; i < w.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      double const a = static_cast<double>(g.data()[i]);
      double const b = static_cast<double>(w.data()[i]);
      double const d = std::abs(a - b);
      if (std::isnan(a) != std::isnan(b) || (std::isfinite(b) && !(d <= tol + tol * std::abs(b))) ||
          (std::isinf(b) && a != b)) {
        if (bad < 0) bad = i;
      }
      if (d > worst) worst = d;
    } else {
      if (g.data()[i] != w.data()[i] && bad < 0) bad = i;
    }
  }
  std::string first_bad = "none";
  if (bad >= 0) {
    first_bad = "flat index " + std::to_string(bad) + ": device " + std::to_string(+g.data()[bad]) + ", cpu " +
                std::to_string(+w.data()[bad]);
  }
  INFO("max |device - cpu| = " << worst << "; first element out of tolerance: " << first_bad);
  CHECK(bad == -1);
  return worst;
}

}  // namespace cuda_test
