// The equivalence that data parallelism rests on: k Adam steps of d2l's
// Bahdanau seq2seq and of its Transformer on the world's ranks, each with
// its rows of every batch, against one process with the whole batches
// (both here, on every rank: the one-process run on a communicator of this
// rank alone).  d2l's summed loss, gradients clipped to the global norm 1
// after the reduction, dropout 0 (each rank draws its own masks, so with
// dropout the runs would differ by design).  The parameters must agree
// within 1e-5 in double (1e-4 in float, see below); the largest difference
// is printed by rank 0.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <dimtensor/dist.hpp>

#include "../../examples/distributed_translation/training.hpp"
#include "world.hpp"

namespace equivalence_test {

namespace dt = dimtensor;
namespace dist = dimtensor::dist;
namespace dtr = distributed_translation;

std::vector<double> parameters_of(dt::optim::parameter_list const& params) {
  std::vector<double> out;
  for (auto const& p : params) {
    if (p.is_double()) {
      std::vector<double> host(static_cast<std::size_t>(p.size()));
      p.copy_to_host(host.data(), p.data());
      out.insert(out.end(), host.begin(), host.end());
    } else {
      std::vector<float> host(static_cast<std::size_t>(p.size()));
      p.copy_to_host(host.data(), p.data());
      out.insert(out.end(), host.begin(), host.end());
    }
  }
  return out;
}

double largest_difference(std::vector<double> const& a, std::vector<double> const& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

dtr::dataset_t const& corpus() {
  static dtr::dataset_t const data(DIMTENSOR_EXAMPLES_DATA_DIR "/fra-eng/fra.txt",
                                   {.num_steps = 10, .num_examples = 600});
  return data;
}

// k steps of @p reference alone and of @p parallel over the world, from the same start.
template <class Net>
void check_equivalence(char const* name, Net& reference, Net& parallel, dt::generator& init_ref,
                       dt::generator& init_par, double tolerance) {
  constexpr std::size_t steps = 3;
  dist::communicator const& world = dist_test::world();
  dist::communicator const alone = world.split(world.rank(), 0);
  dtr::init_weights(reference, init_ref);
  dtr::init_weights(parallel, init_par);
  dist::broadcast_parameters(parallel, world);
  std::vector<double> const start = parameters_of(reference);
  REQUIRE(largest_difference(start, parameters_of(parallel)) == 0);

  dt::optim::adam ref_optimizer(reference, 0.005);
  dt::optim::adam par_optimizer(parallel, 0.005);
  dt::generator ref_shuffle(7);
  dt::generator par_shuffle(7);
  double const ref_loss = dtr::train_epoch(reference, ref_optimizer, corpus(), 64, ref_shuffle, alone, steps);
  double const par_loss = dtr::train_epoch(parallel, par_optimizer, corpus(), 64, par_shuffle, world, steps);

  std::vector<double> const want = parameters_of(reference);
  std::vector<double> const got = parameters_of(parallel);
  double const moved = largest_difference(start, want);
  double const differ = largest_difference(want, got);
  if (world.rank() == 0) {
    std::printf("%s: %zu Adam steps, %d ranks: parameters moved up to %.3g; largest difference from one process "
                "%.3g (bound %.0e); loss per token %.12g (one process %.12g)\n",
                name, steps, world.size(), moved, differ, tolerance, par_loss, ref_loss);
  }
  CHECK(moved > 1e-3);
  CHECK(differ <= tolerance);
  CHECK(par_loss == Approx(ref_loss).epsilon(1e-6));
}

template <class T>
void bahdanau_case(char const* name, double tolerance) {
  dtr::SrcVocab const src(static_cast<dt::index_t>(corpus().src_vocab().size()));
  dtr::TgtVocab const tgt(static_cast<dt::index_t>(corpus().tgt_vocab().size()));
  dt::generator ref_gen(0);
  dt::generator par_gen(0);
  dtr::bahdanau_t<T> reference({src, dtr::Embed(32), dtr::Hidden(32), 2, 0.0, ref_gen},
                               {tgt, dtr::Embed(32), dtr::Hidden(32), 2, 0.0, ref_gen});
  dtr::bahdanau_t<T> parallel({src, dtr::Embed(32), dtr::Hidden(32), 2, 0.0, par_gen},
                              {tgt, dtr::Embed(32), dtr::Hidden(32), 2, 0.0, par_gen});
  check_equivalence(name, reference, parallel, ref_gen, par_gen, tolerance);
}

template <class T>
void transformer_case(char const* name, double tolerance) {
  dtr::SrcVocab const src(static_cast<dt::index_t>(corpus().src_vocab().size()));
  dtr::TgtVocab const tgt(static_cast<dt::index_t>(corpus().tgt_vocab().size()));
  dt::generator ref_gen(0);
  dt::generator par_gen(0);
  dtr::transformer_t<T> reference({src, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, 0.0, false, ref_gen},
                                  {tgt, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, 0.0, ref_gen});
  dtr::transformer_t<T> parallel({src, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, 0.0, false, par_gen},
                                 {tgt, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, 0.0, par_gen});
  check_equivalence(name, reference, parallel, ref_gen, par_gen, tolerance);
}

// In double, the only differences are the order of the batch's sums: they
// measured 2e-14 (Bahdanau) and 6e-14 (Transformer), within 1e-5.  In
// float, Adam's division by the root of the second moment magnifies the
// rounding of near-zero gradients: 1.3e-5 and 9e-6 after three steps that
// move a parameter by up to 3 lr = 0.015; bound 1e-4.
TEST_CASE("mpi: Adam steps of Bahdanau's seq2seq on the ranks equal one process with the whole batches",
          "[dist][mpi][equivalence]") {
  bahdanau_case<double>("Bahdanau (double)", 1e-5);
  bahdanau_case<float>("Bahdanau (float)", 1e-4);
}

TEST_CASE("mpi: Adam steps of the Transformer on the ranks equal one process with the whole batches",
          "[dist][mpi][equivalence]") {
  transformer_case<double>("Transformer (double)", 1e-5);
  transformer_case<float>("Transformer (float)", 1e-4);
}

}  // namespace equivalence_test
