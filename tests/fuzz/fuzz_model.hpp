#pragma once
/// @file
/// @brief The module fuzz_load_parameters loads into and fuzz_make_seeds
/// saves: two linear layers, one with a bias and one without, listed with
/// prefixes as a model with submodules lists them.

#include <string>

#include <dimtensor/config.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
#include <dimtensor/ops/random.hpp>

namespace dimtensor_fuzz {

DIMTENSOR_DIM(Features);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Classes);

/// `first.weight` [3, 2], `first.bias` [3], `second.weight` [2, 3]: a
/// reflected struct (nn/module.hpp).
struct two_layers : dimtensor::nn::module<two_layers> {
  // first: Features → Hidden, with a bias; second: Hidden → Classes, without.
  BOOST_HANA_DEFINE_STRUCT(two_layers, (dimtensor::nn::linear<Features, Hidden>, first),
                           (dimtensor::nn::linear<Hidden, Classes>, second));

  /// Both layers, initialized from @p gen.
  explicit two_layers(dimtensor::generator& gen)
      : first(Features(2), Hidden(3), true, gen), second(Hidden(3), Classes(2), false, gen) {}
};

}  // namespace dimtensor_fuzz
