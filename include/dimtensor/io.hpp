#pragma once
/// @file
/// @brief Tensors in and out of files and text: `.npy` (io/npy.hpp),
/// safetensors (io/safetensors.hpp), a module's parameters by their
/// `state_dict` keys (io/state_dict.hpp: `nn::load_parameters`,
/// `nn::save_parameters`), checkpoints under other libraries' keys
/// (io/checkpoint.hpp: `nn::load_checkpoint`) and printing as PyTorch does
/// (io/print.hpp).

#include <dimtensor/io/checkpoint.hpp>
#include <dimtensor/io/config.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/io/print.hpp>
#include <dimtensor/io/safetensors.hpp>
#include <dimtensor/io/state_dict.hpp>
