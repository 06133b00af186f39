// Tests of core/diagnostic.hpp: ill_formed propagates silently.  The
// diagnoses themselves are tested by tests/compile_fail/*.cpp.
#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/core/diagnostic.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace diagnostic_test {
DIMTENSOR_DIM(Batch);
}  // namespace diagnostic_test

namespace dt = dimtensor;
using namespace diagnostic_test;

static_assert(dt::is_ill_formed_v<dt::ill_formed> && dt::is_ill_formed_v<dt::ill_formed const&>);
static_assert(!dt::is_ill_formed_v<int>);
static_assert(dt::any_ill_formed_v<int, dt::ill_formed, float> && !dt::any_ill_formed_v<int, float>);
static_assert(!dt::any_ill_formed_v<>);

using t1 = dt::tensor<float, Batch>;
// Every operation given an ill_formed returns one, and reports nothing.
static_assert(std::is_same_v<decltype(std::declval<t1>() + dt::ill_formed{}), dt::ill_formed>);
static_assert(std::is_same_v<decltype(dt::ill_formed{} * 2.0f), dt::ill_formed>);
static_assert(std::is_same_v<decltype(2.0f - dt::ill_formed{}), dt::ill_formed>);
static_assert(std::is_same_v<decltype(-dt::ill_formed{}), dt::ill_formed>);
static_assert(std::is_same_v<decltype(dt::exp(dt::ill_formed{})), dt::ill_formed>);
static_assert(std::is_same_v<decltype(dt::cast<double>(dt::ill_formed{})), dt::ill_formed>);
static_assert(std::is_same_v<decltype(dt::where(dt::ill_formed{}, 1.0f, 0.0f)), dt::ill_formed>);
static_assert(std::is_same_v<decltype(dt::eval(dt::ill_formed{})), dt::ill_formed>);
// A tensor absorbs it.
static_assert(std::is_convertible_v<dt::ill_formed, t1>);

TEST_CASE("diagnostic: ill_formed is absorbed without a second error", "[core][diagnostic]") {
  t1 t = dt::exp(dt::ill_formed{});
  CHECK(t.data() == nullptr);
  CHECK(t.size() == 0);
}
