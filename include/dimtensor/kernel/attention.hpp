#pragma once
/// @file
/// @brief The fused attention problems as every backend's kernels read
/// them: sizes, operands (a base pointer, per-entry offsets and a row
/// stride) and each query row's valid length.  Dims-free, with no code:
/// the backends' kernels (the CPU's compiled for each instruction set the
/// runtime carries) and the operations that call them share them.

#include <algorithm>
#include <limits>

#include <dimtensor/config.hpp>

namespace dimtensor::kernel {

/// @brief The score a masked key gets before the softmax (after the
/// scale): the type's lowest value halved, as transformers' additive masks
/// use the lowest (halved, so that a sum with a score stays finite).  Its
/// weight is exactly 0 beside any other key's; a row whose every key is
/// masked gets uniform weights over them.
template <class T>
inline constexpr T attention_masked_score = -std::numeric_limits<T>::max() / 2;

/// @brief One operand of the fused attention kernels: entry b's row r,
/// feature f is `data[batch_offset[b] + r * row_stride + f]`.
template <class P>
struct attention_operand {
  /// The first element.
  P* data = nullptr;
  /// Each batch entry's offset from `data`.
  index_t const* batch_offset = nullptr;
  /// The distance between consecutive rows.
  index_t row_stride = 0;
  /// Row r of batch entry b.
  P* row(index_t b, index_t r) const noexcept { return data + batch_offset[b] + r * row_stride; }
};

/// @brief Each query row's valid length, in the one form every kernel
/// reads (masked softmax's too): row r, counted in the kernel's row order
/// (batch entries, then queries), has the length `data[r / repeat]`.
///
/// `repeat` divides the query rows of an entry or is a multiple of them:
/// 1 for a length per row, the entry's rows (or a multiple) for a length
/// per entry or per group of entries.  The lengths are the backend's
/// memory.  Null `data`: every key is valid.
struct row_lengths {
  /// The lengths, in [0, keys], or null.
  index_t const* data = nullptr;
  /// How many consecutive rows share one length (at least 1).
  index_t repeat = 1;
  /// The valid length of row @p r, or @p all when there are no lengths.
  index_t operator()(index_t r, index_t all) const noexcept { return data == nullptr ? all : data[r / repeat]; }
};

/// @brief The sizes, inputs and masking of a fused attention problem.
template <class T>
struct attention_problem {
  /// Batch entries.
  index_t batch = 0;
  /// Query rows per entry.
  index_t queries = 0;
  /// Key (and value) rows per entry.
  index_t kv = 0;
  /// Features of the queries and keys.
  index_t d = 0;
  /// Features of the values.
  index_t dv = 0;
  /// The queries, [batch, queries, d].
  attention_operand<T const> q;
  /// The keys, [batch, kv, d].
  attention_operand<T const> k;
  /// The values, [batch, kv, dv].
  attention_operand<T const> v;
  /// Each query row's valid length (row b * queries + i for row i of entry b).
  row_lengths lens;
  /// Causal: query row i reads the keys up to i + kv - queries (the last
  /// query the last key, as a cache of earlier keys needs), within its
  /// valid length.
  bool causal = false;
  /// Which keys each query row reads (true) where `keep.data` is not null:
  /// row i of entry b reads key j when `keep.row(b, i)[j]`; the others are
  /// masked.  A broadcast dim has stride 0 (row_stride 0: one row for all
  /// queries).
  attention_operand<bool const> keep;
  /// Added to the scores after the scale where `bias.data` is not null:
  /// `bias.row(b, i)[j]`; a value at or below attention_masked_score (and
  /// -inf) masks the key.
  attention_operand<T const> bias;
  /// The scores are divided by it (√d).
  T scale = T(1);

  /// The valid length of query row i of entry b (the causal limit within it).
  index_t length(index_t b, index_t i) const noexcept {
    index_t const l = lens(b * queries + i, kv);
    return causal ? std::clamp<index_t>(i + kv - queries + 1, 0, l) : l;
  }
  /// Whether some keys within the lengths are masked by `keep` or `bias`.
  bool masks_keys() const noexcept { return keep.data != nullptr || bias.data != nullptr; }
};

/// @brief The sizes, inputs and masking of additive attention's scores
/// (backends/cpu/attention.hpp gives the maths).
template <class T>
struct additive_problem {
  /// Batch entries.
  index_t batch = 0;
  /// Query rows per entry.
  index_t queries = 0;
  /// Key rows per entry.
  index_t kv = 0;
  /// Hidden features.
  index_t hidden = 0;
  /// The projected queries, [batch, queries, hidden].
  attention_operand<T const> q;
  /// The projected keys, [batch, kv, hidden].
  attention_operand<T const> k;
  /// `w_v`'s weight, [hidden].
  T const* w = nullptr;
  /// Each query row's valid length (row b * queries + i for row i of entry b).
  row_lengths lens;
  /// The valid length of query row i of entry b.
  index_t length(index_t b, index_t i) const noexcept { return lens(b * queries + i, kv); }
};

}  // namespace dimtensor::kernel
