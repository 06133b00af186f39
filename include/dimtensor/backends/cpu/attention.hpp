#pragma once
/// @file
/// @brief The CPU backend's fused scaled dot-product attention with d2l's
/// masking, forward and backward, without the [Queries, KV] matrix.
///
/// The problem is a batch of independent attentions.  For batch entry b,
/// query row i and key row j:
///
///     s_ij = (q_i · k_j) / scale          (scale: √d, as d2l divides)
///     p_ij = softmax_j(s_ij) over j < len(b, i)   (0 for j ≥ len)
///     o_i  = Σ_j p_ij v_j
///
/// and a row of valid length 0 gets d2l's result: all its scores were
/// replaced by -1e6, so its weights are uniform over every key (o_i is the
/// mean of the values).  The numbers are those of the unfused path (the
/// contraction, the division, masked_softmax, the contraction), up to the
/// order of the sums inside the matrix products.
///
/// Tiling: the queries of a batch entry are taken `attention_block` rows at
/// a time.  A block's scores over the keys it attends to (up to its longest
/// valid length: masked keys are neither multiplied nor exponentiated) are
/// one BLAS product into a per-thread buffer of block × KV elements, turned
/// into softmax numerators in place (a sweep for the maximum, one for the
/// vectorized exp and the sum), multiplied by the values into the output
/// rows, which are then divided by the sums.  With 2-D lengths an entry's
/// rows are taken longest first (copied into the block and back), so that
/// a block's rows have lengths alike and its products stop near each row's
/// own length.  Extra memory is the
/// per-thread buffer and two numbers per query row (the row's maximum and
/// 1 / sum, kept for the backward pass): linear in the lengths.  Threads
/// share out the (batch entry, query block) pairs; the BLAS runs on one
/// thread inside each (backends/cpu/gemm.hpp).
///
/// The backward pass recomputes each block's weights from the kept row
/// statistics and forms the gradients block by block:
///
///     dP = dO · Vᵀ,  dS = P ∘ (dP − rowsum(P ∘ dP)) / scale
///     dQ = dS · K,   dK += dSᵀ · Q,   dV += Pᵀ · dO
///
/// with the masked scores getting no gradient (they were overwritten), as
/// masked_softmax's rule gives them.  Threads share out the batch entries
/// (each owns its keys' and values' gradients).
///
/// Operands are strided per batch entry (`batch_offset[b]`, a row stride,
/// features contiguous), so the named multi-head form's [Batch, Queries,
/// Heads, HeadFeat] views are read and written in place.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dimtensor::backends::cpu {

/// The query rows a fused attention kernel takes at a time.
inline constexpr index_t attention_block = 64;

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
  /// Row (b, i)'s valid length at `lens[b * queries + i]` (in [0, kv]), or
  /// null: every key is valid.
  index_t const* lens = nullptr;
  /// The scores are divided by it (√d).
  T scale = T(1);

  /// The valid length of query row i of entry b.
  index_t length(index_t b, index_t i) const noexcept { return lens == nullptr ? kv : lens[b * queries + i]; }
};

namespace detail {

/// C (m x n, leading dim ldc) = A·B + beta·C, A m x k (or its transpose),
/// B k x n (or its transpose), row-major: CBLAS when available, else loops.
template <class T>
void attention_gemm(bool ta, bool tb, index_t m, index_t n, index_t k, T const* a, index_t lda, T const* b, index_t ldb,
                    T beta, T* c, index_t ldc) {
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    blas_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta);
    return;
  }
#endif
  for (index_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (beta == T(0)) {
      std::fill(ci, ci + n, T(0));
    } else {
      for (index_t j = 0; j < n; ++j) ci[j] *= beta;
    }
    for (index_t p = 0; p < k; ++p) {
      T const aip = ta ? a[p * lda + i] : a[i * lda + p];
      if (tb) {
        for (index_t j = 0; j < n; ++j) ci[j] += aip * b[j * ldb + p];
      } else {
        T const* bp = b + p * ldb;
        DIMTENSOR_SIMD
        for (index_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
      }
    }
  }
}

/// Makes sure the BLAS runs on one thread inside the kernels' own threads.
inline void attention_single_threaded_blas() {
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  single_threaded_blas();
#endif
}

/// exp for the kernels: the branch-free float one, std::exp otherwise.
template <class T>
inline T attention_exp(T x) {
  return math::exp(x);
}

/// Turns `rows` rows of raw scores (row r at `s + r * ld`, its first
/// `len[r]` entries valid, `width` in all) into softmax numerators in place:
/// exp(x / scale − m) with m the row's largest x / scale, 0 after the valid
/// entries; each row's m and 1 / (sum of its numerators) go to @p row_max
/// and @p row_inv (the output rows are scaled by the latter after the
/// product with the values, one multiplication per output element instead
/// of one per weight).  A row of length 0 becomes all 0 (its uniform
/// weights are handled apart).
template <class T>
void attention_softmax_rows(T* s, index_t ld, index_t rows, index_t width, index_t const* len, T scale, T* row_max,
                            T* row_inv) {
  constexpr index_t lanes = 16;
  for (index_t r = 0; r < rows; ++r) {
    T* x = s + r * ld;
    index_t const l = len[r];
    if (l == 0) {
      std::fill(x, x + width, T(0));
      row_max[r] = T(0);
      row_inv[r] = T(0);
      continue;
    }
    // Rounding is monotonic: the largest x / scale is the largest x, divided.
    T const m = lane_max<T>(l, x[0], [x](index_t j) { return x[j]; }) / scale;
    T part[lanes] = {};
    index_t j = 0;
    for (; j + lanes <= l; j += lanes) {
      for (index_t k = 0; k < lanes; ++k) {
        T const e = attention_exp(x[j + k] / scale - m);
        x[j + k] = e;
        part[k] += e;
      }
    }
    T sum = T(0);
    for (; j < l; ++j) {
      T const e = attention_exp(x[j] / scale - m);
      x[j] = e;
      sum += e;
    }
    for (T p : part) sum += p;
    std::fill(x + l, x + width, T(0));
    row_max[r] = m;
    row_inv[r] = T(1) / sum;
  }
}

/// The weights of `rows` rows again, from raw scores and the kept row
/// statistics (the forward pass's numbers).
template <class T>
void attention_weights_again(T* s, index_t ld, index_t rows, index_t width, index_t const* len, T scale,
                             T const* row_max, T const* row_inv) {
  constexpr bool vector_exp = std::is_same_v<T, float>;
  for (index_t r = 0; r < rows; ++r) {
    T* x = s + r * ld;
    index_t const l = len[r];
    if (l == 0) {
      std::fill(x, x + width, T(0));
      continue;
    }
    T const m = row_max[r];
    T const inv = row_inv[r];
    if constexpr (vector_exp) {
      DIMTENSOR_SIMD
      for (index_t j = 0; j < l; ++j) x[j] = attention_exp(x[j] / scale - m) * inv;
    } else {
      for (index_t j = 0; j < l; ++j) x[j] = attention_exp(x[j] / scale - m) * inv;
    }
    std::fill(x + l, x + width, T(0));
  }
}

}  // namespace detail

namespace detail {

/// @brief The query rows of each batch entry in the order the kernels take
/// them, [batch * queries]: longest valid length first, when the lengths
/// differ within an entry (2-D lengths), so that a block's rows have
/// lengths alike and its products stop near each row's own length; empty
/// when every entry's rows share one length (they are taken in place).
template <class T>
std::vector<index_t> attention_row_order(attention_problem<T> const& p) {
  if (p.lens == nullptr) return {};
  bool varies = false;
  for (index_t b = 0; b < p.batch && !varies; ++b) {
    for (index_t i = 1; i < p.queries && !varies; ++i) varies = p.lens[b * p.queries + i] != p.lens[b * p.queries];
  }
  if (!varies) return {};
  std::vector<index_t> order(static_cast<std::size_t>(p.batch * p.queries));
  for (index_t b = 0; b < p.batch; ++b) {
    index_t* first = order.data() + b * p.queries;
    for (index_t i = 0; i < p.queries; ++i) first[i] = i;
    index_t const* len = p.lens + b * p.queries;
    std::stable_sort(first, first + p.queries, [len](index_t x, index_t y) { return len[x] > len[y]; });
  }
  return order;
}

/// The rows @p idx (`rows` of them, entry b) of @p x as a matrix: in place
/// when @p direct (consecutive rows from idx[0]), else copied into @p buf.
template <class P, class T>
std::pair<T const*, index_t> attention_gather(attention_operand<P> const& x, index_t b, index_t const* idx,
                                              index_t rows, index_t width, bool direct, T* buf) {
  if (direct) return {x.row(b, idx[0]), x.row_stride};
  for (index_t r = 0; r < rows; ++r) std::copy(x.row(b, idx[r]), x.row(b, idx[r]) + width, buf + r * width);
  return {buf, width};
}

}  // namespace detail

/// @brief The fused forward pass: writes the output rows (o, [batch,
/// queries, dv]) and each query row's softmax statistics (@p row_max and
/// @p row_inv, [batch * queries] each, for the backward pass).
template <class T>
void attention_forward(attention_problem<T> const& p, attention_operand<T> const& o, T* row_max, T* row_inv) {
  if (p.batch == 0 || p.queries == 0 || p.dv == 0) return;
  index_t const blocks = (p.queries + attention_block - 1) / attention_block;
  detail::attention_single_threaded_blas();
  std::vector<index_t> const order = detail::attention_row_order(p);
  index_t const cost = attention_block * std::max<index_t>(p.kv, 1) * (p.d + p.dv);
  parallel_for(p.batch * blocks, cost, [&](index_t begin, index_t end) {
    std::vector<T> scores(static_cast<std::size_t>(attention_block * std::max<index_t>(p.kv, 1)));
    std::vector<T> qbuf, obuf;
    if (!order.empty()) {
      qbuf.resize(static_cast<std::size_t>(attention_block * p.d));
      obuf.resize(static_cast<std::size_t>(attention_block * p.dv));
    }
    std::vector<T> mean;  // the mean of an entry's values, for rows of valid length 0
    index_t len[attention_block], idx[attention_block];
    T m[attention_block], inv[attention_block];
    for (index_t t = begin; t < end; ++t) {
      index_t const b = t / blocks;
      index_t const i0 = (t % blocks) * attention_block;
      index_t const rows = std::min(attention_block, p.queries - i0);
      bool const direct = order.empty();
      index_t width = 0;
      bool any_empty = false;
      for (index_t r = 0; r < rows; ++r) {
        idx[r] = direct ? i0 + r : order[static_cast<std::size_t>(b * p.queries + i0 + r)];
        len[r] = p.length(b, idx[r]);
        width = std::max(width, len[r]);
        any_empty = any_empty || len[r] == 0;
      }
      T* out = direct ? o.row(b, i0) : obuf.data();
      index_t const ldo = direct ? o.row_stride : p.dv;
      if (width == 0) {
        for (index_t r = 0; r < rows; ++r) std::fill(out + r * ldo, out + r * ldo + p.dv, T(0));
      } else {
        auto const [qa, lda] = detail::attention_gather(p.q, b, idx, rows, p.d, direct, qbuf.data());
        detail::attention_gemm<T>(false, true, rows, width, p.d, qa, lda, p.k.row(b, 0), p.k.row_stride, T(0),
                                  scores.data(), width);
        detail::attention_softmax_rows<T>(scores.data(), width, rows, width, len, p.scale, m, inv);
        detail::attention_gemm<T>(false, false, rows, p.dv, width, scores.data(), width, p.v.row(b, 0), p.v.row_stride,
                                  T(0), out, ldo);
        for (index_t r = 0; r < rows; ++r) {
          T* y = out + r * ldo;
          T const c = inv[r];
          DIMTENSOR_SIMD
          for (index_t f = 0; f < p.dv; ++f) y[f] *= c;
          row_max[b * p.queries + idx[r]] = m[r];
          row_inv[b * p.queries + idx[r]] = inv[r];
        }
      }
      if (any_empty && p.kv > 0) {
        // d2l: every score -1e6, so uniform weights over all the keys.
        mean.assign(static_cast<std::size_t>(p.dv), T(0));
        for (index_t j = 0; j < p.kv; ++j) {
          T const* vj = p.v.row(b, j);
          for (index_t f = 0; f < p.dv; ++f) mean[f] += vj[f] / static_cast<T>(p.kv);
        }
        for (index_t r = 0; r < rows; ++r) {
          if (len[r] == 0) std::copy(mean.begin(), mean.end(), out + r * ldo);
        }
      }
      if (!direct) {
        for (index_t r = 0; r < rows; ++r) std::copy(out + r * ldo, out + r * ldo + p.dv, o.row(b, idx[r]));
      }
    }
  });
}

/// @brief The fused backward pass: from the output's gradient @p g ([batch,
/// queries, dv]) and the forward pass's row statistics, writes the queries'
/// gradient @p dq and adds into the keys' and values' (@p dk, @p dv, which
/// the caller zeroes or holds earlier gradients in).
template <class T>
void attention_backward(attention_problem<T> const& p, T const* row_max, T const* row_inv,
                        attention_operand<T const> const& g, attention_operand<T> const& dq,
                        attention_operand<T> const& dk, attention_operand<T> const& dv) {
  if (p.batch == 0 || p.queries == 0) return;
  index_t const blocks = (p.queries + attention_block - 1) / attention_block;
  detail::attention_single_threaded_blas();
  std::vector<index_t> const order = detail::attention_row_order(p);
  index_t const cost = p.queries * std::max<index_t>(p.kv, 1) * (2 * p.d + 2 * p.dv);
  parallel_for(p.batch, cost, [&](index_t begin, index_t end) {
    std::vector<T> weights(static_cast<std::size_t>(attention_block * std::max<index_t>(p.kv, 1)));
    std::vector<T> dweights(weights.size());
    std::vector<T> qbuf, gbuf, dqbuf;
    if (!order.empty()) {
      qbuf.resize(static_cast<std::size_t>(attention_block * p.d));
      gbuf.resize(static_cast<std::size_t>(attention_block * p.dv));
      dqbuf.resize(static_cast<std::size_t>(attention_block * p.d));
    }
    index_t len[attention_block], idx[attention_block];
    T m[attention_block], inv[attention_block];
    bool const direct = order.empty();
    for (index_t b = begin; b < end; ++b) {
      for (index_t blk = 0; blk < blocks; ++blk) {
        index_t const i0 = blk * attention_block;
        index_t const rows = std::min(attention_block, p.queries - i0);
        index_t width = 0;
        for (index_t r = 0; r < rows; ++r) {
          idx[r] = direct ? i0 + r : order[static_cast<std::size_t>(b * p.queries + i0 + r)];
          len[r] = p.length(b, idx[r]);
          width = std::max(width, len[r]);
          m[r] = row_max[b * p.queries + idx[r]];
          inv[r] = row_inv[b * p.queries + idx[r]];
        }
        T* dq_rows = direct ? dq.row(b, i0) : dqbuf.data();
        index_t const lddq = direct ? dq.row_stride : p.d;
        auto const [ga, ldg] = detail::attention_gather(g, b, idx, rows, p.dv, direct, gbuf.data());
        if (width == 0) {
          for (index_t r = 0; r < rows; ++r) std::fill(dq_rows + r * lddq, dq_rows + r * lddq + p.d, T(0));
        } else {
          T* const pw = weights.data();
          T* const dpw = dweights.data();
          auto const [qa, lda] = detail::attention_gather(p.q, b, idx, rows, p.d, direct, qbuf.data());
          detail::attention_gemm<T>(false, true, rows, width, p.d, qa, lda, p.k.row(b, 0), p.k.row_stride, T(0), pw,
                                    width);
          detail::attention_weights_again<T>(pw, width, rows, width, len, p.scale, m, inv);
          detail::attention_gemm<T>(false, true, rows, width, p.dv, ga, ldg, p.v.row(b, 0), p.v.row_stride, T(0), dpw,
                                    width);
          for (index_t r = 0; r < rows; ++r) {
            T const* pr = pw + r * width;
            T* dr = dpw + r * width;
            index_t const l = len[r];
            T const delta = lane_fold<T>(
                l, T(0), [pr, dr](index_t j) { return pr[j] * dr[j]; }, [](T a, T c) { return a + c; });
            DIMTENSOR_SIMD
            for (index_t j = 0; j < l; ++j) dr[j] = pr[j] * (dr[j] - delta) / p.scale;
            std::fill(dr + l, dr + width, T(0));
          }
          detail::attention_gemm<T>(false, false, rows, p.d, width, dpw, width, p.k.row(b, 0), p.k.row_stride, T(0),
                                    dq_rows, lddq);
          detail::attention_gemm<T>(true, false, width, p.d, rows, dpw, width, qa, lda, T(1), dk.row(b, 0),
                                    dk.row_stride);
          detail::attention_gemm<T>(true, false, width, p.dv, rows, pw, width, ga, ldg, T(1), dv.row(b, 0),
                                    dv.row_stride);
        }
        // Rows of valid length 0: uniform weights, constant in the scores.
        for (index_t r = 0; r < rows; ++r) {
          if (len[r] != 0) continue;
          T const* gr = ga + r * ldg;
          for (index_t j = 0; j < p.kv; ++j) {
            T* dvj = dv.row(b, j);
            for (index_t f = 0; f < p.dv; ++f) dvj[f] += gr[f] / static_cast<T>(p.kv);
          }
        }
        if (!direct) {
          for (index_t r = 0; r < rows; ++r) {
            std::copy(dq_rows + r * lddq, dq_rows + r * lddq + p.d, dq.row(b, idx[r]));
          }
        }
      }
    }
  });
}

/// @brief Additive attention's scores without the [batch, queries, kv,
/// hidden] features: for batch entry b, query row i and key row j,
///
///     s_ij = Σ_h w_h · tanh(q_ih + k_jh)
///
/// (q and k the projected queries and keys, w the weight of `w_v`).  Keys
/// past a row's valid length are not computed (their scores are 0: masking
/// replaces them).  The keys of an entry are transposed once into a
/// per-thread [hidden, kv] buffer, so the innermost loop runs along the
/// keys: one vectorized tanh per (i, h, j) and nothing stored but the
/// scores.
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
  /// Row (b, i)'s valid length at `lens[b * queries + i]`, or null: every key.
  index_t const* lens = nullptr;
  /// The valid length of query row i of entry b.
  index_t length(index_t b, index_t i) const noexcept { return lens == nullptr ? kv : lens[b * queries + i]; }
};

namespace detail {

/// The queries a thread of the additive kernels takes at a time.
inline constexpr index_t additive_rows = 16;

/// Entry b's keys, transposed into @p kt ([hidden, kv]).
template <class T>
void additive_keys_transposed(additive_problem<T> const& p, index_t b, T* kt) {
  for (index_t j = 0; j < p.kv; ++j) {
    T const* kj = p.k.row(b, j);
    for (index_t h = 0; h < p.hidden; ++h) kt[h * p.kv + j] = kj[h];
  }
}

/// Σ x[0 … n-1] in independent lanes (vectorizes).
template <class T>
T lane_sum(T const* x, index_t n) {
  constexpr index_t lanes = 16;
  T part[lanes] = {};
  index_t j = 0;
  for (; j + lanes <= n; j += lanes) {
    for (index_t l = 0; l < lanes; ++l) part[l] += x[j + l];
  }
  T sum = T(0);
  for (; j < n; ++j) sum += x[j];
  for (T v : part) sum += v;
  return sum;
}

}  // namespace detail

/// @brief Additive attention's scores, written dense into @p scores
/// ([batch, queries, kv], row-major); masked keys' scores are 0.
template <class T>
void additive_scores_forward(additive_problem<T> const& p, T* scores) {
  if (p.batch == 0 || p.queries == 0 || p.kv == 0) return;
  index_t const chunks = (p.queries + detail::additive_rows - 1) / detail::additive_rows;
  index_t const cost = detail::additive_rows * p.kv * p.hidden * 8;
  parallel_for(p.batch * chunks, cost, [&](index_t begin, index_t end) {
    std::vector<T> kt(static_cast<std::size_t>(p.hidden * p.kv));
    index_t loaded = -1;
    for (index_t t = begin; t < end; ++t) {
      index_t const b = t / chunks;
      index_t const i0 = (t % chunks) * detail::additive_rows;
      index_t const i1 = std::min(p.queries, i0 + detail::additive_rows);
      if (b != loaded) {
        detail::additive_keys_transposed(p, b, kt.data());
        loaded = b;
      }
      for (index_t i = i0; i < i1; ++i) {
        T* row = scores + (b * p.queries + i) * p.kv;
        std::fill(row, row + p.kv, T(0));
        index_t const l = p.length(b, i);
        // Whole vectors: a tail loop would run scalar; the keys past l are zeroed after.
        index_t const lp = std::min(p.kv, (l + 15) / 16 * 16);
        T const* qi = p.q.row(b, i);
        for (index_t h = 0; h < p.hidden; ++h) {
          T const a = qi[h];
          T const wh = p.w[h];
          T const* kh = kt.data() + h * p.kv;
          DIMTENSOR_SIMD
          for (index_t j = 0; j < lp; ++j) row[j] += wh * math::tanh(a + kh[j]);
        }
        std::fill(row + l, row + lp, T(0));
      }
    }
  });
}

/// @brief The backward pass of additive_scores_forward: from the scores'
/// gradient @p dscores (dense [batch, queries, kv]), writes the queries'
/// gradient @p dq, adds into the keys' @p dk (zeroed by the caller) and
/// writes `w_v`'s gradient @p dw ([hidden]).  Threads share out the batch
/// entries; their parts of dw are summed in a fixed order.
template <class T>
void additive_scores_backward(additive_problem<T> const& p, T const* dscores, attention_operand<T> const& dq,
                              attention_operand<T> const& dk, T* dw) {
  std::fill(dw, dw + p.hidden, T(0));
  if (p.batch == 0 || p.queries == 0) return;
  index_t const cost = p.queries * std::max<index_t>(p.kv, 1) * p.hidden * 12;
  int const slots = max_num_threads;
  std::vector<std::vector<T>> dw_parts(static_cast<std::size_t>(std::min<index_t>(p.batch, slots)));
  index_t const per_part =
      (p.batch + static_cast<index_t>(dw_parts.size()) - 1) / static_cast<index_t>(dw_parts.size());
  parallel_for(p.batch, cost, [&](index_t begin, index_t end) {
    std::vector<T> kt(static_cast<std::size_t>(p.hidden * std::max<index_t>(p.kv, 1)));
    std::vector<T> dkt(kt.size());
    std::vector<T> u(static_cast<std::size_t>(std::max<index_t>(p.kv, 1)));
    std::vector<T> gt(u.size());
    for (index_t b = begin; b < end; ++b) {
      std::vector<T>& part = dw_parts[static_cast<std::size_t>(b / per_part)];
      if (part.empty()) part.assign(static_cast<std::size_t>(p.hidden), T(0));
      detail::additive_keys_transposed(p, b, kt.data());
      std::fill(dkt.begin(), dkt.end(), T(0));
      for (index_t i = 0; i < p.queries; ++i) {
        index_t const l = p.length(b, i);
        index_t const lp = std::min(p.kv, (l + 15) / 16 * 16);  // whole vectors; gradients past l are 0
        T const* g = dscores + (b * p.queries + i) * p.kv;
        T const* qi = p.q.row(b, i);
        T* dqi = dq.row(b, i);
        for (index_t h = 0; h < p.hidden; ++h) {
          T const a = qi[h];
          T const wh = p.w[h];
          T const* kh = kt.data() + h * p.kv;
          T* dkh = dkt.data() + h * p.kv;
          T* uu = u.data();
          T* gg = gt.data();
          DIMTENSOR_SIMD
          for (index_t j = 0; j < lp; ++j) {
            T const th = math::tanh(a + kh[j]);
            T const gj = j < l ? g[j] : T(0);
            T const v = gj * wh * (T(1) - th * th);
            uu[j] = v;
            gg[j] = gj * th;
            dkh[j] += v;
          }
          dqi[h] = detail::lane_sum(uu, lp);
          part[static_cast<std::size_t>(h)] += detail::lane_sum(gg, lp);
        }
      }
      for (index_t j = 0; j < p.kv; ++j) {
        T* dkj = dk.row(b, j);
        for (index_t h = 0; h < p.hidden; ++h) dkj[h] += dkt[static_cast<std::size_t>(h * p.kv + j)];
      }
    }
  });
  for (auto const& part : dw_parts) {
    if (part.empty()) continue;
    for (index_t h = 0; h < p.hidden; ++h) dw[h] += part[static_cast<std::size_t>(h)];
  }
}

}  // namespace dimtensor::backends::cpu
