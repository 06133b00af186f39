#pragma once
/// @file
/// @brief What every path of the fused attention kernels does to a
/// block's rows: small products as loops, others by BLAS
/// (`attention_gemm`), the softmax rows with d2l's masking (exact or by an
/// inverse scale), the online rows of the chunked path, the weights formed
/// again from the kept row statistics, and the gathering of rows taken out
/// of order.

// IWYU pragma: private, include <dimtensor/backends/cpu/attention.hpp>

/// Defined once an attention kernel header is included (src/cpu/kernels.inl
/// refuses one included before the level's target pragma).
#define DIMTENSOR_BACKENDS_CPU_ATTENTION_HPP 1

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/attention/plan.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/simd.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {
namespace attention_detail {

/// The products the kernels take as loops rather than BLAS calls
/// (m · n · k at most this): a call costs more than such a product (the
/// book's toy multi-head attention, 4 x 6 keys of 20 features).
inline constexpr index_t attention_small_product = 4096;

/// C (m x n, leading dim ldc) = A·B + beta·C, A m x k (or its transpose),
/// B k x n (or its transpose), row-major: CBLAS when available (but for
/// products of at most attention_small_product), else loops.
template <class T>
void attention_gemm(bool ta, bool tb, index_t m, index_t n, index_t k, T const* a, index_t lda, T const* b, index_t ldb,
                    T beta, T* c, index_t ldc) {
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (m * n * k > attention_small_product) {
      cpu::detail::blas_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta);
      return;
    }
  }
#endif
  for (index_t i = 0; i < m; ++i) {
    T* ci = c + i * ldc;
    if (!ta && tb) {
      // Rows of A and B: dot products along contiguous features.
      T const* ai = a + i * lda;
      for (index_t j = 0; j < n; ++j) {
        T const* bj = b + j * ldb;
        // Eight partial sums (one vector), then the rest in order.
        T part[8] = {};
        index_t p = 0;
        for (; p + 8 <= k; p += 8) {
          for (index_t l = 0; l < 8; ++l) part[l] += ai[p + l] * bj[p + l];
        }
        T sum = T(0);
        for (; p < k; ++p) sum += ai[p] * bj[p];
        for (index_t l = 0; l < 8; ++l) sum += part[l];
        ci[j] = beta == T(0) ? sum : beta * ci[j] + sum;
      }
      continue;
    }
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

/// y[0, n) *= c.
template <class T>
void attention_scale_row(T* y, index_t n, T c) {
  DIMTENSOR_SIMD
  for (index_t f = 0; f < n; ++f) y[f] *= c;
}

/// @brief The key masks and the additive mask of @p p on a block's raw
/// scores (before the scale): row r (query idx[r] of entry @p b), keys
/// @p j0 to j0 + @p len[r] at `s + r * ld`.  A masked key's score becomes
/// attention_masked_score; the additive mask is added times the scale
/// (the softmax divides by it).  Nothing when @p p masks no keys.
template <class T>
void attention_mask_scores(attention_problem<T> const& p, index_t b, index_t const* idx, index_t rows, index_t j0,
                           index_t const* len, T* s, index_t ld) {
  if (!p.masks_keys()) return;
  T const masked = kernel::attention_masked_score<T>;
  for (index_t r = 0; r < rows; ++r) {
    T* const x = s + r * ld;
    index_t const l = len[r];
    if (p.bias.data != nullptr) {
      T const* const a = p.bias.row(b, idx[r]) + j0;
      T const scale = p.scale;
      DIMTENSOR_SIMD
      for (index_t j = 0; j < l; ++j) x[j] = a[j] <= masked ? masked : x[j] + a[j] * scale;
    }
    if (p.keep.data != nullptr) {
      bool const* const k = p.keep.row(b, idx[r]) + j0;
      DIMTENSOR_SIMD
      for (index_t j = 0; j < l; ++j) x[j] = k[j] ? x[j] : masked;
    }
  }
}

/// exp for the kernels: the branch-free float one, std::exp otherwise.
template <class T>
inline T attention_exp(T x) {
  return math::exp(x);
}

/// Division by the scale: a multiplication by 1 / scale when that gives
/// the same result (scale a power of two, as √d is for d = 4, 16, 64,
/// 256, …; a vector division costs as much as the rest of an exp), else
/// the division.  `exact` says which.
template <class T>
struct scale_divisor {
  T scale;
  T inverse = T(1) / scale;
  bool exact = [s = scale] {
    int exponent = 0;
    return std::frexp(s, &exponent) == T(0.5);
  }();
  /// x / scale, by the multiplication when Exact.
  template <bool Exact>
  T divide(T x) const noexcept {
    if constexpr (Exact) {
      return x * inverse;
    } else {
      return x / scale;
    }
  }
};

#if DIMTENSOR_HAS_SIMD
/// v = exp(v / scale − m) lane by lane: a softmax numerator from raw scores.
template <bool Exact>
[[gnu::always_inline]] inline void numerator(simd::f32x16& v, scale_divisor<float> const& div, float m) {
  simd::divide<Exact>(v, div.scale, div.inverse);
  v -= m;
  simd::exp_nonpositive(v);
}

/// Loads x[j, j + 16) into @p v with the lanes at or past @p l set to
/// -inf (e = 0): from x itself when @p padded (the row has room up to a
/// whole vector), else through a copy.
[[gnu::always_inline]] inline void load_tail(simd::f32x16& v, float const* x, index_t j, index_t l, bool padded) {
  float const ninf = -std::numeric_limits<float>::infinity();
  if (padded) {
    simd::load(v, x + j);
    simd::keep_first(v, l - j, ninf);
  } else {
    float tail[simd::lanes];
    std::fill(tail, tail + simd::lanes, ninf);
    std::copy(x + j, x + l, tail);
    simd::load(v, tail);
  }
}

/// Stores the first l - j lanes of @p v at x + j (all 16 when @p padded:
/// the lanes past l, e = 0, land in the row's padding).
[[gnu::always_inline]] inline void store_tail(float* x, index_t j, index_t l, bool padded, simd::f32x16 const& v) {
  if (padded) {
    simd::store(x + j, v);
  } else {
    float tail[simd::lanes];
    simd::store(tail, v);
    std::copy(tail, tail + (l - j), x + j);
  }
}

/// One float row of @p l raw scores into softmax numerators in place (as
/// attention_softmax_rows_by below, sixteen lanes at a time, the same sums
/// in the same order): returns the row's maximum over the scale (or
/// @p floor, where that is larger: the numerators are taken from it) and
/// the numerators' sum.  @p padded: x has room up to l rounded up to 16.
template <bool Exact>
std::pair<float, float> softmax_row_simd(float* x, index_t l, scale_divisor<float> const div, bool padded,
                                         float floor = -std::numeric_limits<float>::infinity()) {
  simd::f32x16 top = simd::splat(x[0]), v;
  index_t j = 0;
  for (; j + simd::lanes <= l; j += simd::lanes) {
    simd::load(v, x + j);
    simd::max_into(top, v);
  }
  index_t const full = j;
  if (j < l) {
    load_tail(v, x, j, l, padded);
    simd::max_into(top, v);
  }
  // Rounding is monotonic: the largest x / scale is the largest x, divided.
  float m = div.template divide<Exact>(simd::max_of(top));
  if (m < floor) m = floor;
  simd::f32x16 part{};
  for (j = 0; j < full; j += simd::lanes) {
    simd::load(v, x + j);
    numerator<Exact>(v, div, m);
    simd::store(x + j, v);
    part += v;
  }
  float sum = 0.0f;
  if (j < l) {
    load_tail(v, x, j, l, padded);
    numerator<Exact>(v, div, m);
    store_tail(x, j, l, padded, v);
    for (index_t k = 0; k < l - j; ++k) sum += v[k];
  }
  // Rows shorter than a vector have no part to add (its lanes are all +0).
  return {m, full == 0 ? sum : sum + simd::sum_in_order(part)};
}

/// Row weights again in float (attention_weights_again_by below):
/// x[j] = exp(x[j] / scale − m) · inv for j < l.  @p padded as above.
template <bool Exact>
void weights_row_simd(float* x, index_t l, scale_divisor<float> const div, float m, float inv, bool padded) {
  simd::f32x16 v;
  index_t j = 0;
  for (; j + simd::lanes <= l; j += simd::lanes) {
    simd::load(v, x + j);
    numerator<Exact>(v, div, m);
    v *= inv;
    simd::store(x + j, v);
  }
  if (j < l) {
    load_tail(v, x, j, l, padded);
    numerator<Exact>(v, div, m);
    v *= inv;
    store_tail(x, j, l, padded, v);
  }
}
/// One chunk of keys of `rows` float rows of raw scores (row r at
/// `s + r * ld`, its first `len[r]` entries valid in this chunk, `width` in
/// all, padded to whole vectors) into softmax numerators in place, online
/// (the rule of flash attention): each row's running maximum @p m (over
/// the scale; -inf before its first keys) and sum of numerators @p sum are
/// carried from chunk to chunk, the numerators are taken from the new
/// maximum, and @p alpha[r] = exp(old maximum − new) is the factor by which
/// the row's earlier sums shrink (1 where the chunk has none of its keys).
template <bool Exact>
void attention_online_rows_by(float* s, index_t ld, index_t rows, index_t width, index_t const* len,
                              scale_divisor<float> const div, float* m, float* sum, float* alpha) {
  for (index_t r = 0; r < rows; ++r) {
    float* x = s + r * ld;
    index_t const l = len[r];
    if (l == 0) {
      std::fill(x, x + width, 0.0f);
      alpha[r] = 1.0f;
      continue;
    }
    float const before = m[r];
    auto const [now, part] = softmax_row_simd<Exact>(x, l, div, true, before);
    std::fill(x + l, x + width, 0.0f);
    alpha[r] = before == -std::numeric_limits<float>::infinity() ? 0.0f : math::exp(before - now);
    sum[r] = sum[r] * alpha[r] + part;
    m[r] = now;
  }
}

/// attention_online_rows_by, by the multiplication when the scale allows.
inline void attention_online_rows(float* s, index_t ld, index_t rows, index_t width, index_t const* len, float scale,
                                  float* m, float* sum, float* alpha) {
  scale_divisor<float> const div{scale};
  if (div.exact) {
    attention_online_rows_by<true>(s, ld, rows, width, len, div, m, sum, alpha);
  } else {
    attention_online_rows_by<false>(s, ld, rows, width, len, div, m, sum, alpha);
  }
}
#endif

/// Turns `rows` rows of raw scores (row r at `s + r * ld`, its first
/// `len[r]` entries valid, `width` in all) into softmax numerators in place:
/// exp(x / scale − m) with m the row's largest x / scale, 0 after the valid
/// entries; each row's m and 1 / (sum of its numerators) go to @p row_max
/// and @p row_inv (the output rows are scaled by the latter after the
/// product with the values, one multiplication per output element instead
/// of one per weight).  A row of length 0 becomes all 0 (its uniform
/// weights are handled apart).
template <bool Exact, class T>
void attention_softmax_rows_by(T* s, index_t ld, index_t rows, index_t width, index_t const* len,
                               scale_divisor<T> const div, T* row_max, T* row_inv) {
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
#if DIMTENSOR_HAS_SIMD
    if constexpr (std::is_same_v<T, float>) {
      auto const [m, sum] = softmax_row_simd<Exact>(x, l, div, ld >= attention_padded(width));
      std::fill(x + l, x + width, T(0));
      row_max[r] = m;
      row_inv[r] = T(1) / sum;
      continue;
    }
#endif
    // Rounding is monotonic: the largest x / scale is the largest x, divided.
    T const m = div.template divide<Exact>(lane_max<T>(l, x[0], [x](index_t j) { return x[j]; }));
    T part[lanes] = {};
    index_t j = 0;
    for (; j + lanes <= l; j += lanes) {
      for (index_t k = 0; k < lanes; ++k) {
        T const e = attention_exp(div.template divide<Exact>(x[j + k]) - m);
        x[j + k] = e;
        part[k] += e;
      }
    }
    T sum = T(0);
    for (; j < l; ++j) {
      T const e = attention_exp(div.template divide<Exact>(x[j]) - m);
      x[j] = e;
      sum += e;
    }
    for (T p : part) sum += p;
    std::fill(x + l, x + width, T(0));
    row_max[r] = m;
    row_inv[r] = T(1) / sum;
  }
}

template <class T>
void attention_softmax_rows(T* s, index_t ld, index_t rows, index_t width, index_t const* len, T scale, T* row_max,
                            T* row_inv) {
  scale_divisor<T> const div{scale};
  if (div.exact) {
    attention_softmax_rows_by<true>(s, ld, rows, width, len, div, row_max, row_inv);
  } else {
    attention_softmax_rows_by<false>(s, ld, rows, width, len, div, row_max, row_inv);
  }
}

/// The weights of `rows` rows again, from raw scores and the kept row
/// statistics (the forward pass's numbers).
template <bool Exact, class T>
void attention_weights_again_by(T* s, index_t ld, index_t rows, index_t width, index_t const* len,
                                scale_divisor<T> const div, T const* row_max, T const* row_inv) {
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
#if DIMTENSOR_HAS_SIMD
    if constexpr (vector_exp) {
      weights_row_simd<Exact>(x, l, div, m, inv, ld >= attention_padded(width));
      std::fill(x + l, x + width, T(0));
      continue;
    }
#endif
    if constexpr (vector_exp) {
      DIMTENSOR_SIMD
      for (index_t j = 0; j < l; ++j) x[j] = attention_exp(div.template divide<Exact>(x[j]) - m) * inv;
    } else {
      for (index_t j = 0; j < l; ++j) x[j] = attention_exp(div.template divide<Exact>(x[j]) - m) * inv;
    }
    std::fill(x + l, x + width, T(0));
  }
}

template <class T>
void attention_weights_again(T* s, index_t ld, index_t rows, index_t width, index_t const* len, T scale,
                             T const* row_max, T const* row_inv) {
  scale_divisor<T> const div{scale};
  if (div.exact) {
    attention_weights_again_by<true>(s, ld, rows, width, len, div, row_max, row_inv);
  } else {
    attention_weights_again_by<false>(s, ld, rows, width, len, div, row_max, row_inv);
  }
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

}  // namespace attention_detail
}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
