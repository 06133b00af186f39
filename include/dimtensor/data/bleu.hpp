#pragma once
/// @file
/// @brief `data::bleu(pred, label, k)`: d2l's BLEU of a predicted sequence
/// against its label, both space-separated tokens.

#include <string_view>

namespace dimtensor::data {

/// @brief d2l's `bleu(pred_seq, label_seq, k)`: exp(min(0, 1 - len_label /
/// len_pred)) · Π_{n=1..k} p_n^(1/2^n), p_n the clipped precision of the
/// prediction's n-grams.
///
/// The sequences are split on single spaces exactly as Python's
/// `str.split(' ')` (so "" is one empty token).  Where d2l divides by zero
/// (a prediction shorter than some n ≤ k has no n-grams) the precision is
/// taken as 0 and so is the score.  `value_error` when @p k < 1.
double bleu(std::string_view pred_seq, std::string_view label_seq, int k);

}  // namespace dimtensor::data
