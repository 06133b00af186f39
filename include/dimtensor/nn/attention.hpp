#pragma once
/// @file
/// @brief The attention modules of the d2l chapter: dot-product, additive
/// and multi-head attention, and Nadaraya–Watson pooling.

#include <dimtensor/nn/attention/additive_attention.hpp>
#include <dimtensor/nn/attention/common.hpp>
#include <dimtensor/nn/attention/dot_product_attention.hpp>
#include <dimtensor/nn/attention/multi_head_attention.hpp>
#include <dimtensor/nn/attention/nadaraya_watson.hpp>
