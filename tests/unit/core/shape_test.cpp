// Tests of core/shape.hpp: strides, counts, contiguity, names and the text
// of shape errors.
#include <catch2/catch.hpp>

#include <array>
#include <limits>
#include <string_view>

#include <dimtensor/core/shape.hpp>

namespace shape_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
}  // namespace shape_test

namespace dt = dimtensor;
namespace d = dimtensor::detail;
using namespace shape_test;
using dt::index_t;
using a3 = std::array<index_t, 3>;

static_assert(d::row_major_strides(a3{2, 3, 4}) == a3{12, 4, 1});
static_assert(d::element_count(a3{2, 3, 4}) == 24);
static_assert(d::element_count(std::array<index_t, 0>{}) == 1);
static_assert(d::names_of<dt::dims<Batch, Hidden::fixed<8>>>::value[1] == std::string_view("Hidden"));
static_assert(d::static_extents_of<dt::dims<Batch, Hidden::fixed<8>>>::value == std::array<index_t, 2>{-1, 8});

TEST_CASE("shape: row-major strides and element counts", "[core][shape]") {
  CHECK(d::row_major_strides(a3{2, 3, 4}) == a3{12, 4, 1});
  CHECK(d::row_major_strides(a3{5, 1, 7}) == a3{7, 7, 1});
  CHECK(d::row_major_strides(a3{0, 3, 2}) == a3{6, 2, 1});
  CHECK(d::row_major_strides(std::array<index_t, 1>{9}) == std::array<index_t, 1>{1});
  CHECK(d::element_count(a3{2, 0, 4}) == 0);
  CHECK(d::element_count(std::array<index_t, 0>{}) == 1);
}

TEST_CASE("shape: is_row_major ignores the strides of extent-1 dims", "[core][shape]") {
  CHECK(d::is_row_major(a3{2, 3, 4}, a3{12, 4, 1}));
  CHECK_FALSE(d::is_row_major(a3{2, 3, 4}, a3{1, 2, 6}));   // column-major
  CHECK_FALSE(d::is_row_major(a3{2, 3, 4}, a3{24, 4, 1}));  // a slice with gaps
  CHECK(d::is_row_major(a3{2, 1, 4}, a3{4, 999, 1}));       // unsqueezed dim
  CHECK(d::is_row_major(a3{1, 1, 1}, a3{0, 0, 0}));
  CHECK_FALSE(d::is_row_major(a3{2, 3, 4}, a3{0, 4, 1}));   // broadcast is not contiguous
  CHECK(d::is_row_major(std::array<index_t, 0>{}, std::array<index_t, 0>{}));
}

TEST_CASE("shape: shape_string names every dim and extent", "[core][shape]") {
  CHECK(d::shape_string<dt::dims<Batch, Queries>>(std::array<index_t, 2>{2, 4}) == "[Batch=2, Queries=4]");
  CHECK(d::shape_string<dt::dims<Hidden::fixed<8>>>(std::array<index_t, 1>{8}) == "[Hidden=8]");
  CHECK(d::shape_string<dt::dims<>>(std::array<index_t, 0>{}) == "[]");
}

TEST_CASE("shape: throw_extent_mismatch names the op, the dim and both sizes", "[core][shape]") {
  REQUIRE_THROWS_AS(d::throw_extent_mismatch("bmm", "Hidden", 8, 16), dt::shape_error);
  REQUIRE_THROWS_WITH(d::throw_extent_mismatch("bmm", "Hidden", 8, 16),
                      "bmm: extent mismatch for dimension Hidden: 8 (left) vs 16 (right)");
  REQUIRE_THROWS_WITH(d::throw_extent_mismatch("assign", "Batch", 2, 3, "target", "value"),
                      "assign: extent mismatch for dimension Batch: 2 (target) vs 3 (value)");
}

TEST_CASE("shape: check_static_extents", "[core][shape]") {
  using L = dt::dims<Batch, Hidden::fixed<8>>;
  REQUIRE_NOTHROW(d::check_static_extents<L>("zeros", std::array<index_t, 2>{5, 8}));
  REQUIRE_NOTHROW(d::check_static_extents<L>("zeros", std::array<index_t, 2>{0, 8}));
  REQUIRE_THROWS_AS(d::check_static_extents<L>("zeros", std::array<index_t, 2>{5, 7}), dt::shape_error);
  REQUIRE_THROWS_WITH(d::check_static_extents<L>("zeros", std::array<index_t, 2>{5, 7}),
                      "zeros: extent mismatch for dimension Hidden: 7 (given) vs 8 (static)");
  REQUIRE_THROWS_AS(d::check_static_extents<L>("zeros", std::array<index_t, 2>{-1, 8}), dt::value_error);
  REQUIRE_THROWS_WITH(d::check_static_extents<L>("zeros", std::array<index_t, 2>{-1, 8}),
                      "zeros: negative extent -1 for dimension Batch");
}

TEST_CASE("shape: checked_element_count refuses counts that overflow", "[core][shape]") {
  using L = dt::dims<Batch, Queries, Hidden>;
  CHECK(d::checked_element_count<L>("t", a3{2, 3, 4}, 4) == 24);
  CHECK(d::checked_element_count<L>("t", a3{0, 5, 7}, 4) == 0);
  CHECK(d::checked_element_count<L>("t", a3{3, 0, index_t{1} << 40}, 4) == 0);
  // Empty, but the strides of the other dims would overflow.
  REQUIRE_THROWS_AS(d::checked_element_count<L>("t", a3{0, index_t{1} << 40, index_t{1} << 40}, 4), dt::value_error);
  index_t const big = index_t{1} << 31;
  REQUIRE_THROWS_AS(d::checked_element_count<L>("t", a3{big, big, 4}, 4), dt::value_error);
  REQUIRE_THROWS_WITH(d::checked_element_count<L>("zeros", a3{big, big, 4}, 4),
                      Catch::StartsWith("zeros: the extents [Batch=2147483648, Queries=2147483648, Hidden=4]"));
  // The byte count must fit too, not only the element count.
  index_t const max = std::numeric_limits<index_t>::max();
  CHECK(d::checked_element_count<L>("t", a3{1, 1, max / 8}, 8) == max / 8);
  REQUIRE_THROWS_AS(d::checked_element_count<L>("t", a3{1, 1, max / 8 + 1}, 8), dt::value_error);
}
