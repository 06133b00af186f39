// Tests of core/error.hpp: the exception hierarchy.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <type_traits>

#include <dimtensor/core/error.hpp>

namespace dt = dimtensor;

static_assert(std::is_base_of_v<std::runtime_error, dt::error>);
static_assert(std::is_base_of_v<dt::error, dt::shape_error>);
static_assert(std::is_base_of_v<dt::error, dt::value_error>);
static_assert(std::is_base_of_v<dt::error, dt::io_error>);
static_assert(!std::is_base_of_v<dt::shape_error, dt::value_error>);

TEST_CASE("error: every dimtensor exception is a dimtensor::error with its message", "[core][error]") {
  REQUIRE_THROWS_AS(throw dt::shape_error("s"), dt::error);
  REQUIRE_THROWS_AS(throw dt::value_error("v"), dt::error);
  REQUIRE_THROWS_AS(throw dt::io_error("i"), std::runtime_error);
  REQUIRE_THROWS_WITH(throw dt::shape_error("bmm: Hidden 8 vs 16"), "bmm: Hidden 8 vs 16");
}
