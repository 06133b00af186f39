#pragma once
// Shared helpers of the parity tests (tests/parity/*_test.cpp): where the
// PyTorch goldens lie, loading one as a tensor, comparing a result with its
// golden, and loading a module's parameters both ways the goldens store them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/io/npy.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <dimtensor/ops/compare.hpp>
#include <dimtensor/ops/to.hpp>
#include <dimtensor/tensor/tensor.hpp>

// tests/CMakeLists.txt always points this at tests/parity/data; a build
// without it has no way to find the goldens, so it stops here.
#ifndef DIMTENSOR_PARITY_DATA_DIR
#error "DIMTENSOR_PARITY_DATA_DIR is not defined: build the parity tests with tests/CMakeLists.txt"
#endif

namespace parity_support {

/// The largest difference from a golden that a parity test accepts.
inline constexpr double tolerance = 1e-5;

/// The golden folder data/<root>/<name> (root: "attention", "training", ...).
inline std::filesystem::path data_dir(std::string const& root, std::string const& name) {
  return std::filesystem::path(DIMTENSOR_PARITY_DATA_DIR) / root / name;
}

/// The golden <role>.npy of the folder @p dir, as a @p Tensor.
template <class Tensor>
Tensor load(std::filesystem::path const& dir, std::string const& role) {
  return dimtensor::load_npy<Tensor>(dir / (role + ".npy"));
}

/// max |got - want| <= tol, the difference shown (run with -s to see it when it passes).
template <class A, class B>
double check_close(std::string const& what, A const& got, B const& want, double tol = tolerance) {
  double const diff = dimtensor::max_abs_diff(got, want);
  INFO(what << ": max |dimtensor - PyTorch| = " << diff);
  CHECK(diff <= tol);
  return diff;
}

/// Loads @p module's parameters from the case folder or its safetensors
/// file (one SECTION each), then checks that every parameter equals its
/// .npy bit for bit, whichever way it came.
template <class Module>
void load_both_ways(Module& module, std::filesystem::path const& dir) {
  SECTION("parameters from the folder of <key>.npy") { dimtensor::nn::load_parameters(module, dir); }
  SECTION("parameters from weights.safetensors") {
    dimtensor::nn::load_parameters(module, dir / "weights.safetensors");
  }
  module.for_each_parameter([&](std::string const& key, auto const& parameter) {
    using tensor_type = std::remove_cvref_t<decltype(parameter)>;
    INFO("parameter " << key);
    CHECK(dimtensor::equal(parameter, load<tensor_type>(dir, key)));
  });
}

/// A file's bytes.
inline std::string read_text(std::filesystem::path const& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Every parameter's values (or its gradient's, with @p grads) by key, on the host.
template <class Module>
std::map<std::string, std::vector<double>> parameter_values(Module& m, bool grads) {
  std::map<std::string, std::vector<double>> out;
  m.for_each_parameter([&](std::string const& key, auto const& parameter) {
    auto const host = dimtensor::to<dimtensor::cpu>(dimtensor::eval(grads ? parameter.grad() : parameter));
    out[key].assign(host.data(), host.data() + host.size());
  });
  return out;
}

/// @brief Every parameter's gradient in @p net against the same parameter
/// of @p golden (a module that holds the reference's gradients as its
/// values, loaded by key): within @p rel of the gradient's largest element
/// (or of 1, for a gradient that is zero in exact arithmetic, such as the
/// key projections' biases, where both sides hold rounding); @p count
/// parameters.
template <class Module>
void check_gradients(Module& net, Module& golden, std::size_t count, double rel) {
  auto const got = parameter_values(net, true);
  auto const want = parameter_values(golden, false);
  REQUIRE(got.size() == count);
  REQUIRE(want.size() == count);
  for (auto const& [key, g] : got) {
    auto const& w = want.at(key);
    REQUIRE(g.size() == w.size());
    double diff = 0;
    double norm = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
      diff = std::max(diff, std::abs(g[i] - w[i]));
      norm = std::max(norm, std::abs(w[i]));
    }
    INFO("gradient of " << key << ": max |dimtensor - reference| = " << diff << ", max |reference| = " << norm);
    CHECK(diff <= rel * std::max(norm, 1.0));
  }
}

}  // namespace parity_support
