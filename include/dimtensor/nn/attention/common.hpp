#pragma once
/// @file
/// @brief What the attention modules share, one header each: the dims and
/// tags they create (dims.hpp), their diagnoses and operand checks
/// (diagnostics.hpp), the store of their weights (weights_store.hpp) and
/// `nn::attention_base` (base.hpp).

#include <dimtensor/nn/attention/base.hpp>
#include <dimtensor/nn/attention/diagnostics.hpp>
#include <dimtensor/nn/attention/dims.hpp>
#include <dimtensor/nn/attention/weights_store.hpp>
