#pragma once
/// @file
/// @brief The module fuzz_load_parameters loads into and fuzz_make_seeds
/// saves: two linear layers, one with a bias and one without, listed with
/// prefixes as a model with submodules lists them.

#include <string>

#include <dimtensor/config.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/ops/random.hpp>

namespace dimtensor_fuzz {

DIMTENSOR_DIM(Features);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Classes);

/// `first.weight` [3, 2], `first.bias` [3], `second.weight` [2, 3].
struct two_layers {
  /// Features → Hidden, with a bias.
  dimtensor::nn::linear<Features, Hidden> first;
  /// Hidden → Classes, without a bias.
  dimtensor::nn::linear<Hidden, Classes> second;

  /// Both layers, initialized from @p gen.
  explicit two_layers(dimtensor::generator& gen)
      : first(Features(2), Hidden(3), true, gen), second(Hidden(3), Classes(2), false, gen) {}

  /// Calls `f(key, parameter)` for every parameter, keys prefixed by @p prefix.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    first.for_each_parameter(f, prefix + "first.");
    second.for_each_parameter(f, prefix + "second.");
  }

  /// As above, read-only.
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    first.for_each_parameter(f, prefix + "first.");
    second.for_each_parameter(f, prefix + "second.");
  }
};

}  // namespace dimtensor_fuzz
