#pragma once
/// @file
/// @brief The register tiles of the float kernels (6 rows x 64 columns
/// at AVX-512, the shape the target's registers allow elsewhere): the
/// keys packed once per entry, the scores and the output products of a
/// block, and the backward pass's products.

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

#include <dimtensor/backends/cpu/attention/rows.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/simd.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {
namespace attention_detail {

#if DIMTENSOR_HAS_SIMD
/// @brief Register tiles for the float kernels' products, without BLAS:
/// nothing is packed per block (each entry's keys, and for the backward
/// pass its values, are packed once into [features][16 keys] panels),
/// nothing is zeroed first, and each strip of rows stops at its own
/// longest length.  A tile is up to tile_rows rows by up to tile_vectors
/// vectors of 16 columns (keys for the scores, features for the output and
/// the gradients), its sums kept in registers along the whole inner
/// dimension, in order.  The shape follows the registers the target has
/// (simd::parts per vector of 16): 6 x 4 vectors, 24 of AVX-512's 32
/// registers; 6 x 1 vectors of two 8-lane halves, 12 of AVX2's 16; 3 x 1
/// of four quarters, 12 of SSE's 16.  The sums and their order are the
/// same for every shape.
inline constexpr index_t tile_rows = simd::parts == 4 ? 3 : 6;
/// Vectors of 16 columns in a tile.
inline constexpr index_t tile_vectors = simd::parts == 1 ? 4 : 1;

/// Keys [0, n) of entry b as panels of 16: key 16t + l's feature f at
/// `out[(t * d + f) * 16 + l]`, 0 past n (round n up to 16 for the size).
inline void attention_pack_keys(attention_operand<float const> const& k, index_t b, index_t n, index_t d, float* out) {
  index_t const whole = d / simd::lanes * simd::lanes;  // features moved 16 x 16 at a time
  for (index_t t = 0; t * simd::lanes < n; ++t) {
    float* panel = out + t * d * simd::lanes;
    float const* key[simd::lanes];
    for (index_t l = 0; l < simd::lanes; ++l) {
      index_t const j = t * simd::lanes + l;
      key[l] = j < n ? k.row(b, j) : nullptr;
    }
    for (index_t f0 = 0; f0 < whole; f0 += simd::lanes) {
      simd::f32x16 block[simd::lanes];
      for (index_t l = 0; l < simd::lanes; ++l) {
        if (key[l] != nullptr) {
          simd::load(block[l], key[l] + f0);
        } else {
          block[l] = simd::f32x16{};
        }
      }
      simd::transpose16(block);
      for (index_t f = 0; f < simd::lanes; ++f) simd::store(panel + (f0 + f) * simd::lanes, block[f]);
    }
    for (index_t l = 0; l < simd::lanes; ++l) {
      for (index_t f = whole; f < d; ++f) panel[f * simd::lanes + l] = key[l] != nullptr ? key[l][f] : 0.0f;
    }
  }
}

/// Scores of R query rows (row r at q[r]) with C panels of packed keys:
/// s[r * lds + 16c + l] = Σ_f q[r][f] · key(16c + l)[f].
template <int R, int C>
[[gnu::always_inline]] inline void attention_scores_tile(float const* const* q, float const* panels, index_t d,
                                                         float* s, index_t lds) {
  float const* row[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) row[r] = q[r];
  simd::f32x16 acc[R][C] = {};
  for (index_t f = 0; f < d; ++f) {
    simd::f32x16 key[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) simd::load(key[c], panels + (c * d + f) * simd::lanes);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      float const x = row[r][f];
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) simd::multiply_add(acc[r][c], key[c], x);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) simd::store(s + r * lds + c * simd::lanes, acc[r][c]);
  }
}

/// Output of R rows over C vectors of features, columns from @p col:
/// o[r][col + 16c + l] = inv[r] · Σ_{j<n} w(r, j) · v[j * ldv + col + 16c + l],
/// with w(r, j) at `w[r * w_row + j * w_inner]` (a transposed w for the
/// keys' and values' gradients), o an array of row pointers.  When not
/// @p first, the sums start from o's (an earlier run over other value
/// rows, or gradients to add to); only when @p last, and @p inv is not
/// null, are they scaled by inv.
template <int R, int C>
[[gnu::always_inline]] inline void attention_values_tile(float const* w, index_t w_row, index_t w_inner, index_t n,
                                                         float const* v, index_t ldv, index_t col, float const* inv,
                                                         float* const* o, bool first, bool last) {
  simd::f32x16 acc[R][C] = {};
  float* out[R];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) out[r] = o[r] + col;
  if (!first) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) simd::load(acc[r][c], out[r] + c * simd::lanes);
    }
  }
  for (index_t j = 0; j < n; ++j) {
    simd::f32x16 value[C];
    float const* vj = v + j * ldv + col;
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) simd::load(value[c], vj + c * simd::lanes);
    float const* wj = w + j * w_inner;
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      float const x = wj[r * w_row];
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) simd::multiply_add(acc[r][c], value[c], x);
    }
  }
  bool const scale = last && inv != nullptr;
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      if (scale) acc[r][c] *= inv[r];
      simd::store(out[r] + c * simd::lanes, acc[r][c]);
    }
  }
}

/// attention_scores_tile's arguments, for attention_tile.
struct attention_scores_call {
  float const* const* q;
  float const* panels;
  index_t d;
  float* s;
  index_t lds;
  template <int R, int C>
  void run() const {
    attention_scores_tile<R, C>(q, panels, d, s, lds);
  }
};

/// attention_values_tile's arguments, for attention_tile.
struct attention_values_call {
  float const* w;
  index_t w_row, w_inner, n;
  float const* v;
  index_t ldv, col;
  float const* inv;
  float* const* o;
  bool first, last;
  template <int R, int C>
  void run() const {
    attention_values_tile<R, C>(w, w_row, w_inner, n, v, ldv, col, inv, o, first, last);
  }
};

/// The tile of R rows and @p c vectors (1 to tile_vectors) that Tile
/// names, by Tile::template run<R, C>().
template <int R, class Tile>
void attention_tile_columns(index_t c, Tile const& tile) {
  switch (c) {
    case 4:
      tile.template run<R, 4>();
      break;
    case 3:
      tile.template run<R, 3>();
      break;
    case 2:
      tile.template run<R, 2>();
      break;
    default:
      tile.template run<R, 1>();
      break;
  }
}

/// The tile of @p r rows (1 to tile_rows) and @p c vectors.
template <class Tile>
void attention_tile(index_t r, index_t c, Tile const& tile) {
  switch (r) {
    case 6:
      attention_tile_columns<6>(c, tile);
      break;
    case 5:
      attention_tile_columns<5>(c, tile);
      break;
    case 4:
      attention_tile_columns<4>(c, tile);
      break;
    case 3:
      attention_tile_columns<3>(c, tile);
      break;
    case 2:
      attention_tile_columns<2>(c, tile);
      break;
    default:
      attention_tile_columns<1>(c, tile);
      break;
  }
}

/// The longest of @p len[r0 .. r0 + rows), at most @p n.
inline index_t attention_strip_width(index_t const* len, index_t r0, index_t rows, index_t n) {
  index_t w = 0;
  for (index_t r = r0; r < r0 + rows; ++r) w = std::max(w, len[r]);
  return std::min(w, n);
}

/// s (rows x round16(n), leading dim lds) = the scores of @p rows query
/// rows (row r at q[r]) with the first n keys of an entry, packed by
/// attention_pack_keys into @p panels; each strip of tile_rows rows stops
/// at its longest length (@p len: the rows' lengths), so a block of rows
/// taken longest first computes little past each row's own length.  Key
/// panels outside, rows inside: a group of packed keys (16 KiB at d = 64)
/// stays in the first-level cache while the rows pass.
inline void attention_scores_tiled(float const* const* q, index_t rows, index_t const* len, float const* panels,
                                   index_t n, index_t d, float* s, index_t lds) {
  index_t const vectors = (n + simd::lanes - 1) / simd::lanes;
  for (index_t c0 = 0; c0 < vectors; c0 += tile_vectors) {
    index_t const j0 = c0 * simd::lanes;
    for (index_t r0 = 0; r0 < rows; r0 += tile_rows) {
      index_t const r = std::min(tile_rows, rows - r0);
      index_t const width = attention_strip_width(len, r0, r, n);
      if (width <= j0) continue;
      index_t const c = std::min(tile_vectors, (width - j0 + simd::lanes - 1) / simd::lanes);
      attention_scores_call const tile{q + r0, panels + c0 * d * simd::lanes, d, s + r0 * lds + j0, lds};
      attention_tile(r, c, tile);
    }
  }
}

/// Value rows a register tile takes at a time (64 KiB of values at 64
/// features): the rows of the block pass over them while they stay in the
/// second-level cache.
inline constexpr index_t tile_value_rows = 512;

/// How far a strip of a value product's inner dimension runs, from the
/// lengths @p len of the query rows: over the strip's rows' longest length
/// (w's rows are query rows: each row's weights are 0 past it), or, where
/// w is transposed (its rows are keys from @p r0 on, the inner dimension
/// query rows), up to the last query row that reaches key r0.
inline index_t attention_strip_inner(index_t const* len, bool transposed, index_t r0, index_t rows, index_t n) {
  if (!transposed) return attention_strip_width(len, r0, rows, n);
  index_t i = n;
  while (i > 0 && len[i - 1] <= r0) --i;
  return i;
}

/// o (rows x dv, row r at o[r]) = inv[r] · (w · v) over the first n
/// value rows (v, leading dim ldv), w's element (r, j) at `w[r * ldw + j]`, or
/// at `w[j * ldw + r]` when @p transposed; dv a multiple of 16.  Each
/// strip of rows stops where w is 0 from the query rows' lengths @p len
/// (attention_strip_inner).  With @p accumulate the products are added to
/// o; a null @p inv scales nothing.
inline void attention_values_tiled(float const* w, index_t ldw, bool transposed, index_t rows, index_t n,
                                   index_t const* len, float const* v, index_t ldv, index_t dv, float const* inv,
                                   float* const* o, bool accumulate) {
  index_t const w_row = transposed ? 1 : ldw;
  index_t const w_inner = transposed ? ldw : 1;
  index_t const vectors = dv / simd::lanes;
  for (index_t c0 = 0; c0 < vectors; c0 += tile_vectors) {
    index_t const c = std::min(tile_vectors, vectors - c0);
    for (index_t j0 = 0; j0 == 0 || j0 < n; j0 += tile_value_rows) {
      for (index_t r0 = 0; r0 < rows; r0 += tile_rows) {
        index_t const r = std::min(tile_rows, rows - r0);
        index_t const inner = attention_strip_inner(len, transposed, r0, r, n);
        // A strip with nothing to add still writes its zeros when it is not added to.
        if (j0 >= inner && (j0 > 0 || accumulate)) continue;
        index_t const nj = std::min(tile_value_rows, inner - j0);
        attention_values_call const tile{w + r0 * w_row + j0 * w_inner,
                                         w_row,
                                         w_inner,
                                         std::max<index_t>(nj, 0),
                                         v + j0 * ldv,
                                         ldv,
                                         c0 * simd::lanes,
                                         inv == nullptr ? nullptr : inv + r0,
                                         o + r0,
                                         j0 == 0 && !accumulate,
                                         j0 + nj >= inner};
        attention_tile(r, c, tile);
      }
    }
  }
}
#endif

/// Each entry's first @p kv rows of @p x (d features) packed for the
/// register tiles (attention_pack_keys), entry b's at b * round16(kv) * d;
/// empty where T does not take them.
template <class T>
std::vector<T> attention_pack_entries(attention_operand<T const> const& x, index_t batch, index_t kv, index_t d) {
  std::vector<T> packed;
#if DIMTENSOR_HAS_SIMD
  if constexpr (std::is_same_v<T, float>) {
    index_t const size = attention_padded(kv) * d;
    packed.resize(static_cast<std::size_t>(batch * size));
    parallel_for(batch, kv * d, [&](index_t first, index_t last) {
      for (index_t b = first; b < last; ++b) attention_pack_keys(x, b, kv, d, packed.data() + b * size);
    });
  }
#endif
  (void)x, (void)batch, (void)kv, (void)d;
  return packed;
}

/// One query block of the forward pass on the register tiles (when
/// attention_tiles_fit): its scores over the first @p width keys of an
/// entry (@p keys: its packed keys; query row r at q[r]) into @p scores
/// (leading dim: width rounded up to 16), the softmax rows, and the output
/// rows (row r at out[r]) from entry b's values.
template <class T>
void attention_block_tiled(attention_problem<T> const& p, index_t b, index_t const* idx, T const* const* q, index_t rows,
                           index_t width, index_t const* len, T const* keys, T* scores, T* const* out, T* m, T* inv) {
#if DIMTENSOR_HAS_SIMD
  if constexpr (std::is_same_v<T, float>) {
    index_t const lds = attention_padded(width);
    attention_scores_tiled(q, rows, len, keys, width, p.d, scores, lds);
    attention_mask_scores(p, b, idx, rows, 0, len, scores, lds);
    attention_softmax_rows<T>(scores, lds, rows, width, len, p.scale, m, inv);
    attention_values_tiled(scores, lds, false, rows, width, len, p.v.row(b, 0), p.v.row_stride, p.dv, inv, out, false);
    return;
  }
#endif
  (void)p, (void)b, (void)idx, (void)q, (void)rows, (void)width, (void)len, (void)keys, (void)scores, (void)out, (void)m,
      (void)inv;
}

/// A backward block's raw scores (into @p w) and dP = dO · Vᵀ (into @p dw),
/// over the first @p width keys (@p keys and @p values: the entry's packed
/// keys and values; query row r at q[r], its output gradient at g[r]),
/// rows of leading dim @p ldw, on the register tiles (when
/// attention_backward_tiles_fit).
template <class T>
void attention_backward_scores_tiled(attention_problem<T> const& p, T const* const* q, T const* const* g, index_t rows,
                                     index_t width, index_t const* len, T const* keys, T const* values, T* w, T* dw,
                                     index_t ldw) {
#if DIMTENSOR_HAS_SIMD
  if constexpr (std::is_same_v<T, float>) {
    attention_scores_tiled(q, rows, len, keys, width, p.d, w, ldw);
    attention_scores_tiled(g, rows, len, values, width, p.dv, dw, ldw);
    return;
  }
#endif
  (void)p, (void)q, (void)g, (void)rows, (void)width, (void)len, (void)keys, (void)values, (void)w, (void)dw,
      (void)ldw;
}

/// A backward block's products on the register tiles: dQ = dS · K into
/// the rows dq[r], dK += dSᵀ · Q and dV += Pᵀ · dO into the rows dk[j] and
/// dv[j] (P in @p w, dS in @p dw; the block's query rows and their output
/// gradients as matrices q and g, leading dims ldq and ldg).
template <class T>
void attention_backward_products_tiled(attention_problem<T> const& p, index_t b, T const* q, index_t ldq, T const* g,
                                       index_t ldg, index_t rows, index_t width, index_t const* len, T const* w,
                                       T const* dw, index_t ldw, T* const* dq, T* const* dk, T* const* dv) {
#if DIMTENSOR_HAS_SIMD
  if constexpr (std::is_same_v<T, float>) {
    attention_values_tiled(dw, ldw, false, rows, width, len, p.k.row(b, 0), p.k.row_stride, p.d, nullptr, dq, false);
    attention_values_tiled(dw, ldw, true, width, rows, len, q, ldq, p.d, nullptr, dk, true);
    attention_values_tiled(w, ldw, true, width, rows, len, g, ldg, p.dv, nullptr, dv, true);
    return;
  }
#endif
  (void)p, (void)b, (void)q, (void)ldq, (void)g, (void)ldg, (void)rows, (void)width, (void)len, (void)w, (void)dw,
      (void)ldw, (void)dq, (void)dk, (void)dv;
}

}  // namespace attention_detail
}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
