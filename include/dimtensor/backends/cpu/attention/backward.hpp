#pragma once
/// @file
/// @brief The fused backward pass (backends/cpu/attention.hpp gives the
/// maths): the weights formed again block by block from the forward pass's
/// row statistics, on the path the plan chose.

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
#include <dimtensor/backends/cpu/attention/rows.hpp>
#include <dimtensor/backends/cpu/attention/tiles.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {

/// @brief The fused backward pass: from the output's gradient @p g ([batch,
/// queries, dv]) and the forward pass's row statistics, writes the queries'
/// gradient @p dq and adds into the keys' and values' (@p dk, @p dv, which
/// the caller zeroes or holds earlier gradients in).
template <class T>
void attention_backward(attention_problem<T> const& p, T const* row_max, T const* row_inv,
                        attention_operand<T const> const& g, attention_operand<T> const& dq,
                        attention_operand<T> const& dk, attention_operand<T> const& dv) {
  if (p.batch == 0 || p.queries == 0) return;
  cpu::detail::single_threaded_blas();
  attention_detail::attention_plan const plan = attention_detail::plan_attention(p);
  std::vector<index_t> const& order = plan.order;
  index_t const block = plan.backward_block;
  index_t const blocks = (p.queries + block - 1) / block;
  // Threads take whole entries (their keys' and values' gradients are sums
  // over the entry's blocks), the most work first.
  std::vector<index_t> entries(static_cast<std::size_t>(p.batch));
  {
    auto const work = attention_detail::attention_block_work(p, block, blocks, order).first;
    std::vector<index_t> total(static_cast<std::size_t>(p.batch), 0);
    for (index_t t = 0; t < p.batch * blocks; ++t)
      total[static_cast<std::size_t>(t / blocks)] += work[static_cast<std::size_t>(t)];
    for (index_t b = 0; b < p.batch; ++b) entries[static_cast<std::size_t>(b)] = b;
    std::stable_sort(entries.begin(), entries.end(), [&total](index_t x, index_t y) {
      return total[static_cast<std::size_t>(x)] > total[static_cast<std::size_t>(y)];
    });
  }
  index_t const cost = p.queries * std::max<index_t>(p.kv, 1) * (2 * p.d + 2 * p.dv);
  struct buffers {
    std::vector<T> weights, dweights, qbuf, gbuf, dqbuf;
    // The register tiles read and write rows in place, through pointers.
    std::vector<T const*> qrows, grows;
    std::vector<T*> dqrows, dkrows, dvrows;
  };
  // The register tiles' rows are padded to whole vectors of keys, and take
  // each entry's keys and values packed once.
  bool const tiled = plan.backward_tiled;
  index_t const kv_padded = attention_padded(p.kv);
  std::vector<T> const keys = tiled ? attention_detail::attention_pack_entries(p.k, p.batch, p.kv, p.d) : std::vector<T>{};
  std::vector<T> const values = tiled ? attention_detail::attention_pack_entries(p.v, p.batch, p.kv, p.dv) : std::vector<T>{};
  auto const make = [&] {
    buffers buf;
    buf.weights.resize(static_cast<std::size_t>(block * std::max<index_t>(kv_padded, 1)));
    buf.dweights.resize(buf.weights.size());
    if (tiled) {
      for (auto* rows : {&buf.qrows, &buf.grows}) rows->resize(static_cast<std::size_t>(block));
      buf.dqrows.resize(static_cast<std::size_t>(block));
      buf.dkrows.resize(static_cast<std::size_t>(p.kv));
      buf.dvrows.resize(static_cast<std::size_t>(p.kv));
    }
    if (!order.empty()) {
      buf.qbuf.resize(static_cast<std::size_t>(block * p.d));
      buf.gbuf.resize(static_cast<std::size_t>(block * p.dv));
      if (!tiled) buf.dqbuf.resize(static_cast<std::size_t>(block * p.d));
    }
    return buf;
  };
  bool const direct = order.empty();
  attention_detail::scale_divisor<T> const divisor{p.scale};
  parallel_for_dynamic(p.batch, cost, make, [&](buffers& buf, index_t n) {
    auto& [weights, dweights, qbuf, gbuf, dqbuf, qrows, grows, dqrows, dkrows, dvrows] = buf;
    index_t len[attention_block_max], idx[attention_block_max];
    T m[attention_block_max], inv[attention_block_max];
    {
      index_t const b = entries[static_cast<std::size_t>(n)];
      if (tiled) {
        for (index_t j = 0; j < p.kv; ++j) {
          dkrows[static_cast<std::size_t>(j)] = dk.row(b, j);
          dvrows[static_cast<std::size_t>(j)] = dv.row(b, j);
        }
      }
      // The queries' gradient rows: in place, but for the BLAS path's
      // gathered rows (copied back at the end).
      bool const copied = !direct && !tiled;
      for (index_t blk = 0; blk < blocks; ++blk) {
        index_t const i0 = blk * block;
        index_t const rows = std::min(block, p.queries - i0);
        index_t width = 0;
        for (index_t r = 0; r < rows; ++r) {
          idx[r] = direct ? i0 + r : order[static_cast<std::size_t>(b * p.queries + i0 + r)];
          len[r] = p.length(b, idx[r]);
          width = std::max(width, len[r]);
          m[r] = row_max[b * p.queries + idx[r]];
          inv[r] = row_inv[b * p.queries + idx[r]];
        }
        T* dq_rows = copied ? dqbuf.data() : dq.row(b, idx[0]);
        index_t const lddq = copied ? p.d : dq.row_stride;
        auto const dq_row = [&](index_t r) { return copied ? dq_rows + r * lddq : dq.row(b, idx[r]); };
        auto const [ga, ldg] = attention_detail::attention_gather(g, b, idx, rows, p.dv, direct, gbuf.data());
        if (width == 0) {
          for (index_t r = 0; r < rows; ++r) std::fill(dq_row(r), dq_row(r) + p.d, T(0));
        } else {
          T* const pw = weights.data();
          T* const dpw = dweights.data();
          auto const [qa, lda] = attention_detail::attention_gather(p.q, b, idx, rows, p.d, direct, qbuf.data());
          // The rows of the weights and their gradients, padded to whole vectors.
          index_t const ldw = attention_padded(width);
          if (tiled) {
            for (index_t r = 0; r < rows; ++r) {
              qrows[static_cast<std::size_t>(r)] = qa + r * lda;
              grows[static_cast<std::size_t>(r)] = ga + r * ldg;
              dqrows[static_cast<std::size_t>(r)] = dq.row(b, idx[r]);
            }
            attention_detail::attention_backward_scores_tiled(p, qrows.data(), grows.data(), rows, width, len,
                                                    keys.data() + b * kv_padded * p.d,
                                                    values.data() + b * kv_padded * p.dv, pw, dpw, ldw);
            attention_detail::attention_mask_scores(p, b, idx, rows, 0, len, pw, ldw);
            attention_detail::attention_weights_again<T>(pw, ldw, rows, width, len, p.scale, m, inv);
          } else {
            attention_detail::attention_gemm<T>(false, true, rows, width, p.d, qa, lda, p.k.row(b, 0), p.k.row_stride, T(0), pw,
                                      ldw);
            attention_detail::attention_mask_scores(p, b, idx, rows, 0, len, pw, ldw);
            attention_detail::attention_weights_again<T>(pw, ldw, rows, width, len, p.scale, m, inv);
            attention_detail::attention_gemm<T>(false, true, rows, width, p.dv, ga, ldg, p.v.row(b, 0), p.v.row_stride, T(0),
                                      dpw, ldw);
          }
          for (index_t r = 0; r < rows; ++r) {
            T const* pr = pw + r * ldw;
            T* dr = dpw + r * ldw;
            index_t const l = len[r];
            T const delta = lane_fold<T>(
                l, T(0), [pr, dr](index_t j) { return pr[j] * dr[j]; }, [](T a, T c) { return a + c; });
            if (divisor.exact) {
              T const inverse = divisor.inverse;
              DIMTENSOR_SIMD
              for (index_t j = 0; j < l; ++j) dr[j] = pr[j] * (dr[j] - delta) * inverse;
            } else {
              T const scale = p.scale;
              DIMTENSOR_SIMD
              for (index_t j = 0; j < l; ++j) dr[j] = pr[j] * (dr[j] - delta) / scale;
            }
            std::fill(dr + l, dr + width, T(0));
          }
          if (tiled) {
            attention_detail::attention_backward_products_tiled(p, b, qa, lda, ga, ldg, rows, width, len, pw, dpw, ldw,
                                                      dqrows.data(), dkrows.data(), dvrows.data());
          } else {
            attention_detail::attention_gemm<T>(false, false, rows, p.d, width, dpw, ldw, p.k.row(b, 0), p.k.row_stride, T(0),
                                      dq_rows, lddq);
            attention_detail::attention_gemm<T>(true, false, width, p.d, rows, dpw, ldw, qa, lda, T(1), dk.row(b, 0),
                                      dk.row_stride);
            attention_detail::attention_gemm<T>(true, false, width, p.dv, rows, pw, ldw, ga, ldg, T(1), dv.row(b, 0),
                                      dv.row_stride);
          }
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
        if (copied) {
          for (index_t r = 0; r < rows; ++r) {
            std::copy(dq_rows + r * lddq, dq_rows + r * lddq + p.d, dq.row(b, idx[r]));
          }
        }
      }
    }
  });
}

}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu
