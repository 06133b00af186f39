#include <dimtensor/dimtensor.hpp>

#include <cstdint>
#include <cstdio>
#include <filesystem>

#if DIMTENSOR_HAS_VIZ
#include <dimtensor/viz.hpp>
#endif

static_assert(dimtensor::version_major == EXPECTED_VERSION_MAJOR,
              "the headers and the CMake package disagree on the version");
static_assert(dimtensor::version_minor == EXPECTED_VERSION_MINOR,
              "the headers and the CMake package disagree on the version");

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(ValueFeat);

// A consumer uses the whole library: a masked softmax and a bmm (CBLAS when
// the package found it), checked by value.
int main() {
  namespace dt = dimtensor;
  auto const scores = dt::zeros<float>(Batch(2), Queries(1), KVPairs(4));
  dt::tensor<std::int64_t, Batch> const lens{2, 4};
  auto const w = dt::masked_softmax<KVPairs>(scores, lens);
  auto const v = dt::ones<float>(Batch(2), KVPairs(4), ValueFeat(3));
  auto const out = dt::bmm(w, v);  // [Batch, Queries, ValueFeat], every row sums the weights: 1
  bool const ok = w(Batch(0), Queries(0), KVPairs(1)) == 0.5f && w(Batch(0), Queries(0), KVPairs(2)) == 0.0f &&
                  w(Batch(1), Queries(0), KVPairs(3)) == 0.25f &&
                  dt::max_abs_diff(out, dt::ones<float>(Batch(2), Queries(1), ValueFeat(3))) < 1e-6;
#if DIMTENSOR_HAS_VIZ
  // dimtensor::viz came with the package: it draws (cairo found and linked).
  // Into the working directory: each consumer runs in its own build tree.
  std::filesystem::path const picture = "dimtensor_consumer_weights.png";
  dt::viz::show_heatmap(dt::squeeze<Queries>(w), picture);
  bool const drew = std::filesystem::file_size(picture) > 0;
  std::filesystem::remove(picture);
  if (!drew) return 1;
  std::puts("dimtensor::viz: drew a heatmap");
#endif
  return ok ? 0 : 1;
}
