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
/// Tiling: the queries of a batch entry are taken a block of rows at a
/// time (attention_block_rows: 64, or 32 to 256 when an entry's rows share
/// one length).  A block's scores over the keys it attends to (up to its longest
/// valid length: masked keys are neither multiplied nor exponentiated) are
/// one BLAS product into a per-thread buffer of block × KV elements, turned
/// into softmax numerators in place (a sweep for the maximum, one for the
/// vectorized exp and the sum), multiplied by the values into the output
/// rows, which are then divided by the sums.  With 2-D lengths an entry's
/// rows are taken longest first (copied into the block and back on the
/// BLAS path; read in place on the register tiles below), so that a
/// block's rows have lengths alike and its products stop near each row's
/// own length.  Extra memory is the per-thread buffer, two numbers per
/// query row (the row's maximum and 1 / sum, kept for the backward pass)
/// and, on the register tiles, a packed copy of the keys (and, backward,
/// of the values): linear in the lengths.  Threads
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
///
/// In float, where the values' features are whole vectors of 16 (and, for
/// the backward pass, the queries' too), the products are not BLAS calls
/// but register tiles of this file (6 rows x 64 columns, sums along the
/// inner dimension kept in 24 vector registers, simd.hpp): each entry's
/// keys (and values) are packed once into [features][16 keys] panels,
/// query and output rows are read and written in place through row
/// pointers (2-D lengths' rows taken longest first are not copied), each
/// strip of 6 rows stops at its own longest length, and the softmax rows
/// run sixteen lanes at a time.  Nothing is packed per block and nothing
/// zeroed first, which is what the BLAS calls spent a fifth of their time
/// on at these sizes (k = 64).
///
/// The engines are in backends/cpu/attention/, one file each, included
/// here in order: plan.hpp (block sizes, row order, which path each pass
/// takes: `plan_attention`), rows.hpp (small products, the softmax rows),
/// tiles.hpp (the register tiles), online.hpp (the chunked path),
/// forward.hpp, backward.hpp and additive.hpp (additive attention's
/// scores).  Include this file, not those: the kernels are compiled under
/// each level's target pragma (src/cpu/kernels.inl).

/// Defined once the header is included (src/cpu/kernels.inl checks the order).
#define DIMTENSOR_BACKENDS_CPU_ATTENTION_HPP 1

#include <dimtensor/backends/cpu/attention/plan.hpp>
#include <dimtensor/backends/cpu/attention/rows.hpp>
#include <dimtensor/backends/cpu/attention/tiles.hpp>
#include <dimtensor/backends/cpu/attention/online.hpp>
#include <dimtensor/backends/cpu/attention/forward.hpp>
#include <dimtensor/backends/cpu/attention/backward.hpp>
#include <dimtensor/backends/cpu/attention/additive.hpp>
