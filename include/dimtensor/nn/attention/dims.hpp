#pragma once
/// @file
/// @brief The dims the attention modules create (`Heads`, `HeadFeat`,
/// `BatchHeads`, `Score`), their calls' tags (the names their errors give)
/// and the operands' tags (`operand::queries`, …) their diagnoses name.

#include <dimtensor/config.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/kernel/call.hpp>

namespace dimtensor {

namespace nn {

/// The heads of multi-head attention, when they are a dim of their own.
DIMTENSOR_DIM(Heads);
/// The features of one head: num_hiddens / num_heads of them.
DIMTENSOR_DIM(HeadFeat);
/// Batch and heads merged into one dim (d2l's `batch_size * num_heads`).
DIMTENSOR_DIM(BatchHeads);
/// The one output of additive attention's `w_v`: [.., Hidden] → [.., Score=1].
DIMTENSOR_DIM(Score);

}  // namespace nn

namespace call {
/// `nn::dot_product_attention::operator()`.
struct dot_product_attention : named<"dot_product_attention"> {};
/// `nn::additive_attention::operator()`.
struct additive_attention : named<"additive_attention"> {};
/// `nn::multi_head_attention`.
struct multi_head_attention : named<"multi_head_attention"> {};
/// `nn::transpose_qkv`.
struct transpose_qkv : named<"transpose_qkv"> {};
/// `nn::transpose_output`.
struct transpose_output : named<"transpose_output"> {};
/// `nn::nadaraya_watson`.
struct nadaraya_watson : named<"nadaraya_watson"> {};
}  // namespace call

/// Tags naming the operand of an attention call in diagnostics.
namespace operand {
/// The queries.
struct queries {};
/// The keys.
struct keys {};
/// The values.
struct values {};
}  // namespace operand

}  // namespace dimtensor
