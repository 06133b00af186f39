#pragma once
/// @file
/// @brief The fused forward pass (backends/cpu/attention.hpp gives the
/// maths): the blocks of the plan, each on the path the plan chose.

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

#include <dimtensor/backends/cpu/attention/online.hpp>
#include <dimtensor/backends/cpu/attention/plan.hpp>
#include <dimtensor/backends/cpu/attention/rows.hpp>
#include <dimtensor/backends/cpu/attention/tiles.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {

/// @brief The fused forward pass: writes the output rows (o, [batch,
/// queries, dv]) and each query row's softmax statistics (@p row_max and
/// @p row_inv, [batch * queries] each, for the backward pass).
template <class T>
void attention_forward(attention_problem<T> const& p, attention_operand<T> const& o, T* row_max, T* row_inv) {
  if (p.batch == 0 || p.queries == 0 || p.dv == 0) return;
  cpu::detail::single_threaded_blas();
  attention_detail::attention_plan const plan = attention_detail::plan_attention(p);
  std::vector<index_t> const& order = plan.order;
  bool const chunked = plan.chunked;
  index_t const block = plan.block;
  index_t const blocks = (p.queries + block - 1) / block;
  auto const tiles = attention_detail::attention_block_work(p, block, blocks, order).second;
  // Per block: its rows (fewer than a whole block when the queries are few) times the keys and features.
  index_t const cost = std::min(block, p.queries) * std::max<index_t>(p.kv, 1) * (p.d + p.dv);
  struct buffers {
    std::vector<T> scores, qbuf, obuf;
    std::vector<T> mean;  // the mean of an entry's values, for rows of valid length 0
    // The register tiles read and write rows in place, through pointers.
    std::vector<T const*> qrows;
    std::vector<T*> orows;
  };
  // Score rows are padded to whole vectors of keys; the register tiles
  // take each entry's keys packed once.
  bool const tiled = plan.tiled;
  index_t const kv_padded = attention_padded(p.kv);
  std::vector<T> const keys = tiled ? attention_detail::attention_pack_entries(p.k, p.batch, p.kv, p.d) : std::vector<T>{};
  auto const make = [&] {
    buffers buf;
    buf.scores.resize(
        static_cast<std::size_t>(block * (chunked ? attention_detail::attention_key_chunk : std::max<index_t>(kv_padded, 1))));
    if (tiled) {
      buf.qrows.resize(static_cast<std::size_t>(block));
      buf.orows.resize(static_cast<std::size_t>(block));
    } else if (!order.empty()) {
      buf.qbuf.resize(static_cast<std::size_t>(block * p.d));
      buf.obuf.resize(static_cast<std::size_t>(block * p.dv));
    }
    return buf;
  };
  parallel_for_dynamic(p.batch * blocks, cost, make, [&](buffers& buf, index_t n) {
    auto& [scores, qbuf, obuf, mean, qrows, orows] = buf;
    index_t len[attention_block_max], idx[attention_block_max];
    T m[attention_block_max], inv[attention_block_max];
    {
      index_t const t = tiles[static_cast<std::size_t>(n)];
      index_t const b = t / blocks;
      index_t const i0 = (t % blocks) * block;
      index_t const rows = std::min(block, p.queries - i0);
      bool const direct = order.empty();
      index_t width = 0;
      bool any_empty = false;
      for (index_t r = 0; r < rows; ++r) {
        idx[r] = direct ? i0 + r : order[static_cast<std::size_t>(b * p.queries + i0 + r)];
        len[r] = p.length(b, idx[r]);
        width = std::max(width, len[r]);
        any_empty = any_empty || len[r] == 0;
      }
      // Output rows: in place, but for the BLAS path's gathered rows (copied back at the end).
      bool const copied = !direct && !tiled;
      T* const out = copied ? obuf.data() : o.row(b, idx[0]);
      index_t const ldo = copied ? p.dv : o.row_stride;
      auto const out_row = [&](index_t r) { return copied ? out + r * ldo : o.row(b, idx[r]); };
      if (width == 0) {
        for (index_t r = 0; r < rows; ++r) std::fill(out_row(r), out_row(r) + p.dv, T(0));
      } else {
        if (tiled) {
          for (index_t r = 0; r < rows; ++r) {
            qrows[static_cast<std::size_t>(r)] = p.q.row(b, idx[r]);
            orows[static_cast<std::size_t>(r)] = out_row(r);
          }
          T const* const entry_keys = keys.data() + b * kv_padded * p.d;
          if (chunked) {
            attention_detail::attention_block_chunked(p, b, idx, qrows.data(), rows, width, len, entry_keys, scores.data(),
                                            orows.data(), m, inv);
          } else {
            attention_detail::attention_block_tiled(p, b, idx, qrows.data(), rows, width, len, entry_keys, scores.data(),
                                          orows.data(), m, inv);
          }
        } else {
          auto const [qa, lda] = attention_detail::attention_gather(p.q, b, idx, rows, p.d, direct, qbuf.data());
          // Score rows padded to whole vectors: the softmax reads and writes their ends in place.
          index_t const lds = attention_padded(width);
          attention_detail::attention_gemm<T>(false, true, rows, width, p.d, qa, lda, p.k.row(b, 0), p.k.row_stride, T(0),
                                    scores.data(), lds);
          attention_detail::attention_mask_scores(p, b, idx, rows, 0, len, scores.data(), lds);
          attention_detail::attention_softmax_rows<T>(scores.data(), lds, rows, width, len, p.scale, m, inv);
          attention_detail::attention_gemm<T>(false, false, rows, p.dv, width, scores.data(), lds, p.v.row(b, 0),
                                    p.v.row_stride, T(0), out, ldo);
          for (index_t r = 0; r < rows; ++r) attention_detail::attention_scale_row(out + r * ldo, p.dv, inv[r]);
        }
        for (index_t r = 0; r < rows; ++r) {
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
          if (len[r] == 0) std::copy(mean.begin(), mean.end(), out_row(r));
        }
      }
      if (copied) {
        for (index_t r = 0; r < rows; ++r) std::copy(out + r * ldo, out + r * ldo + p.dv, o.row(b, idx[r]));
      }
    }
  });
}

}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
