// The collectives' cases, each against a computation by hand, written once
// for every world: `run(comm)` makes the calls on one rank and keeps what
// it got, `check(got, rank, ranks)` asserts it.  The thread world's test
// (unit/dist/threads_world_test.cpp) runs every rank and then checks each
// (Catch2's assertions are not thread-safe); the MPI test
// (tests/dist/mpi_test.cpp) runs and checks its own rank.
#pragma once

#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/dist.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/optim.hpp>

namespace dist_cases {

namespace dt = dimtensor;
namespace dist = dimtensor::dist;
using dt::index_t;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Row);
DIMTENSOR_DIM(Col);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);

// The elements of a tensor, row-major.
template <class X>
std::vector<double> elements(X const& x) {
  auto const c = x.contiguous();
  std::vector<double> out(static_cast<std::size_t>(c.size()));
  for (index_t i = 0; i < c.size(); ++i) out[static_cast<std::size_t>(i)] = static_cast<double>(c.data()[i]);
  return out;
}

// A [Row=3, Col=2] tensor whose element i on rank r is 10 r + i - 2.
inline dt::tensor<float, Row, Col> ramp(int r) {
  dt::tensor<float, Row, Col> x(Row(3), Col(2));
  for (index_t i = 0; i < 6; ++i) x.data()[i] = static_cast<float>(10 * r + i - 2);
  return x;
}

// ---------------------------------------------------------------------------
// all_reduce: sum, mean, max and min of floats, a sum of int64, or and and of bools.
struct reduce_result {
  std::array<std::vector<double>, 4> floats;
  std::vector<double> ints;
  std::vector<double> bools;
};

inline reduce_result run_reduce(dist::communicator const& comm) {
  reduce_result out;
  int const r = comm.rank();
  dist::reduce_op const ops[] = {dist::reduce_op::sum, dist::reduce_op::mean, dist::reduce_op::max,
                                 dist::reduce_op::min};
  for (std::size_t k = 0; k < 4; ++k) {
    auto x = ramp(r);
    out.floats[k] = elements(dist::all_reduce(x, comm, ops[k]));
  }
  dt::tensor<std::int64_t, Row> n{r, 1000000000000LL * r};
  out.ints = elements(dist::all_reduce(n, comm));
  dt::tensor<bool, Row> b_or{r == 1, r != 1};
  out.bools = elements(dist::all_reduce(b_or, comm, dist::reduce_op::max));
  dt::tensor<bool, Row> b_and{r == 1, r != 1};
  auto const a = elements(dist::all_reduce(b_and, comm, dist::reduce_op::min));
  out.bools.insert(out.bools.end(), a.begin(), a.end());
  return out;
}

inline void check_reduce(reduce_result const& got, int ranks) {
  for (int i = 0; i < 6; ++i) {
    // Rank r's element is 10 r + i - 2.
    double sum = 0;
    for (int r = 0; r < ranks; ++r) sum += 10 * r + i - 2;
    auto const k = static_cast<std::size_t>(i);
    CHECK(got.floats[0][k] == sum);
    CHECK(got.floats[1][k] == Approx(sum / ranks));
    CHECK(got.floats[2][k] == 10 * (ranks - 1) + i - 2);
    CHECK(got.floats[3][k] == i - 2);
  }
  double const rank_sum = ranks * (ranks - 1) / 2.0;
  CHECK(got.ints == std::vector<double>{rank_sum, 1e12 * rank_sum});
  // Rank 1 alone gives {true, false}, the others {false, true}: or {1, 1}, and {0, 0} (with 2 ranks or more).
  CHECK(got.bools == std::vector<double>{1, 1, 0, 0});
}

// ---------------------------------------------------------------------------
// broadcast from rank 1, all_gather<Row> of ranks with r + 1 rows,
// reduce_scatter<Row> of 2 r + 1 rows... of 5 rows.
struct move_result {
  std::vector<double> broadcasted;
  std::vector<double> gathered;
  std::array<index_t, 3> gathered_extents{};
  std::vector<double> scattered;
  index_t scattered_rows = 0;
};

inline move_result run_move(dist::communicator const& comm) {
  move_result out;
  int const r = comm.rank();
  auto x = ramp(r);
  out.broadcasted = elements(dist::broadcast(x, comm, 1));
  // Rank r has r + 1 rows: element [b, i, c] = 100 r + 10 b + 2 i + c.
  dt::tensor<float, Batch, Row, Col> mine(Batch(2), Row(r + 1), Col(2));
  for (index_t b = 0; b < 2; ++b) {
    for (index_t i = 0; i <= r; ++i) {
      for (index_t c = 0; c < 2; ++c) mine(Batch(b), Row(i), Col(c)) = static_cast<float>(100 * r + 10 * b + 2 * i + c);
    }
  }
  auto const all = dist::all_gather<Row>(mine, comm);
  out.gathered = elements(all);
  out.gathered_extents = all.extents();
  // [Batch=2, Row=5, Col=1], element [b, i] = r + 10 b + i.
  dt::tensor<double, Batch, Row, Col> full(Batch(2), Row(5), Col(1));
  for (index_t b = 0; b < 2; ++b) {
    for (index_t i = 0; i < 5; ++i) full(Batch(b), Row(i), Col(0)) = static_cast<double>(r + 10 * b + i);
  }
  auto const part = dist::reduce_scatter<Row>(full, comm);
  out.scattered = elements(part);
  out.scattered_rows = part.extent<Row>();
  return out;
}

inline void check_move(move_result const& got, int rank, int ranks) {
  CHECK(got.broadcasted == elements(ramp(1)));
  CHECK(got.gathered_extents == std::array<index_t, 3>{2, ranks * (ranks + 1) / 2, 2});
  std::vector<double> want;
  for (int b = 0; b < 2; ++b) {
    for (int from = 0; from < ranks; ++from) {
      for (int i = 0; i <= from; ++i) {
        for (int c = 0; c < 2; ++c) want.push_back(100 * from + 10 * b + 2 * i + c);
      }
    }
  }
  CHECK(got.gathered == want);
  // Rows of 5 over the ranks: 5 / p each, one more for the first 5 % p.
  auto const part = dist::rows_of(5, rank, ranks);
  CHECK(got.scattered_rows == static_cast<index_t>(part.size()));
  // The sum over the ranks of r + 10 b + i.
  double const rank_sum = ranks * (ranks - 1) / 2.0;
  std::vector<double> mine;
  for (index_t b = 0; b < 2; ++b) {
    for (auto i = static_cast<index_t>(part.begin); i < static_cast<index_t>(part.end); ++i) {
      mine.push_back(rank_sum + ranks * static_cast<double>(10 * b + i));
    }
  }
  CHECK(got.scattered == mine);
}

// ---------------------------------------------------------------------------
// Ranks that bring different tensors: every rank's message (2 ranks or more;
// rank 1 differs from the others).
template <class F>
std::string message_of(F const& f) {
  try {
    f();
  } catch (dt::error const& e) {
    return e.what();
  }
  return "";
}

inline std::vector<std::string> run_mismatches(dist::communicator const& comm) {
  bool const odd = comm.rank() == 1;
  std::vector<std::string> out;
  out.push_back(message_of([&] {
    dt::tensor<float, Row, Col> x(Row(2), Col(odd ? 4 : 3));
    dist::all_reduce(x, comm);
  }));
  out.push_back(message_of([&] {
    dt::tensor<float, Row, Col> x(Row(comm.rank() + 1), Col(odd ? 5 : 3));
    (void)dist::all_gather<Row>(x, comm);
  }));
  out.push_back(message_of([&] {
    if (odd) {
      dt::tensor<float, Row, In> x(Row(2), In(3));
      dist::broadcast(x, comm);
    } else {
      dt::tensor<float, Row, Col> x(Row(2), Col(3));
      dist::broadcast(x, comm);
    }
  }));
  out.push_back(message_of([&] {
    if (odd) {
      dt::tensor<double, Row> x(Row(2));
      dist::all_reduce(x, comm);
    } else {
      dt::tensor<float, Row> x(Row(2));
      dist::all_reduce(x, comm);
    }
  }));
  out.push_back(message_of([&] {
    dt::tensor<float, Row> x(Row(2));
    dist::all_reduce(x, comm, odd ? dist::reduce_op::max : dist::reduce_op::sum);
  }));
  out.push_back(message_of([&] {
    dt::tensor<float, Row> x(Row(2));
    dist::broadcast(x, comm, odd ? 1 : 0);
  }));
  out.push_back(message_of([&] {
    dt::tensor<float, Row> x(Row(2));
    if (odd) {
      comm.barrier();
    } else {
      dist::all_reduce(x, comm);
    }
  }));
  // Refused on each rank alone, before any collective.
  out.push_back(message_of([&] {
    dt::tensor<float, Row> x(Row(2));
    x.requires_grad_();
    dist::all_reduce(x, comm);
  }));
  out.push_back(message_of([&] {
    dt::tensor<std::int32_t, Row> x(Row(2));
    dist::all_reduce(x, comm, dist::reduce_op::mean);
  }));
  out.push_back(message_of([&] {
    dt::tensor<float, Row> x(Row(2));
    dist::broadcast(x, comm, comm.size());
  }));
  out.push_back(message_of([&] {
    dt::generator gen(1);  // the process-wide generator is not for threads
    dt::nn::linear<In, Out> layer(In(3), Out(odd ? 4 : 2), gen);
    dist::broadcast_parameters(layer, comm);
  }));
  out.push_back(message_of([&] {
    dt::tensor<float, Batch, Row> x(Batch(2 * comm.size() + 1), Row(2));
    (void)dist::shard<Batch>(x, comm);
  }));
  return out;
}

inline void check_mismatches(std::vector<std::string> const& got, int ranks) {
  REQUIRE(got.size() == 12);
  CHECK(got[0] == "all_reduce: the extent of Col differs between the ranks: rank 0 gives [Row=2, Col=3] but rank 1 "
                  "gives [Row=2, Col=4]");
  CHECK(got[1] == "all_gather<Row>: the extents other than Row must agree, and Col's differ: rank 0 gives [Row=1, "
                  "Col=3] but rank 1 gives [Row=2, Col=5]");
  CHECK(got[2] == "broadcast: the ranks' tensors have different dims: rank 0 gives [Row=2, Col=3] but rank 1 gives "
                  "[Row=2, In=3]");
  CHECK(got[3] == "all_reduce: rank 0 gives float elements but rank 1 gives double");
  CHECK(got[4] == "all_reduce: rank 0 asks for sum but rank 1 for max");
  CHECK(got[5] == "broadcast: rank 0 names root 0 but rank 1 names root 1");
  CHECK(got[6] == "dist: rank 0 called all_reduce where rank 1 called barrier: every rank makes the same "
                  "collectives in the same order");
  CHECK_THAT(got[7], Catch::StartsWith("all_reduce: the tensor [Row=2] requires grad, and collectives are not "
                                       "recorded by autograd"));
  CHECK(got[8] == "all_reduce: mean of int32 elements [Row=2]; use max or min, or convert the tensor first");
  CHECK(got[9] == "broadcast: the root is rank " + std::to_string(ranks) + ", but the group has ranks 0 to " +
                      std::to_string(ranks - 1));
  CHECK(got[10] == "broadcast_parameters: the ranks' models differ: parameter 0 is weight [Out=2, In=3] float on "
                   "rank 0 but weight [Out=4, In=3] float on rank 1 (every rank builds the same model, with the "
                   "same configuration)");
  std::string const p = std::to_string(ranks);
  std::string const n = std::to_string(2 * ranks + 1);
  CHECK(got[11] == "shard<Batch>: Batch=" + n + " does not split evenly over " + p + " ranks (" + n + " % " + p +
                       " = 1); give a multiple of " + p + ", or split::uneven");
}

// ---------------------------------------------------------------------------
// split: even and odd ranks, in reverse order of rank; each group's sum of ranks.
inline std::array<double, 3> run_split(dist::communicator const& comm) {
  int const r = comm.rank();
  dist::communicator const half = comm.split(r % 2, -r);
  dt::tensor<double, Row> x{static_cast<double>(r)};
  dist::all_reduce(x, half);
  return {static_cast<double>(half.rank()), static_cast<double>(half.size()), x.data()[0]};
}

inline void check_split(std::array<double, 3> const& got, int rank, int ranks) {
  double members = 0;
  double sum = 0;
  double before = 0;  // members of rank's color above it: they come first
  for (int r = rank % 2; r < ranks; r += 2) {
    members += 1;
    sum += r;
    if (r > rank) before += 1;
  }
  CHECK(got == std::array<double, 3>{before, members, sum});
}

// ---------------------------------------------------------------------------
// Sharding in the type: Batch cut over the data axis unevenly (7 rows), the
// reductions over it completed by all_reduce, the gather whole again, and a
// loss over the sharded batch back-propagated.
DIMTENSOR_AXIS(Data);

struct typed_result {
  index_t local_rows = 0;
  index_t global_rows = 0;
  std::vector<double> sum;
  std::vector<double> mean;
  std::vector<double> max;
  std::vector<double> min;
  std::vector<double> contracted;
  std::vector<double> gathered;
  double loss = 0;
};

// Row b of the batch: [b, 10 - b].
inline dt::tensor<double, Batch, Col> typed_batch() {
  dt::tensor<double, Batch, Col> x(Batch(7), Col(2));
  for (index_t b = 0; b < 7; ++b) {
    x(Batch(b), Col(0)) = static_cast<double>(b);
    x(Batch(b), Col(1)) = static_cast<double>(10 - b);
  }
  return x;
}

inline typed_result run_typed(dist::communicator const& comm) {
  typed_result out;
  auto const mine = dist::shard<Batch, Data>(typed_batch(), comm, dist::split::uneven);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(mine)>,
                               dt::tensor<double, Batch::sharded<Data>, Col>>);
  out.local_rows = mine.extent<Batch>();
  out.global_rows = dist::global_extent<Batch>(mine, comm);
  out.sum = elements(dist::all_reduce(dt::sum<Batch>(mine), comm));
  out.mean = elements(dist::all_reduce(dt::mean<Batch>(mine), comm));
  out.max = elements(dist::all_reduce(dt::max<Batch>(mine), comm));
  out.min = elements(dist::all_reduce(dt::min<Batch>(mine), comm));
  out.contracted = elements(dist::all_reduce(dt::contract<Batch>(mine, mine), comm));  // [Col]: sum of squares
  auto const whole = dist::all_gather<Batch>(mine, comm);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(whole)>, dt::tensor<double, Batch, Col>>);
  out.gathered = elements(whole);
  // A loss over the sharded batch, w · x summed: its gradient over w is the
  // sum of the rows, partial on each rank.
  dt::tensor<double, Col> w{1.0, 1.0};
  w.requires_grad_();
  auto const loss = dt::sum(mine * w);
  static_assert(dt::is_partial_v<std::remove_cvref_t<decltype(loss)>>);
  loss.backward();
  dist::all_reduce_gradients(dt::optim::parameter_list(w), comm);
  out.loss = dist::all_reduce(loss, comm).item();
  auto const g = elements(w.grad());
  out.contracted.insert(out.contracted.end(), g.begin(), g.end());
  return out;
}

inline void check_typed(typed_result const& got, int rank, int ranks) {
  CHECK(got.local_rows == static_cast<index_t>(dist::rows_of(7, rank, ranks).size()));
  CHECK(got.global_rows == 7);
  // Column 0 holds 0..6, column 1 holds 10..4.
  CHECK(got.sum == std::vector<double>{21, 49});
  CHECK(got.mean[0] == Approx(3));
  CHECK(got.mean[1] == Approx(7));
  CHECK(got.max == std::vector<double>{6, 10});
  CHECK(got.min == std::vector<double>{0, 4});
  // sum of squares of each column, then the gradient of sum(x · w): the column sums
  CHECK(got.contracted == std::vector<double>{91, 371, 21, 49});
  CHECK(got.gathered == elements(typed_batch()));
  CHECK(got.loss == 70);
}

// ---------------------------------------------------------------------------
// Data parallel: one layer, a summed loss (the squares of its outputs) over
// 6 rows; each rank takes its rows, and after all_reduce_gradients holds
// the gradient of the whole batch, which one process computes here too.
struct tiny_model : dt::nn::linear<In, Out> {
  // Every rank and the reference draw the same start from their own generator
  // (the process-wide one is not for threads).
  explicit tiny_model(dt::generator gen = dt::generator(1)) : dt::nn::linear<In, Out>(In(3), Out(2), gen) {}
};

inline dt::tensor<float, Batch, In> batch_rows(index_t begin, index_t end) {
  dt::tensor<float, Batch, In> x(Batch(end - begin), In(3));
  for (index_t b = begin; b < end; ++b) {
    for (index_t i = 0; i < 3; ++i) x(Batch(b - begin), In(i)) = static_cast<float>(std::sin(0.7 * b + 1.3 * i));
  }
  return x;
}

inline void backward_on(tiny_model& m, dt::tensor<float, Batch, In> const& x) {
  auto const y = m(x);
  dt::sum(y * y).backward();
}

struct gradient_result {
  std::vector<double> weight;        // after broadcast_parameters
  std::string refused;               // adam::step() on partial gradients
  std::vector<double> weight_grad;   // summed
  std::vector<double> bias_grad;
  std::vector<double> mean_bias_grad;
  bool partial_after = true;
  std::string refused_after;         // adam::step() on whole gradients: ""
};

// rank 0's model starts from @p start (the reference's weights and bias).
inline gradient_result run_gradients(dist::communicator const& comm, std::vector<double> const& start) {
  gradient_result out;
  tiny_model m;
  if (comm.rank() == 0) {
    std::copy(start.begin(), start.begin() + 6, m.weight.data());
    std::copy(start.begin() + 6, start.end(), m.bias.data());
  }
  dist::broadcast_parameters(m, comm);
  out.weight = elements(m.weight);
  auto const part = dist::rows_of(6, comm.rank(), comm.size());
  auto const rows = batch_rows(static_cast<index_t>(part.begin), static_cast<index_t>(part.end));
  if (!part.empty()) backward_on(m, rows);
  dt::optim::adam opt(m, 0.1);
  out.refused = message_of([&] { opt.step(); });
  dist::all_reduce_gradients(m, comm, {dist::reduce_op::sum, 8});  // buckets of one gradient each
  out.partial_after = dt::optim::parameter_list(m).entries()[0].grad_partial();
  out.weight_grad = elements(m.weight.grad());
  out.bias_grad = elements(m.bias.grad());
  opt.zero_grad();
  if (!part.empty()) backward_on(m, rows);
  dist::all_reduce_gradients(m, comm, {dist::reduce_op::mean, std::size_t{1} << 20});
  out.mean_bias_grad = elements(m.bias.grad());
  out.refused_after = message_of([&] { opt.step(); });
  return out;
}

// The reference: one process, all 6 rows.  Returns the start (weight then
// bias) and fills the gradients.
inline std::vector<double> reference_gradients(std::vector<double>& weight_grad, std::vector<double>& bias_grad) {
  tiny_model m;
  std::vector<double> start = elements(m.weight);
  auto const b = elements(m.bias);
  start.insert(start.end(), b.begin(), b.end());
  backward_on(m, batch_rows(0, 6));
  weight_grad = elements(m.weight.grad());
  bias_grad = elements(m.bias.grad());
  return start;
}

inline void check_gradients(gradient_result const& got, std::vector<double> const& start,
                            std::vector<double> const& weight_grad, std::vector<double> const& bias_grad, int ranks) {
  CHECK(got.weight == std::vector<double>(start.begin(), start.begin() + 6));
  CHECK(got.refused ==
        "adam::step(): the gradient of weight [Out=2, In=3] is partial, this rank's share of a data-parallel batch; "
        "call dist::all_reduce_gradients(model, comm) after backward and before adam::step()");
  CHECK_FALSE(got.partial_after);
  REQUIRE(got.weight_grad.size() == weight_grad.size());
  REQUIRE(got.bias_grad.size() == bias_grad.size());
  for (std::size_t i = 0; i < weight_grad.size(); ++i) CHECK(got.weight_grad[i] == Approx(weight_grad[i]).epsilon(1e-5));
  for (std::size_t i = 0; i < bias_grad.size(); ++i) CHECK(got.bias_grad[i] == Approx(bias_grad[i]).epsilon(1e-5));
  REQUIRE(got.mean_bias_grad.size() == bias_grad.size());
  for (std::size_t i = 0; i < bias_grad.size(); ++i) {
    CHECK(got.mean_bias_grad[i] == Approx(bias_grad[i] / ranks).epsilon(1e-5));
  }
  CHECK(got.refused_after.empty());
}

// ---------------------------------------------------------------------------
// Overlap: three layers, a bucket per parameter, reduced by data_parallel
// during the backward pass, against all_reduce_gradients after it (the
// same sums: the same bits); then two micro-batches, the first under
// no_sync, against the reduction of their accumulated gradient.
DIMTENSOR_DIM(Hidden);

struct mlp {
  dt::nn::linear<In, Hidden> first;
  dt::nn::linear<Hidden, dt::prime<Hidden>> second;
  dt::nn::linear<dt::prime<Hidden>, Out> third;
  explicit mlp(dt::generator gen = dt::generator(3))
      : first(In(3), Hidden(5), gen), second(Hidden(5), dt::prime<Hidden>(4), gen), third(dt::prime<Hidden>(4), Out(2), gen) {}
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    first.for_each_parameter(f, prefix + "first.");
    second.for_each_parameter(f, prefix + "second.");
    third.for_each_parameter(f, prefix + "third.");
  }
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    first.for_each_parameter(f, prefix + "first.");
    second.for_each_parameter(f, prefix + "second.");
    third.for_each_parameter(f, prefix + "third.");
  }
  void backward_on(dt::tensor<float, Batch, In> const& x) {
    auto const y = third(dt::tanh(second(dt::tanh(first(x)))));
    dt::sum(y * y).backward();
  }
};

inline std::vector<double> gradients_of(dt::optim::parameter_list const& params) {
  std::vector<double> out;
  for (auto const& p : params) {
    std::vector<float> g(static_cast<std::size_t>(p.size()));
    p.copy_to_host(g.data(), p.grad_data());
    out.insert(out.end(), g.begin(), g.end());
  }
  return out;
}

struct overlap_result {
  std::size_t buckets = 0;
  std::size_t sent_during_backward = 0;
  std::vector<double> overlapped;
  std::vector<double> after;
  std::string refused_before_wait;
  std::vector<double> accumulated;
  std::vector<double> accumulated_after;
};

inline overlap_result run_overlap(dist::communicator const& comm) {
  overlap_result out;
  auto const part = dist::rows_of(6, comm.rank(), comm.size());
  auto const rows = batch_rows(static_cast<index_t>(part.begin), static_cast<index_t>(part.end));
  mlp synced;
  dist::broadcast_parameters(synced, comm);
  synced.backward_on(rows);
  dist::all_reduce_gradients(synced, comm);
  out.after = gradients_of(synced);

  mlp overlapped;
  {
    dist::data_parallel dp(overlapped, comm, {dist::reduce_op::sum, 16});
    out.buckets = dp.bucket_count();
    dt::optim::sgd opt(overlapped, 0.1);
    overlapped.backward_on(rows);
    out.sent_during_backward = dp.buckets_sent_during_backward();
    out.refused_before_wait = message_of([&] { opt.step(); });
    dp.wait();
    out.overlapped = gradients_of(overlapped);

    // Two micro-batches: their rows' first and second halves.
    dt::optim::parameter_list(overlapped).zero_grad();
    auto const half = (part.end - part.begin) / 2;
    {
      auto const quiet = dp.no_sync();
      overlapped.backward_on(batch_rows(static_cast<index_t>(part.begin), static_cast<index_t>(part.begin + half)));
    }
    overlapped.backward_on(batch_rows(static_cast<index_t>(part.begin + half), static_cast<index_t>(part.end)));
    dp.wait();
    out.accumulated = gradients_of(overlapped);
  }
  // The same accumulation reduced after both passes.
  dt::optim::parameter_list(synced).zero_grad();
  auto const half = (part.end - part.begin) / 2;
  synced.backward_on(batch_rows(static_cast<index_t>(part.begin), static_cast<index_t>(part.begin + half)));
  synced.backward_on(batch_rows(static_cast<index_t>(part.begin + half), static_cast<index_t>(part.end)));
  dist::all_reduce_gradients(synced, comm);
  out.accumulated_after = gradients_of(synced);
  return out;
}

inline void check_overlap(overlap_result const& got) {
  CHECK(got.buckets == 6);
  // The buckets of the last layers leave while the first layers' gradients are computed.
  CHECK(got.sent_during_backward >= 4);
  CHECK(got.overlapped == got.after);
  CHECK_THAT(got.refused_before_wait, Catch::StartsWith("sgd::step(): the gradient of first.weight"));
  CHECK(got.accumulated == got.accumulated_after);
}

}  // namespace dist_cases
