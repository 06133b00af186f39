// Tests of core/concepts.hpp.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>

#include <dimtensor/core/concepts.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/tensor/expression.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace concepts_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Hidden);
}  // namespace concepts_test

namespace dt = dimtensor;
using namespace concepts_test;

static_assert(dt::Element<float> && dt::Element<double> && dt::Element<std::int32_t> && dt::Element<std::int64_t> &&
              dt::Element<bool>);
static_assert(!dt::Element<char> && !dt::Element<std::uint32_t> && !dt::Element<long double> &&
              !dt::Element<float const> && !dt::Element<std::int16_t>);

using t2 = dt::tensor<float, Batch, Hidden>;
static_assert(dt::Expression<t2>);
static_assert(dt::Expression<dt::tensor<int, Hidden::fixed<3>>>);
static_assert(dt::Expression<dt::tensor<double>>);
static_assert(dt::Expression<dt::scalar_expr<dt::cpu, float>>);
static_assert(dt::Expression<decltype(std::declval<t2>() + 1.0f)>);
static_assert(dt::Expression<decltype(dt::exp(std::declval<t2>()))>);
static_assert(!dt::Expression<float> && !dt::Expression<std::array<dt::index_t, 2>> && !dt::Expression<dt::ill_formed>);

static_assert(dt::Scalar<float> && dt::Scalar<int const&> && dt::Scalar<bool> && !dt::Scalar<t2>);
static_assert(std::is_same_v<dt::expr_t<t2 const&>, t2>);

TEST_CASE("concepts: Element, Expression, Scalar (checked at compile time)", "[core][concepts]") {
  CHECK(dt::Expression<t2>);
  CHECK_FALSE(dt::Expression<float>);
  CHECK_FALSE(dt::Element<char>);
}
