#pragma once
/// @file
/// @brief A module's parameters by their PyTorch `state_dict` keys: both
/// halves in one include, nn/module.hpp (the `Module` concept, names, count,
/// `zero_grad`) and io/state_dict.hpp (`load_parameters`, `save_parameters`,
/// which bring the file formats).  An umbrella: the library's own headers
/// include the half they need.

#include <dimtensor/io/state_dict.hpp>
#include <dimtensor/nn/module.hpp>
