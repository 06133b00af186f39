// Tests of core/dim.hpp and the macros of config.hpp: tags, static extents,
// specs and the one API that answers for both kinds of spec.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string_view>
#include <type_traits>

#include <dimtensor/config.hpp>
#include <dimtensor/core/dim.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dim_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
struct not_a_tag {};
}  // namespace dim_test

namespace dt = dimtensor;
using namespace dim_test;

// index_t is PyTorch's int64.
static_assert(std::is_same_v<dt::index_t, std::int64_t>);

// A tag is a final class deriving from dim<itself>, with its name.
static_assert(std::is_final_v<Batch>);
static_assert(std::is_base_of_v<dt::dim<Batch>, Batch>);
static_assert(dt::DimTag<Batch> && dt::DimTag<Hidden>);
static_assert(!dt::DimTag<not_a_tag> && !dt::DimTag<int> && !dt::DimTag<dt::dim<Batch>>);
static_assert(!dt::DimTag<Hidden::fixed<8>>);
static_assert(dt::dim_name_v<Batch> == "Batch" && dt::dim_name_v<Hidden> == "Hidden");

// Tag::fixed<N> is fixed<Tag, N>.
static_assert(std::is_same_v<Hidden::fixed<8>, dt::fixed<Hidden, 8>>);
static_assert(Hidden::fixed<8>::value == 8);
static_assert(std::is_same_v<Hidden::fixed<8>::dim_type, Hidden>);

// One API for both kinds of spec.
static_assert(std::is_same_v<dt::dim_of<Batch>, Batch>);
static_assert(std::is_same_v<dt::dim_of<Hidden::fixed<8>>, Hidden>);
static_assert(dt::static_extent_v<Batch> == dt::dynamic_extent);
static_assert(dt::static_extent_v<Hidden::fixed<8>> == 8);
static_assert(dt::static_extent_v<Hidden::fixed<0>> == 0);
static_assert(dt::static_extent_v<Hidden::fixed<1>> == 1);
static_assert(!dt::is_static_v<Batch> && dt::is_static_v<Hidden::fixed<8>> && dt::is_static_v<Hidden::fixed<0>>);
static_assert(dt::DimSpec<Batch> && dt::DimSpec<Hidden::fixed<3>>);
static_assert(!dt::DimSpec<int> && !dt::DimSpec<not_a_tag> && !dt::DimSpec<dt::fixed<int, 3>>);

// A tag value is a named extent or index; the constructor is explicit so a
// bare integer never stands for a dim.
static_assert(!std::is_convertible_v<int, Batch>);
static_assert(std::is_constructible_v<Batch, int>);
static_assert(Batch(7).value == 7 && Batch{}.value == 0);

TEST_CASE("dim: tags, static extents and specs", "[core][dim]") {
  // The checks above are compile-time; these repeat the value parts at run time.
  Batch const b(3);
  CHECK(b.value == 3);
  CHECK(dt::dim_name_v<Batch> == std::string_view("Batch"));
  CHECK(dt::static_extent_v<Hidden::fixed<16>> == 16);
  CHECK(dt::static_extent_v<Hidden> == -1);
  constexpr Hidden::fixed<4> four{};
  CHECK(decltype(four)::value == 4);
}

// prime<D>: a second dim derived from D, printed D'.
static_assert(dt::DimTag<dt::prime<Hidden>> && dt::DimSpec<dt::prime<Hidden>>);
static_assert(std::is_final_v<dt::prime<Hidden>>);
static_assert(!std::is_same_v<dt::prime<Hidden>, Hidden>);
static_assert(!std::is_same_v<dt::prime<Hidden>, dt::prime<Batch>>);
static_assert(!std::is_same_v<dt::prime<dt::prime<Hidden>>, dt::prime<Hidden>>);
static_assert(dt::dim_name_v<dt::prime<Hidden>> == "Hidden'");
static_assert(dt::dim_name_v<dt::prime<dt::prime<Hidden>>> == "Hidden''");
static_assert(std::is_same_v<dt::prime<Hidden>::fixed<4>, dt::fixed<dt::prime<Hidden>, 4>>);
static_assert(std::is_same_v<dt::dim_of<dt::prime<Hidden>::fixed<4>>, dt::prime<Hidden>>);
static_assert(dt::static_extent_v<dt::prime<Hidden>::fixed<4>> == 4);
static_assert(!std::is_convertible_v<int, dt::prime<Hidden>>);
static_assert(dt::prime<Hidden>(5).value == 5);

TEST_CASE("dim: prime<D> is a dimension of its own, printed D'", "[core][dim]") {
  CHECK(dt::dim_name_v<dt::prime<Hidden>> == std::string_view("Hidden'"));
  CHECK(dt::dim_name_v<dt::prime<Batch>> == std::string_view("Batch'"));
  CHECK(dt::dim_name_v<dt::prime<dt::prime<Hidden>>>.size() == 8);

  // A shape may hold D and D' side by side: a square matrix [Hidden, Hidden'].
  auto m = dt::zeros<float>(Hidden(2), dt::prime<Hidden>(3));
  STATIC_REQUIRE(std::is_same_v<decltype(m), dt::tensor<float, Hidden, dt::prime<Hidden>>>);
  CHECK(m.extent<Hidden>() == 2);
  CHECK(m.extent<dt::prime<Hidden>>() == 3);
  m(Hidden(1), dt::prime<Hidden>(2)) = 7.0f;
  CHECK(m(dt::prime<Hidden>(2), Hidden(1)) == 7.0f);  // named indices, in any order
  CHECK(dt::detail::shape_string<typename decltype(m)::specs>(m.extents()) == "[Hidden=2, Hidden'=3]");

  // Static extents too.
  dt::tensor<double, dt::prime<Hidden>::fixed<2>, Hidden> const s{{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  CHECK(s(dt::prime<Hidden>(1), Hidden(0)) == 4.0);

  // rename<Hidden, Hidden'> moves a tensor into the primed dim, sharing its elements.
  auto const v = dt::arange<float>(Hidden(3));
  auto const p = dt::rename<Hidden, dt::prime<Hidden>>(v);
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(p)>::specs, dt::dims<dt::prime<Hidden>>>);
  CHECK(p(dt::prime<Hidden>(2)) == 2.0f);
  CHECK(p.data() == v.data());
}
