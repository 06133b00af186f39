#pragma once
// Test support shared by the softmax and masked_softmax tests: a seeded
// generator of test values, d2l's (masked) softmax in double precision, and
// an elementwise comparison.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <dimtensor/config.hpp>

namespace test_support {

using dimtensor::index_t;

// Values in [-3, 3) from a linear congruential state.
inline float draw(std::uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 6.0f - 3.0f;
}

// (log_)softmax along `axis` of a contiguous [A, B, C] tensor x, in double
// precision, d2l's masking applied literally: the entries of a row at index
// >= len_of(i, k) (the row's indices along the two other axes, in order)
// become -1e6 first.
template <class T, class LenOf>
std::vector<double> softmax_reference(T const& x, int axis, bool log, LenOf const& len_of) {
  auto const& e = x.extents();
  std::vector<double> out(static_cast<std::size_t>(x.size()));
  auto flat = [&](index_t a, index_t b, index_t c) { return static_cast<std::size_t>((a * e[1] + b) * e[2] + c); };
  index_t const n = e[static_cast<std::size_t>(axis)];
  index_t const r0 = axis == 0 ? e[1] : e[0];
  index_t const r1 = axis == 2 ? e[1] : e[2];
  for (index_t i = 0; i < r0; ++i) {
    for (index_t k = 0; k < r1; ++k) {
      auto pos = [&](index_t j) { return axis == 0 ? flat(j, i, k) : axis == 1 ? flat(i, j, k) : flat(i, k, j); };
      index_t const len = len_of(i, k);
      std::vector<double> v(static_cast<std::size_t>(n));
      for (index_t j = 0; j < n; ++j) {
        v[static_cast<std::size_t>(j)] = j < len ? static_cast<double>(x.data()[pos(j)]) : -1e6;
      }
      double m = -INFINITY;
      for (double a : v) m = std::max(m, a);
      double s = 0;
      for (double a : v) s += std::exp(a - m);
      for (index_t j = 0; j < n; ++j) {
        double const d = v[static_cast<std::size_t>(j)] - m;
        out[pos(j)] = log ? d - std::log(s) : std::exp(d) / s;
      }
    }
  }
  return out;
}

// Every element of `got` (contiguous) is finite and within `tol` of `want`.
template <class T>
void check_against(T const& got, std::vector<double> const& want, double tol) {
  REQUIRE(got.size() == static_cast<index_t>(want.size()));
  REQUIRE(got.is_contiguous());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::isfinite(static_cast<double>(got.data()[i])));
    CHECK(static_cast<double>(got.data()[i]) == Approx(want[i]).margin(tol).epsilon(0));
  }
}

}  // namespace test_support
