// Tests of kernel/evaluator.hpp: how a leaf is read, flat or by rows.
#include <catch2/catch.hpp>

#include <array>
#include <numeric>
#include <tuple>
#include <vector>

#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/kernel/math.hpp>

namespace dt = dimtensor;
namespace d = dimtensor::detail;
using dt::index_t;

namespace {
std::vector<float> iota_vec(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}
}  // namespace

TEST_CASE("evaluator: a contiguous leaf of the output's extents is flat", "[core][evaluator]") {
  auto v = iota_vec(6);
  std::array<index_t, 2> const ext{2, 3};
  auto ev = d::bind_strided<float, 2, 2>(v.data(), ext, {3, 1}, ext);
  REQUIRE(ev.flat());
  CHECK(ev.strides == std::array<index_t, 2>{3, 1});
  for (index_t i = 0; i < 6; ++i) CHECK(ev.at_flat(i) == static_cast<float>(i));
}

TEST_CASE("evaluator: rows read strided leaves", "[core][evaluator]") {
  auto v = iota_vec(6);  // a [2, 3] buffer read as its transpose [3, 2]
  std::array<index_t, 2> const out{3, 2};
  auto ev = d::bind_strided<float, 2, 2>(v.data(), out, {1, 3}, out);
  REQUIRE_FALSE(ev.flat());
  for (index_t i = 0; i < 3; ++i) {
    index_t const outer[1] = {i};
    ev.row(outer);
    for (index_t j = 0; j < 2; ++j) CHECK(ev.at(j) == v[static_cast<std::size_t>(j * 3 + i)]);
  }
}

TEST_CASE("evaluator: missing leading dims and extent-1 dims get stride 0", "[core][evaluator]") {
  auto v = iota_vec(4);
  std::array<index_t, 3> const out{2, 3, 4};
  // a [4] leaf under a [2, 3, 4] output
  auto ev = d::bind_strided<float, 3, 1>(v.data(), std::array<index_t, 1>{4}, {1}, out);
  REQUIRE_FALSE(ev.flat());
  CHECK(ev.strides == std::array<index_t, 3>{0, 0, 1});
  index_t const outer[2] = {1, 2};
  ev.row(outer);
  for (index_t j = 0; j < 4; ++j) CHECK(ev.at(j) == static_cast<float>(j));

  // a [2, 1, 4] leaf (static 1 in the middle) under the same output
  auto w = iota_vec(8);
  auto ew = d::bind_strided<float, 3, 3>(w.data(), std::array<index_t, 3>{2, 1, 4}, {4, 4, 1}, out);
  REQUIRE_FALSE(ew.flat());
  CHECK(ew.strides == std::array<index_t, 3>{4, 0, 1});
  ew.row(outer);
  for (index_t j = 0; j < 4; ++j) CHECK(ew.at(j) == static_cast<float>(4 + j));

  // leading dims of extent 1 in the output keep a leaf flat
  auto ef = d::bind_strided<float, 3, 1>(v.data(), std::array<index_t, 1>{4}, {1}, std::array<index_t, 3>{1, 1, 4});
  CHECK(ef.flat());
}

TEST_CASE("evaluator: rank 0 reads its one element", "[core][evaluator]") {
  float x = 4.5f;
  auto ev = d::bind_strided<float, 0, 0>(&x, std::array<index_t, 0>{}, {}, std::array<index_t, 0>{});
  CHECK(ev.flat());
  CHECK(ev.at_flat(0) == 4.5f);
  ev.row(nullptr);
  CHECK(ev.at(0) == 4.5f);
}

TEST_CASE("evaluator: scalar and map evaluators", "[core][evaluator]") {
  d::scalar_evaluator<float> s{2.0f};
  CHECK(s.flat());
  CHECK(s.at_flat(123) == 2.0f);
  CHECK(s.at(7) == 2.0f);

  auto v = iota_vec(6);
  std::array<index_t, 2> const ext{2, 3};
  auto leaf = d::bind_strided<float, 2, 2>(v.data(), ext, {3, 1}, ext);
  auto mul = [](float a, float b) { return a * b; };
  d::map_evaluator<decltype(mul), decltype(leaf), d::scalar_evaluator<float>> m{mul, {leaf, s}};
  CHECK(m.flat());
  CHECK(m.at_flat(5) == 10.0f);

  // One non-flat leaf makes the whole node read by rows.
  auto col = d::bind_strided<float, 2, 1>(v.data(), std::array<index_t, 1>{3}, {1}, ext);
  d::map_evaluator<decltype(mul), decltype(leaf), decltype(col)> m2{mul, {leaf, col}};
  REQUIRE_FALSE(m2.flat());
  index_t const outer[1] = {1};
  m2.row(outer);
  for (index_t j = 0; j < 3; ++j) CHECK(m2.at(j) == static_cast<float>((3 + j) * j));
}
