// core/convert.hpp: which values an arithmetic type holds, and the checked
// conversion the casts, factories and loaders make.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include <dimtensor/core/convert.hpp>

namespace dt = dimtensor;
using dt::detail::representable_as;

TEST_CASE("representable_as: floating point to integers truncates, and the result must fit", "[core][convert]") {
  double const nan = std::nan("");
  double const inf = std::numeric_limits<double>::infinity();
  CHECK_FALSE(representable_as<std::int64_t>(nan));
  CHECK_FALSE(representable_as<std::int32_t>(static_cast<float>(nan)));
  CHECK_FALSE(representable_as<std::int64_t>(inf));
  CHECK_FALSE(representable_as<std::int64_t>(-inf));
  // int32: [-2^31, 2^31 - 1] after truncation toward zero.
  CHECK(representable_as<std::int32_t>(2147483647.999));
  CHECK_FALSE(representable_as<std::int32_t>(2147483648.0));
  CHECK(representable_as<std::int32_t>(-2147483648.999));
  CHECK_FALSE(representable_as<std::int32_t>(-2147483649.0));
  CHECK(representable_as<std::int32_t>(-0.9));
  // int64: 2^63 is the first double past the range; -2^63 is in it.
  CHECK_FALSE(representable_as<std::int64_t>(9223372036854775808.0));
  CHECK(representable_as<std::int64_t>(-9223372036854775808.0));
  CHECK(representable_as<std::int64_t>(std::nextafter(9223372036854775808.0, 0.0)));
  CHECK_FALSE(representable_as<std::int64_t>(1e19f));
  CHECK(representable_as<std::uint32_t>(-0.5));  // truncates to 0
  CHECK_FALSE(representable_as<std::uint32_t>(-1.0));
}

TEST_CASE("representable_as: integers, double to float, bool", "[core][convert]") {
  CHECK(representable_as<std::int32_t>(std::int64_t{2147483647}));
  CHECK_FALSE(representable_as<std::int32_t>(std::int64_t{2147483648}));
  CHECK_FALSE(representable_as<std::uint64_t>(std::int64_t{-1}));
  CHECK(representable_as<float>(std::numeric_limits<std::int64_t>::max()));  // rounds
  CHECK(representable_as<float>(3.4e38));
  CHECK_FALSE(representable_as<float>(3.5e38));
  CHECK_FALSE(representable_as<float>(-1e300));
  CHECK(representable_as<float>(std::numeric_limits<double>::infinity()));  // infinities and NaN carry over
  CHECK(representable_as<float>(std::nan("")));
  CHECK(representable_as<bool>(std::nan("")));
  CHECK(representable_as<double>(3e38f));
}

TEST_CASE("checked_convert names what, the value and the type", "[core][convert]") {
  CHECK(dt::detail::checked_convert<std::int32_t>(-7.9, "x") == -7);
  REQUIRE_THROWS_AS(dt::detail::checked_convert<std::int32_t>(3e9, "arange: start"), dt::value_error);
  REQUIRE_THROWS_WITH(dt::detail::checked_convert<std::int32_t>(3e9, "arange: start"),
                      "arange: start: 3000000000 is not representable in int32 (it is NaN, infinite or out of range)");
  REQUIRE_THROWS_WITH(dt::detail::checked_convert<float>(1e300, "uniform: hi"),
                      "uniform: hi: 1e+300 is not representable in float32 (out of range)");
  REQUIRE_THROWS_WITH(dt::detail::checked_convert<std::int32_t>(std::int64_t{-3000000000}, "n"),
                      "n: -3000000000 is not representable in int32 (out of range)");
}
