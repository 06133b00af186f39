// Numerics at the edges against torch 1.13 (tests/parity/make_goldens.py,
// case 6): softmax, log_softmax, d2l's masked_softmax and cross_entropy of
// rows with logits of ±3e38, ±inf and NaN.  NaN exactly where PyTorch has
// NaN, the same infinities, and the finite numbers within 1e-6 (relative
// for the large ones).  What docs/reliability.md promises.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/nn/loss.hpp>
#include <dimtensor/ops/masked_softmax.hpp>
#include <dimtensor/ops/softmax.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#ifndef DIMTENSOR_PARITY_DATA_DIR
#define DIMTENSOR_PARITY_DATA_DIR "/work/main/tests/parity/data"
#endif

namespace dt = dimtensor;

namespace edges_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

using x_t = dt::tensor<float, Batch, Queries, KVPairs>;
using rows_t = dt::tensor<float, Batch, Queries>;
using lens_t = dt::tensor<std::int64_t, Batch, Queries>;

template <class T>
T load(std::string const& name) {
  return dt::load_npy<T>(std::string(DIMTENSOR_PARITY_DATA_DIR) + "/" + name + ".npy");
}

template <class T>
void check_same(T const& got, T const& want) {
  REQUIRE(got.extents() == want.extents());
  for (dt::index_t i = 0; i < want.size(); ++i) {
    double const g = got.data()[i];
    double const w = want.data()[i];
    INFO("element " << i << ": dimtensor " << g << ", torch " << w);
    if (std::isnan(w)) {
      CHECK(std::isnan(g));
    } else if (std::isinf(w)) {
      CHECK(g == w);
    } else {
      CHECK(std::isfinite(g));
      CHECK(std::fabs(g - w) <= 1e-6 * std::max(1.0, std::fabs(w)));
    }
  }
}

TEST_CASE("softmax and log_softmax of ±3e38, ±inf and NaN logits match torch", "[parity][softmax][edges]") {
  auto const x = load<x_t>("edges_X");
  check_same(dt::softmax<KVPairs>(x), load<x_t>("edges_softmax_out"));
  check_same(dt::log_softmax<KVPairs>(x), load<x_t>("edges_log_softmax_out"));
}

TEST_CASE("d2l's masked_softmax of ±3e38, ±inf and NaN logits matches torch", "[parity][masked_softmax][edges]") {
  auto const x = load<x_t>("edges_X");
  check_same(dt::masked_softmax<KVPairs>(x, load<lens_t>("edges_valid_lens")),
             load<x_t>("edges_masked_softmax_out"));
}

TEST_CASE("cross_entropy of ±3e38, ±inf and NaN logits matches torch", "[parity][loss][edges]") {
  auto const x = load<x_t>("edges_X");
  auto const labels = load<lens_t>("edges_labels");
  rows_t const loss = dt::nn::cross_entropy<KVPairs>(x, labels, dt::nn::reduction::none);
  check_same(loss, load<rows_t>("edges_cross_entropy_out"));
}

}  // namespace edges_parity
