// Parity of softmax and log_softmax along a middle and the last dim with
// torch.nn.functional (tests/parity/make_goldens.py, torch 1.13), within 1e-6.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/ops/softmax.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#ifndef DIMTENSOR_PARITY_DATA_DIR
#define DIMTENSOR_PARITY_DATA_DIR "/work/main/tests/parity/data"
#endif

namespace dt = dimtensor;

namespace softmax_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);

using x_t = dt::tensor<float, Batch, Queries, KVPairs>;

x_t load(std::string const& name) {
  return dt::load_npy<x_t>(std::string(DIMTENSOR_PARITY_DATA_DIR) + "/" + name + ".npy");
}

void check_close(x_t const& got, x_t const& want) {
  REQUIRE(got.extents() == want.extents());
  for (dt::index_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(std::fabs(static_cast<double>(got.data()[i]) - static_cast<double>(want.data()[i])) <= 1e-6);
  }
}

TEST_CASE("softmax along a middle dim matches torch (dim=1)", "[parity][softmax]") {
  check_close(dt::softmax<Queries>(load("softmax_mid_X")), load("softmax_mid_dim1_out"));
}

TEST_CASE("log_softmax along a middle and the last dim matches torch", "[parity][softmax]") {
  auto const x = load("softmax_mid_X");
  check_close(dt::log_softmax<Queries>(x), load("log_softmax_mid_dim1_out"));
  check_close(dt::log_softmax<KVPairs>(x), load("log_softmax_mid_dimlast_out"));
}

}  // namespace softmax_parity
