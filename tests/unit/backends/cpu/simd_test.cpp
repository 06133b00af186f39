// Tests of backends/cpu/simd.hpp: the softmax's vector exponential against
// math::exp, lane by lane, and the vector helpers the attention kernels use.
#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <dimtensor/backends/cpu/simd.hpp>
#include <dimtensor/kernel/math.hpp>

#if DIMTENSOR_HAS_SIMD

namespace simd = dimtensor::backends::cpu::simd;

namespace {

// exp_nonpositive of 16 numbers at a time, into a vector of results.
std::vector<float> vector_exp(std::vector<float> const& y) {
  std::vector<float> out(y.size());
  for (std::size_t i = 0; i < y.size(); i += 16) {
    float in[16];
    for (std::size_t l = 0; l < 16; ++l) in[l] = i + l < y.size() ? y[i + l] : 0.0f;
    simd::f32x16 v;
    simd::load(v, in);
    simd::exp_nonpositive(v);
    simd::store(in, v);
    for (std::size_t l = 0; l < 16 && i + l < y.size(); ++l) out[i + l] = in[l];
  }
  return out;
}

}  // namespace

TEST_CASE("simd: exp_nonpositive is math::exp on [ln 2^-126, 0]", "[backends][cpu][simd]") {
  // Every float from -87.33 up to 0 would be 1.1e9 numbers; take every 997th
  // bit pattern of the negative floats down to the floor (1.1 million
  // numbers), plus the ends.
  std::vector<float> y{0.0f, -0.0f, simd::exp_floor, -1e-30f, -0.5f, -1.0f, -std::log(2.0f)};
  std::uint32_t const floor_bits = std::bit_cast<std::uint32_t>(simd::exp_floor);
  for (std::uint32_t bits = 0x80000000u; bits <= floor_bits; bits += 997) y.push_back(std::bit_cast<float>(bits));
  auto const e = vector_exp(y);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < y.size(); ++i) differ += e[i] != dimtensor::math::exp(y[i]) ? 1 : 0;
  CHECK(y.size() > 1'000'000);
  CHECK(differ == 0);
  // and within 2 ulp of the true value (math::exp's own bound), at a few points
  for (float x : {-0.1f, -1.0f, -10.0f, -50.0f, -87.0f}) {
    CHECK(std::abs(vector_exp({x})[0] - static_cast<float>(std::exp(static_cast<double>(x)))) <=
          2 * std::abs(std::nextafter(std::exp(x), 0.0f) - std::exp(x)));
  }
}

TEST_CASE("simd: exp_nonpositive below the floor, at -inf and at NaN", "[backends][cpu][simd]") {
  float const inf = std::numeric_limits<float>::infinity();
  auto const e = vector_exp(
      {std::nextafter(simd::exp_floor, -inf), -88.0f, -103.0f, -1e30f, -inf, std::numeric_limits<float>::quiet_NaN()});
  for (int i = 0; i < 5; ++i) CHECK(e[static_cast<std::size_t>(i)] == 0.0f);
  CHECK(std::isnan(e[5]));
  // the floor itself still gives a number (about the smallest normal float), as math::exp does
  CHECK(vector_exp({simd::exp_floor})[0] > 0.0f);
  CHECK(vector_exp({simd::exp_floor})[0] == dimtensor::math::exp(simd::exp_floor));
}

TEST_CASE("simd: load, store, max and sums", "[backends][cpu][simd]") {
  float a[16], b[16], out[16];
  for (int l = 0; l < 16; ++l) {
    a[l] = static_cast<float>(l % 5) - 2.0f;
    b[l] = static_cast<float>(l % 3) - 1.0f;
  }
  simd::f32x16 va, vb;
  simd::load(va, a);
  simd::load(vb, b);
  simd::max_into(va, vb);
  simd::store(out, va);
  for (int l = 0; l < 16; ++l) CHECK(out[l] == (a[l] < b[l] ? b[l] : a[l]));
  CHECK(simd::max_of(va) == 2.0f);
  float expected = 0.0f;
  for (int l = 0; l < 16; ++l) expected += out[l];
  CHECK(simd::sum_in_order(va) == expected);
  simd::divide<true>(va, 4.0f, 0.25f);
  simd::divide<false>(vb, 3.0f, 1.0f / 3.0f);
  for (int l = 0; l < 16; ++l) {
    CHECK(va[l] == out[l] * 0.25f);
    CHECK(vb[l] == b[l] / 3.0f);
  }
}

TEST_CASE("simd: transpose16", "[backends][cpu][simd]") {
  float m[16][16];
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) m[i][j] = static_cast<float>(100 * i + j);
  }
  simd::f32x16 rows[16];
  for (int i = 0; i < 16; ++i) simd::load(rows[i], m[i]);
  simd::transpose16(rows);
  int wrong = 0;
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 16; ++j) wrong += rows[i][j] == m[j][i] ? 0 : 1;
  }
  CHECK(wrong == 0);
}

#endif  // DIMTENSOR_HAS_SIMD (without the extensions there is nothing to test)
