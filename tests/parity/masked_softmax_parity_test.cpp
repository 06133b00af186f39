// Parity of masked_softmax and sequence_mask with d2l's own PyTorch code
// (tests/parity/make_goldens.py, torch 1.13): same inputs, outputs within 1e-6.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/ops/masked_softmax.hpp>
#include <dimtensor/ops/sequence_mask.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#ifndef DIMTENSOR_PARITY_DATA_DIR
#define DIMTENSOR_PARITY_DATA_DIR "/work/main/tests/parity/data"
#endif

namespace dt = dimtensor;

namespace masked_softmax_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Steps);

template <class Tensor>
Tensor load(std::string const& name) {
  return dt::load_npy<Tensor>(std::string(DIMTENSOR_PARITY_DATA_DIR) + "/" + name + ".npy");
}

using scores_t = dt::tensor<float, Batch, Queries, KVPairs>;
using lens1_t = dt::tensor<std::int64_t, Batch>;
using lens2_t = dt::tensor<std::int64_t, Batch, Queries>;

template <class T>
void check_close(T const& got, T const& want, double tol = 1e-6) {
  REQUIRE(got.extents() == want.extents());
  REQUIRE(got.is_contiguous());
  REQUIRE(want.is_contiguous());
  for (dt::index_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::isfinite(static_cast<double>(got.data()[i])));
    CHECK(std::fabs(static_cast<double>(got.data()[i]) - static_cast<double>(want.data()[i])) <= tol);
  }
}

TEST_CASE("masked_softmax matches d2l: the chapter's demos", "[parity][masked_softmax]") {
  SECTION("1-D valid_lens") {
    auto const x = load<scores_t>("masked_softmax_d2l_1d_X");
    auto const vl = load<lens1_t>("masked_softmax_d2l_1d_valid_lens");
    check_close(dt::masked_softmax<KVPairs>(x, vl), load<scores_t>("masked_softmax_d2l_1d_out"));
  }
  SECTION("2-D valid_lens") {
    auto const x = load<scores_t>("masked_softmax_d2l_2d_X");
    auto const vl = load<lens2_t>("masked_softmax_d2l_2d_valid_lens");
    check_close(dt::masked_softmax<KVPairs>(x, vl), load<scores_t>("masked_softmax_d2l_2d_out"));
  }
}

TEST_CASE("masked_softmax matches d2l: random scores, lengths 0 to 9", "[parity][masked_softmax]") {
  auto const x = load<scores_t>("masked_softmax_X");
  auto const vl1 = load<lens1_t>("masked_softmax_1d_valid_lens");
  auto const vl2 = load<lens2_t>("masked_softmax_2d_valid_lens");
  check_close(dt::masked_softmax<KVPairs>(x, vl1), load<scores_t>("masked_softmax_1d_out"));
  check_close(dt::masked_softmax<KVPairs>(x, vl2), load<scores_t>("masked_softmax_2d_out"));
  auto const none = load<scores_t>("masked_softmax_none_out");
  check_close(dt::masked_softmax<KVPairs>(x), none);
  check_close(dt::masked_softmax<KVPairs>(x, std::nullopt), none);
  check_close(dt::masked_softmax<KVPairs>(x, std::optional<lens2_t>{}), none);
  SECTION("int32 lengths give the same numbers") {
    check_close(dt::masked_softmax<KVPairs>(x, dt::eval(dt::cast<std::int32_t>(vl2))),
                load<scores_t>("masked_softmax_2d_out"));
  }
}

TEST_CASE("masked_softmax matches d2l: large logits (x 1000)", "[parity][masked_softmax]") {
  auto const x = load<scores_t>("masked_softmax_large_X");
  check_close(dt::masked_softmax<KVPairs>(x, load<lens1_t>("masked_softmax_1d_valid_lens")),
              load<scores_t>("masked_softmax_large_1d_out"));
  check_close(dt::masked_softmax<KVPairs>(x, load<lens2_t>("masked_softmax_2d_valid_lens")),
              load<scores_t>("masked_softmax_large_2d_out"));
  check_close(dt::masked_softmax<KVPairs>(x), load<scores_t>("masked_softmax_large_none_out"));
}

TEST_CASE("sequence_mask matches d2l", "[parity][sequence_mask]") {
  using x_t = dt::tensor<float, Batch, Steps>;
  SECTION("the chapter's demo, value 0") {
    auto const x = load<x_t>("sequence_mask_d2l_X");
    auto const vl = load<lens1_t>("sequence_mask_d2l_valid_len");
    check_close(dt::sequence_mask(x, vl), load<x_t>("sequence_mask_d2l_out"), 0.0);
  }
  SECTION("random, value -1") {
    auto const x = load<x_t>("sequence_mask_random_X");
    auto const vl = load<lens1_t>("sequence_mask_random_valid_len");
    check_close(dt::sequence_mask<Steps>(x, vl, -1.0f), load<x_t>("sequence_mask_random_out"), 0.0);
  }
}

}  // namespace masked_softmax_parity
