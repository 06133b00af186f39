// kernel::philox4x32 against Random123's known-answer vectors, and
// dropout's mask drawn from it (kernel/philox.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <dimtensor/kernel/philox.hpp>

namespace dt = dimtensor;
namespace kernel = dimtensor::kernel;

TEST_CASE("philox4x32-10: Random123's known answers", "[kernel][random]") {
  CHECK(kernel::philox4x32({0u, 0u, 0u, 0u}, 0u, 0u) ==
        kernel::philox_words{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(kernel::philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffu, 0xffffffffu) ==
        kernel::philox_words{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
  CHECK(kernel::philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0xa4093822u, 0x299f31d0u) ==
        kernel::philox_words{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("dropout's mask: word i mod 4 of counter i / 4, kept below the threshold", "[kernel][random]") {
  std::uint64_t const key = 0x0123456789abcdefULL;
  std::uint64_t const threshold = kernel::keep_threshold(0.7);
  CHECK(threshold == static_cast<std::uint64_t>(0.7 * 4294967296.0));
  CHECK(kernel::keep_threshold(1.0) == (std::uint64_t{1} << 32));
  for (dt::index_t i : std::vector<dt::index_t>{0, 1, 2, 3, 4, 5, 1001, (dt::index_t{1} << 34) + 3}) {
    auto const g = static_cast<std::uint64_t>(i) / 4;
    auto const w = kernel::philox4x32({static_cast<std::uint32_t>(g), static_cast<std::uint32_t>(g >> 32), 0u, 0u},
                                      static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32));
    CHECK(kernel::dropout_keeps(i, key, threshold) == (w[static_cast<std::size_t>(i % 4)] < threshold));
  }
  // A range applies the same mask element by element, wherever it starts and ends.
  std::vector<double> in(1003), out(1003, -1.0);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = 1.0 + static_cast<double>(i);
  for (auto [first, last] : {std::pair<dt::index_t, dt::index_t>{0, 1003}, {1, 2}, {2, 9}, {5, 1000}, {7, 7}}) {
    std::fill(out.begin(), out.end(), -1.0);
    kernel::dropout_range(in.data(), out.data(), first, last, key, threshold, 2.5);
    for (dt::index_t i = 0; i < 1003; ++i) {
      double const want = i < first || i >= last ? -1.0
                          : kernel::dropout_keeps(i, key, threshold) ? in[static_cast<std::size_t>(i)] * 2.5
                                                                      : 0.0;
      CHECK(out[static_cast<std::size_t>(i)] == want);
    }
  }
  // About 70% kept over 100,000 elements (within 5 standard deviations).
  long kept = 0;
  for (dt::index_t i = 0; i < 100000; ++i) kept += kernel::dropout_keeps(i, key, threshold) ? 1 : 0;
  CHECK(std::abs(static_cast<double>(kept) - 70000.0) < 5 * std::sqrt(100000 * 0.7 * 0.3));
}
