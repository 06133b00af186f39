// The operations on dimtensor::cuda against the CPU backend: the same inputs
// (drawn on the host, moved with to<cuda>), the same call on both backends,
// results within 1e-5 (absolute plus relative; integers exactly), and the
// d2l goldens of tests/parity/data for masked_softmax and sequence_mask.
//
// Float contractions here sum over at most 64 products, where float rounding
// (cuBLAS and the CPU's BLAS add in different orders) stays well inside the
// tolerance; the large contraction is in double.
#include "support.hpp"

#include <cstdint>
#include <optional>
#include <string>

#include <dimtensor/io/npy.hpp>

#if DIMTENSOR_HAS_NCCL
#include <vector>

#include <dimtensor/dist.hpp>
#include <dimtensor/dist/nccl.hpp>
#endif

#ifndef DIMTENSOR_PARITY_DATA_DIR
#error "DIMTENSOR_PARITY_DATA_DIR is not defined: build the CUDA tests with tests/cuda/CMakeLists.txt"
#endif

namespace cuda_ops_test {

namespace dt = dimtensor;
using cuda_test::check_same;
using cuda_test::device;
using cuda_test::on_device;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Source);

// ---------------------------------------------------------------------------
// Elementwise expressions
// ---------------------------------------------------------------------------

// One fused expression over [Batch, Queries, Hidden] with operands broadcast
// from [Hidden] and from [Queries, Hidden::fixed<1>] (an unsqueeze), unary
// and binary functions, a comparison and where.
template <class A, class B, class Q>
auto fused(A const& a, B const& b, Q const& q) {
  auto const column = dt::unsqueeze<Hidden, 1>(q);  // [Queries, Hidden(1)]
  return dt::tanh(a + b) * dt::exp(-dt::square(column)) + 0.5f * dt::sigmoid(a) -
         dt::where(a > b, dt::maximum(a, column), dt::minimum(b, 2.0f)) / (1.0f + dt::abs(b));
}

TEST_CASE("a fused elementwise expression with broadcasting", "[cuda][elementwise]") {
  dt::generator gen(1);
  auto const a = dt::randn<float>(gen, Batch(3), Queries(5), Hidden(7));
  auto const b = dt::randn<float>(gen, Hidden(7));
  auto const q = dt::randn<float>(gen, Queries(5));
  auto const da = on_device(a);
  auto const db = on_device(b);
  auto const dq = on_device(q);
  check_same("fused expression", dt::eval(fused(da, db, dq)), dt::eval(fused(a, b, q)));

  SECTION("a large tensor, a transposed operand and casts") {
    auto const big = dt::uniform<float>(gen, -4, 4, Batch(37), Queries(129), Hidden(67));
    auto const dbig = on_device(big);
    auto const t = dt::transpose<Queries, Hidden>(dt::randn<float>(gen, Batch(37), Hidden(67), Queries(129)));
    auto const dt_ = dt::transpose<Queries, Hidden>(on_device(dt::eval(dt::transpose<Queries, Hidden>(t))));
    check_same("big * transposed", dt::eval(dt::sin(dbig) * dt_ + dt::pow(dt::abs(dbig), 0.8f)),
               dt::eval(dt::sin(big) * t + dt::pow(dt::abs(big), 0.8f)));
    check_same("cast to int64", dt::eval(dt::cast<std::int64_t>(dbig * 10.0f)),
               dt::eval(dt::cast<std::int64_t>(big * 10.0f)));
    check_same("comparison", dt::eval(dbig >= 0.5f), dt::eval(big >= 0.5f));
  }
}

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

TEST_CASE("sum, mean, max and argmax along each dim and in full", "[cuda][reduce]") {
  dt::generator gen(2);
  auto const x = dt::randn<float>(gen, Batch(4), Queries(33), Hidden(65));
  auto const dx = on_device(x);
  check_same("sum<Batch>", dt::sum<Batch>(dx), dt::sum<Batch>(x));
  check_same("sum<Queries>", dt::sum<Queries>(dx), dt::sum<Queries>(x));
  check_same("sum<Hidden> keep_dim", dt::sum<Hidden>(dx, dt::keep_dim), dt::sum<Hidden>(x, dt::keep_dim));
  check_same("mean<Queries>", dt::mean<Queries>(dx), dt::mean<Queries>(x));
  check_same("mean<Hidden>", dt::mean<Hidden>(dx), dt::mean<Hidden>(x));
  check_same("max<Batch>", dt::max<Batch>(dx), dt::max<Batch>(x));
  check_same("max<Hidden>", dt::max<Hidden>(dx), dt::max<Hidden>(x));
  check_same("argmax<Queries>", dt::argmax<Queries>(dx), dt::argmax<Queries>(x));
  check_same("argmax<Hidden>", dt::argmax<Hidden>(dx), dt::argmax<Hidden>(x));
  check_same("sum of all", dt::sum(dx), dt::sum(x));
  check_same("mean of all", dt::mean(dx), dt::mean(x));
  check_same("sum of an expression", dt::sum<Queries>(dt::exp(dx) - dx), dt::sum<Queries>(dt::exp(x) - x));

  SECTION("ties: argmax takes the first maximum on both backends") {
    auto const ties = dt::eval(dt::cast<float>(dt::randint<std::int64_t>(gen, 0, 3, Batch(8), Queries(40))));
    auto const dties = on_device(ties);
    check_same("argmax<Queries> with ties", dt::argmax<Queries>(dties), dt::argmax<Queries>(ties));
    check_same("argmax<Batch> with ties", dt::argmax<Batch>(dties), dt::argmax<Batch>(ties));
  }
  SECTION("integers sum exactly") {
    auto const n = dt::randint<std::int64_t>(gen, -1000, 1000, Batch(6), Hidden(300));
    check_same("int64 sum<Hidden>", dt::sum<Hidden>(on_device(n)), dt::sum<Hidden>(n));
  }
  SECTION("a long row: 100000 elements") {
    auto const row = dt::randn<float>(gen, Hidden(100000));
    check_same("sum<Hidden>", dt::sum<Hidden>(on_device(row)), dt::sum<Hidden>(row));
    check_same("max<Hidden>", dt::max<Hidden>(on_device(row)), dt::max<Hidden>(row));
  }
}

// ---------------------------------------------------------------------------
// Softmax, masked softmax, sequence_mask
// ---------------------------------------------------------------------------

TEST_CASE("softmax and log_softmax along the last and a middle dim", "[cuda][softmax]") {
  dt::generator gen(3);
  auto const x = dt::randn<float>(gen, Batch(3), Queries(17), KVPairs(70));
  auto const dx = on_device(x);
  check_same("softmax<KVPairs>", dt::softmax<KVPairs>(dx), dt::softmax<KVPairs>(x));
  check_same("softmax<Queries>", dt::softmax<Queries>(dx), dt::softmax<Queries>(x));
  check_same("log_softmax<KVPairs>", dt::log_softmax<KVPairs>(dx), dt::log_softmax<KVPairs>(x));
  check_same("log_softmax<Batch>", dt::log_softmax<Batch>(dx), dt::log_softmax<Batch>(x));
  auto const large = dt::eval(x * 1000.0f);
  check_same("softmax of large logits", dt::softmax<KVPairs>(on_device(large)), dt::softmax<KVPairs>(large));
  check_same("log_softmax of large logits", dt::log_softmax<KVPairs>(on_device(large)),
             dt::log_softmax<KVPairs>(large));
  check_same("softmax of an expression", dt::softmax<KVPairs>(dt::tanh(dx) * 3.0f),
             dt::softmax<KVPairs>(dt::tanh(x) * 3.0f));
}

TEST_CASE("masked_softmax with 1-D and 2-D valid_lens, and none", "[cuda][masked_softmax]") {
  dt::generator gen(4);
  auto const x = dt::randn<float>(gen, Batch(5), Queries(6), KVPairs(9));
  auto const dx = on_device(x);
  // Lengths 0 to 9: 0 masks a whole row (d2l: uniform weights), 9 none of it.
  auto lens1 = dt::randint<std::int64_t>(gen, 0, 10, Batch(5));
  auto const lens2 = dt::randint<std::int64_t>(gen, 0, 10, Batch(5), Queries(6));
  check_same("1-D valid_lens", dt::masked_softmax<KVPairs>(dx, on_device(lens1)), dt::masked_softmax<KVPairs>(x, lens1));
  check_same("2-D valid_lens", dt::masked_softmax<KVPairs>(dx, on_device(lens2)), dt::masked_softmax<KVPairs>(x, lens2));
  check_same("no valid_lens", dt::masked_softmax<KVPairs>(dx), dt::masked_softmax<KVPairs>(x));
  check_same("valid_lens=None", dt::masked_softmax<KVPairs>(dx, std::nullopt),
             dt::masked_softmax<KVPairs>(x, std::nullopt));
  auto const lens32 = dt::eval(dt::cast<std::int32_t>(lens2));
  check_same("int32 valid_lens", dt::masked_softmax<KVPairs>(dx, on_device(lens32)),
             dt::masked_softmax<KVPairs>(x, lens32));
  auto const qlens = dt::randint<std::int64_t>(gen, 0, 7, Batch(5));
  check_same("over a middle dim", dt::masked_softmax<Queries>(dx, on_device(qlens)),
             dt::masked_softmax<Queries>(x, qlens));
}

TEST_CASE("sequence_mask", "[cuda][sequence_mask]") {
  dt::generator gen(5);
  auto const x = dt::randn<float>(gen, Batch(7), Steps(12));
  auto const lens = dt::randint<std::int64_t>(gen, 0, 13, Batch(7));
  check_same("d2l's form, value 0", dt::sequence_mask(on_device(x), on_device(lens)), dt::sequence_mask(x, lens));
  check_same("value -1e6", dt::sequence_mask(on_device(x), on_device(lens), -1e6f), dt::sequence_mask(x, lens, -1e6f));
  auto const x3 = dt::randn<float>(gen, Batch(7), Steps(12), Hidden(3));
  check_same("over a middle dim", dt::sequence_mask<Steps>(on_device(x3), on_device(lens), -1.0f),
             dt::sequence_mask<Steps>(x3, lens, -1.0f));
}

// ---------------------------------------------------------------------------
// Contractions
// ---------------------------------------------------------------------------

TEST_CASE("bmm and contract, on contiguous operands and transposed views", "[cuda][contract]") {
  dt::generator gen(6);
  auto const q = dt::randn<float>(gen, Batch(3), Queries(20), Hidden(16));
  auto const k = dt::randn<float>(gen, Batch(3), KVPairs(30), Hidden(16));
  auto const v = dt::randn<float>(gen, Batch(3), KVPairs(30), Steps(11));
  auto const dq = on_device(q);
  auto const dk = on_device(k);
  auto const dv = on_device(v);
  // Scores q · kᵀ: k read through a transposed view.
  check_same("bmm(q, transpose(k))", dt::bmm(dq, dt::transpose<KVPairs, Hidden>(dk)),
             dt::bmm(q, dt::transpose<KVPairs, Hidden>(k)));
  check_same("contract<Hidden>(q, k)", dt::contract<Hidden>(dq, dk), dt::contract<Hidden>(q, k));
  auto const scores = dt::eval(dt::contract<Hidden>(q, k));  // [Batch, Queries, KVPairs]
  check_same("bmm(scores, v)", dt::bmm(on_device(scores), dv), dt::bmm(scores, v));
  check_same("contract<KVPairs>(scores, v)", dt::contract<KVPairs>(on_device(scores), dv),
             dt::contract<KVPairs>(scores, v));
  // Both operands transposed views, and the output's rows in the other order.
  auto const qt = dt::eval(dt::transpose<Queries, Hidden>(q));  // [Batch, Hidden, Queries]
  auto const kt = dt::eval(dt::transpose<KVPairs, Hidden>(k));  // [Batch, Hidden, KVPairs]
  check_same("bmm(transpose(qt), kt)", dt::bmm(dt::transpose<Hidden, Queries>(on_device(qt)), on_device(kt)),
             dt::bmm(dt::transpose<Hidden, Queries>(qt), kt));
  check_same("contract of a sliced view", dt::contract<Hidden>(dt::slice<Hidden>(dq, 3, 13), dt::slice<Hidden>(dk, 3, 13)),
             dt::contract<Hidden>(dt::slice<Hidden>(q, 3, 13), dt::slice<Hidden>(k, 3, 13)));
  check_same("contract of a lazy expression", dt::contract<Hidden>(dt::tanh(dq), dk),
             dt::contract<Hidden>(dt::tanh(q), k));

  SECTION("a large contraction in double") {
    auto const a = dt::randn<double>(gen, Batch(2), Queries(129), Hidden(257));
    auto const b = dt::randn<double>(gen, Batch(2), Hidden(257), Steps(65));
    check_same("bmm [2, 129, 257] x [2, 257, 65]", dt::bmm(on_device(a), on_device(b)), dt::bmm(a, b));
  }
}

// ---------------------------------------------------------------------------
// index_select
// ---------------------------------------------------------------------------

TEST_CASE("index_select, and its gradient with repeated indices", "[cuda][index_select]") {
  dt::generator gen(7);
  auto const table = dt::randn<float>(gen, Source(10), Hidden(6));
  auto const index = dt::randint<std::int64_t>(gen, 0, 10, Batch(3), Steps(8));  // repeats certain
  auto const dtable = on_device(table);
  auto const dindex = on_device(index);
  check_same("index_select<Source>", dt::index_select<Source>(dtable, dindex), dt::index_select<Source>(table, index));
  auto const ids32 = dt::eval(dt::cast<std::int32_t>(index));
  check_same("int32 indices", dt::index_select<Source>(dtable, on_device(ids32)),
             dt::index_select<Source>(table, ids32));

  auto const w = dt::randn<float>(gen, Batch(3), Steps(8), Hidden(6));
  auto cpu_table = table.clone();
  auto dev_table = on_device(table);
  cpu_table.requires_grad_();
  dev_table.requires_grad_();
  dt::sum(dt::index_select<Source>(cpu_table, index) * w).backward();
  dt::sum(dt::index_select<Source>(dev_table, dindex) * on_device(w)).backward();
  check_same("gradient of the table", dev_table.grad(), cpu_table.grad());
}

// ---------------------------------------------------------------------------
// d2l goldens (tests/parity/data), on the device
// ---------------------------------------------------------------------------

template <class Tensor>
Tensor golden(std::string const& name) {
  return dt::load_npy<Tensor>(std::string(DIMTENSOR_PARITY_DATA_DIR) + "/" + name + ".npy");
}

using scores_t = dt::basic_tensor<dt::cpu, float, Batch, Queries, KVPairs>;
using lens1_t = dt::basic_tensor<dt::cpu, std::int64_t, Batch>;
using lens2_t = dt::basic_tensor<dt::cpu, std::int64_t, Batch, Queries>;

TEST_CASE("masked_softmax and sequence_mask match d2l's goldens", "[cuda][masked_softmax][parity]") {
  SECTION("the chapter's demos") {
    auto const x1 = golden<scores_t>("masked_softmax_d2l_1d_X");
    check_same("d2l 1-D", dt::masked_softmax<KVPairs>(on_device(x1), on_device(golden<lens1_t>("masked_softmax_d2l_1d_valid_lens"))),
               golden<scores_t>("masked_softmax_d2l_1d_out"));
    auto const x2 = golden<scores_t>("masked_softmax_d2l_2d_X");
    check_same("d2l 2-D", dt::masked_softmax<KVPairs>(on_device(x2), on_device(golden<lens2_t>("masked_softmax_d2l_2d_valid_lens"))),
               golden<scores_t>("masked_softmax_d2l_2d_out"));
  }
  SECTION("random scores, lengths 0 to 9, and large logits") {
    auto const x = on_device(golden<scores_t>("masked_softmax_X"));
    auto const vl1 = on_device(golden<lens1_t>("masked_softmax_1d_valid_lens"));
    auto const vl2 = on_device(golden<lens2_t>("masked_softmax_2d_valid_lens"));
    check_same("random 1-D", dt::masked_softmax<KVPairs>(x, vl1), golden<scores_t>("masked_softmax_1d_out"));
    check_same("random 2-D", dt::masked_softmax<KVPairs>(x, vl2), golden<scores_t>("masked_softmax_2d_out"));
    check_same("random none", dt::masked_softmax<KVPairs>(x), golden<scores_t>("masked_softmax_none_out"));
    auto const large = on_device(golden<scores_t>("masked_softmax_large_X"));
    check_same("large 1-D", dt::masked_softmax<KVPairs>(large, vl1), golden<scores_t>("masked_softmax_large_1d_out"));
    check_same("large 2-D", dt::masked_softmax<KVPairs>(large, vl2), golden<scores_t>("masked_softmax_large_2d_out"));
  }
  SECTION("sequence_mask") {
    using x_t = dt::basic_tensor<dt::cpu, float, Batch, Steps>;
    check_same("sequence_mask d2l",
               dt::sequence_mask(on_device(golden<x_t>("sequence_mask_d2l_X")),
                                 on_device(golden<lens1_t>("sequence_mask_d2l_valid_len"))),
               golden<x_t>("sequence_mask_d2l_out"), 0.0);
    check_same("sequence_mask random",
               dt::sequence_mask<Steps>(on_device(golden<x_t>("sequence_mask_random_X")),
                                        on_device(golden<lens1_t>("sequence_mask_random_valid_len")), -1.0f),
               golden<x_t>("sequence_mask_random_out"), 0.0);
  }
}

// ---------------------------------------------------------------------------
// NCCL (dist::nccl_communicator) with one rank: NCCL refuses two ranks on
// one GPU, so a machine with one GPU checks one rank, whose thread-world
// control carries NCCL's id.  A sum, a mean and a max over one rank leave
// the tensor as it is; a broadcast from rank 0 too; the shape check and the
// all_gather (through the host) run over the control.
// ---------------------------------------------------------------------------
#if DIMTENSOR_HAS_NCCL
TEST_CASE("NCCL: all_reduce and broadcast of device tensors on one rank", "[cuda][nccl]") {
  namespace dist = dimtensor::dist;
  dt::generator gen(5);
  auto const host = dt::randn<float>(gen, Batch(3), Hidden(4));
  std::string transport;
  std::vector<std::string> failures;
  dist::run_threads(1, [&](dist::communicator control) {
    dist::communicator const comm = dist::nccl_communicator(control, 0);
    transport = std::string(comm.transport_name());
    auto x = on_device(host);
    for (auto op : {dist::reduce_op::sum, dist::reduce_op::mean, dist::reduce_op::max}) {
      dist::all_reduce(x, comm, op);
    }
    dist::broadcast(x, comm, 0);
    auto const all = dist::all_gather<Batch>(x, comm);
    auto const back = dt::to<dt::cpu>(all);
    for (dt::index_t i = 0; i < host.size(); ++i) {
      if (back.data()[i] != host.data()[i]) failures.push_back("element " + std::to_string(i));
    }
  });
  CHECK(transport == "nccl");
  CHECK(failures.empty());
}
#endif

}  // namespace cuda_ops_test
