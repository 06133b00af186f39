// Parity of bmm with torch.bmm (tests/parity/make_goldens.py, torch 1.13):
// d2l's two bmm examples (ones, and attention weights × values), seeded
// random operands in float and double, and odd sizes.  Tolerance: an
// element passes when |got - want| <= 1e-6 * max(1, |want|), i.e. 1e-6
// absolute for values up to 1 and relative above (the float sums of
// bmm_odd reach |want| ~ 10, where float rounding alone is ~1e-6).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/unsqueeze.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#ifndef DIMTENSOR_PARITY_DATA_DIR
#define DIMTENSOR_PARITY_DATA_DIR "/work/main/tests/parity/data"
#endif

namespace dt = dimtensor;

namespace bmm_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(ValueFeat);

template <class T>
using left_t = dt::tensor<T, Batch, Queries, KVPairs>;
template <class T>
using right_t = dt::tensor<T, Batch, KVPairs, ValueFeat>;
template <class T>
using out_t = dt::tensor<T, Batch, Queries, ValueFeat>;

template <class Tensor>
Tensor load(std::string const& name) {
  // Appended in place: GCC 12 at -O3 reports false -Warray-bounds and
  // -Wstringop-overflow inside libstdc++ for the operator+ chain here.
  std::string path = DIMTENSOR_PARITY_DATA_DIR;
  path += '/';
  path += name;
  path += ".npy";
  return dt::load_npy<Tensor>(path);
}

template <class Got, class Want>
void check_close(Got const& got, Want const& want) {
  REQUIRE(got.extents() == want.extents());
  REQUIRE(got.is_contiguous());
  for (dt::index_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    double const w = static_cast<double>(want.data()[i]);
    CHECK(std::fabs(static_cast<double>(got.data()[i]) - w) <= 1e-6 * std::max(1.0, std::fabs(w)));
  }
}

template <class T>
void check_case(std::string const& name, std::string const& suffix = "") {
  auto const a = load<left_t<T>>(name + "_A" + suffix);
  auto const b = load<right_t<T>>(name + "_B" + suffix);
  check_close(dt::bmm(a, b), load<out_t<T>>(name + "_out" + suffix));
}

TEST_CASE("bmm of ones matches torch.bmm (d2l: [2,1,4] x [2,4,6])", "[parity][bmm]") {
  check_case<float>("bmm_ones");
}

TEST_CASE("bmm of attention weights and values matches torch.bmm (d2l)", "[parity][bmm]") {
  // torch.bmm(weights.unsqueeze(1), values.unsqueeze(-1)) = [[[4.5]], [[14.5]]]
  auto const weights = load<dt::tensor<float, Batch, KVPairs>>("bmm_weights_weights");
  auto const values = load<dt::tensor<float, Batch, KVPairs>>("bmm_weights_values");
  auto const r = dt::bmm(dt::unsqueeze<Queries, 1>(weights), dt::unsqueeze<ValueFeat, 2>(values));
  STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(r)>::specs,
                                dt::dims<Batch, Queries::fixed<1>, ValueFeat::fixed<1>>>);
  auto const want = load<out_t<float>>("bmm_weights_out");
  check_close(r, want);
  CHECK(r(Batch(0), Queries(0), ValueFeat(0)) == Approx(4.5f));
  CHECK(r(Batch(1), Queries(0), ValueFeat(0)) == Approx(14.5f));
}

TEST_CASE("bmm of seeded random operands matches torch.bmm", "[parity][bmm]") {
  SECTION("float") { check_case<float>("bmm_random"); }
  SECTION("double") { check_case<double>("bmm_random", "_f64"); }
}

TEST_CASE("bmm of odd sizes matches torch.bmm ([4,33,17] x [4,17,29])", "[parity][bmm]") {
  check_case<float>("bmm_odd");
}

}  // namespace bmm_parity
