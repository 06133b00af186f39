// Tests of core/broadcast.hpp: the rule at the type level, and what it means
// at run time (through map_expr, which applies it to extents).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <type_traits>

#include <dimtensor/core/broadcast.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>

namespace broadcast_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
}  // namespace broadcast_test

namespace dt = dimtensor;
namespace d = dimtensor::detail;
using namespace broadcast_test;
using dt::dims;

template <class L, class R>
using bt = typename d::broadcast<L, R>::type;

// Missing leading dims are broadcast; the result has the longer operand's order.
static_assert(std::is_same_v<bt<dims<Batch, Queries, Hidden>, dims<Hidden>>, dims<Batch, Queries, Hidden>>);
static_assert(std::is_same_v<bt<dims<Hidden>, dims<Batch, Queries, Hidden>>, dims<Batch, Queries, Hidden>>);
static_assert(std::is_same_v<bt<dims<>, dims<Batch, Hidden>>, dims<Batch, Hidden>>);
static_assert(std::is_same_v<bt<dims<Batch, Hidden>, dims<>>, dims<Batch, Hidden>>);
static_assert(std::is_same_v<bt<dims<>, dims<>>, dims<>>);
static_assert(d::broadcast<dims<Batch, Queries, Hidden>, dims<Queries, Hidden>>::ok);

// Static extent 1 broadcasts in either operand, and gives way to the other spec.
static_assert(std::is_same_v<bt<dims<Batch, Queries, KVPairs::fixed<1>, Hidden>,
                                dims<Batch, Queries::fixed<1>, KVPairs, Hidden>>,
                             dims<Batch, Queries, KVPairs, Hidden>>);
static_assert(std::is_same_v<bt<dims<Hidden::fixed<1>>, dims<Hidden::fixed<8>>>, dims<Hidden::fixed<8>>>);
static_assert(std::is_same_v<bt<dims<Hidden::fixed<8>>, dims<Hidden::fixed<1>>>, dims<Hidden::fixed<8>>>);
static_assert(std::is_same_v<bt<dims<Hidden::fixed<1>>, dims<Hidden::fixed<1>>>, dims<Hidden::fixed<1>>>);
static_assert(std::is_same_v<bt<dims<Hidden::fixed<1>>, dims<Hidden>>, dims<Hidden>>);
static_assert(std::is_same_v<bt<dims<Hidden>, dims<Hidden::fixed<1>>>, dims<Hidden>>);

// Equal static extents stay static; static with dynamic gives the static one.
static_assert(std::is_same_v<bt<dims<Hidden::fixed<8>>, dims<Hidden::fixed<8>>>, dims<Hidden::fixed<8>>>);
static_assert(std::is_same_v<bt<dims<Hidden::fixed<8>>, dims<Hidden>>, dims<Hidden::fixed<8>>>);
static_assert(std::is_same_v<bt<dims<Hidden>, dims<Hidden::fixed<8>>>, dims<Hidden::fixed<8>>>);
static_assert(std::is_same_v<bt<dims<Hidden>, dims<Hidden>>, dims<Hidden>>);

// Failures: the first bad position from the left, and its kind.
using attn_l = dims<Batch, KVPairs::fixed<1>, Queries, Hidden>;
using attn_r = dims<Batch, Queries::fixed<1>, KVPairs, Hidden>;
static_assert(!d::broadcast<attn_l, attn_r>::ok);
static_assert(d::broadcast<attn_l, attn_r>::first_bad == 1);
static_assert(d::broadcast_at<attn_l, attn_r, 1>::status == d::broadcast_status::dims_differ);
static_assert(std::is_same_v<dt::dim_of<d::broadcast_at<attn_l, attn_r, 1>::left>, KVPairs>);
static_assert(std::is_same_v<dt::dim_of<d::broadcast_at<attn_l, attn_r, 1>::right>, Queries>);
static_assert(d::broadcast_at<attn_l, attn_r, 0>::status == d::broadcast_status::ok);

using h8 = dims<Batch, Hidden::fixed<8>>;
using h16 = dims<Hidden::fixed<16>>;
static_assert(!d::broadcast<h8, h16>::ok && d::broadcast<h8, h16>::first_bad == 1);
static_assert(d::broadcast_at<h8, h16, 1>::status == d::broadcast_status::extents_differ);
static_assert(!d::broadcast<dims<Batch, Hidden>, dims<Hidden, Batch>>::ok);
static_assert(d::broadcast<dims<Batch, Hidden>, dims<Hidden, Batch>>::first_bad == 0);
// Static 1 broadcasts even against a static extent: not an extent mismatch.
static_assert(d::combine_specs<Hidden::fixed<1>, Hidden::fixed<16>>::status == d::broadcast_status::ok);
static_assert(d::combine_specs<Hidden::fixed<2>, Hidden::fixed<16>>::status == d::broadcast_status::extents_differ);
static_assert(d::combine_specs<Hidden, Batch>::status == d::broadcast_status::dims_differ);

namespace {

// Deterministic, distinct values.
template <class T>
void fill_pattern(T& t, float scale, float shift) {
  for (dt::index_t i = 0; i < t.size(); ++i) t.data()[i] = scale * static_cast<float>(i % 17) + shift;
}

}  // namespace

TEST_CASE("broadcast: additive attention [B,Q,1,H] + [B,1,K,H] matches naive loops", "[core][broadcast]") {
  constexpr dt::index_t nb = 2, nq = 3, nk = 5, nh = 4;
  auto q = dt::empty<float>(Batch(nb), Queries(nq), KVPairs::fixed<1>{}, Hidden(nh));
  auto k = dt::empty<float>(Batch(nb), Queries::fixed<1>{}, KVPairs(nk), Hidden(nh));
  fill_pattern(q, 0.25f, -1.0f);
  fill_pattern(k, -0.5f, 2.0f);

  auto sum = q + k;
  static_assert(std::is_same_v<decltype(sum)::specs, dims<Batch, Queries, KVPairs, Hidden>>);
  REQUIRE(sum.extents() == std::array<dt::index_t, 4>{nb, nq, nk, nh});

  dt::tensor<float, Batch, Queries, KVPairs, Hidden> features = dt::tanh(sum);
  // The other order gives the same dims and values.
  dt::tensor<float, Batch, Queries, KVPairs, Hidden> swapped = k + q;
  for (dt::index_t b = 0; b < nb; ++b)
    for (dt::index_t i = 0; i < nq; ++i)
      for (dt::index_t j = 0; j < nk; ++j)
        for (dt::index_t h = 0; h < nh; ++h) {
          float const qv = q.data()[((b * nq + i) * 1 + 0) * nh + h];
          float const kv = k.data()[((b * 1 + 0) * nk + j) * nh + h];
          INFO("b=" << b << " q=" << i << " k=" << j << " h=" << h);
          REQUIRE(features(Batch(b), Queries(i), KVPairs(j), Hidden(h)) == Approx(std::tanh(qv + kv)).margin(2e-7));
          REQUIRE(swapped(Hidden(h), KVPairs(j), Queries(i), Batch(b)) == kv + qv);
        }
}

TEST_CASE("broadcast: missing leading dims repeat the shorter operand", "[core][broadcast]") {
  auto x = dt::empty<double>(Batch(3), Queries(2), Hidden(4));
  auto bias = dt::empty<double>(Hidden(4));
  fill_pattern(x, 1.0f, 0.0f);
  fill_pattern(bias, 10.0f, 0.5f);
  auto row = dt::empty<double>(Queries(2), Hidden(4));
  fill_pattern(row, 100.0f, 0.0f);

  auto y = dt::eval(x + bias);
  auto z = dt::eval(row - x);
  for (dt::index_t b = 0; b < 3; ++b)
    for (dt::index_t i = 0; i < 2; ++i)
      for (dt::index_t h = 0; h < 4; ++h) {
        double const xv = x(Batch(b), Queries(i), Hidden(h));
        REQUIRE(y(Batch(b), Queries(i), Hidden(h)) == xv + bias(Hidden(h)));
        REQUIRE(z(Hidden(h), Queries(i), Batch(b)) == row(Queries(i), Hidden(h)) - xv);
      }
}

TEST_CASE("broadcast: a dynamic extent 1 is not broadcast", "[core][broadcast]") {
  auto a = dt::ones<float>(Batch(2), Hidden(1));
  auto b = dt::ones<float>(Batch(2), Hidden(5));
  REQUIRE_THROWS_AS(a + b, dt::shape_error);
  REQUIRE_THROWS_WITH(a + b, Catch::Contains("operator+") && Catch::Contains("Hidden") && Catch::Contains("1") &&
                                 Catch::Contains("5"));
  REQUIRE_THROWS_WITH(b * a, Catch::Contains("operator*") && Catch::Contains("dimension Hidden: 5 (left) vs 1 (right)"));
  // Leading positions too.
  auto c = dt::ones<float>(Batch(1), Hidden(5));
  REQUIRE_THROWS_WITH(c - b, Catch::Contains("operator-") && Catch::Contains("dimension Batch: 1 (left) vs 2 (right)"));
}

TEST_CASE("broadcast: two dynamic extents must agree at run time", "[core][broadcast]") {
  auto a = dt::ones<float>(Queries(3), Hidden(4));
  auto b = dt::ones<float>(Queries(3), Hidden(6));
  REQUIRE_THROWS_AS(a / b, dt::shape_error);
  REQUIRE_THROWS_WITH(a / b, Catch::Equals("operator/: extent mismatch for dimension Hidden: 4 (left) vs 6 (right)"));
  REQUIRE_THROWS_WITH(dt::maximum(a, b), Catch::StartsWith("maximum:") && Catch::Contains("Hidden: 4 (left) vs 6"));
}

TEST_CASE("broadcast: static against dynamic is checked at run time", "[core][broadcast]") {
  auto s = dt::ones<float>(Batch(2), Hidden::fixed<8>{});
  auto ok = dt::ones<float>(Batch(2), Hidden(8));
  auto bad = dt::ones<float>(Batch(2), Hidden(7));
  auto sum = s + ok;
  static_assert(std::is_same_v<decltype(sum)::specs, dims<Batch, Hidden::fixed<8>>>);
  auto r = dt::eval(sum);
  CHECK(r.extent<Hidden>() == 8);
  CHECK(r(Batch(1), Hidden(7)) == 2.0f);
  REQUIRE_THROWS_WITH(s + bad, Catch::Contains("operator+") && Catch::Contains("Hidden: 8 (left) vs 7 (right)"));
  REQUIRE_THROWS_WITH(bad + s, Catch::Contains("operator+") && Catch::Contains("Hidden: 7 (left) vs 8 (right)"));
}

TEST_CASE("broadcast: static 1 against dynamic takes the other extent", "[core][broadcast]") {
  auto one = dt::full<float>(3.0f, Batch(2), Hidden::fixed<1>{});
  auto many = dt::arange<float>(Hidden(4));
  auto r = dt::eval(one * many);
  static_assert(std::is_same_v<decltype(r)::specs, dims<Batch, Hidden>>);
  REQUIRE(r.extents() == std::array<dt::index_t, 2>{2, 4});
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 4; ++h) REQUIRE(r(Batch(b), Hidden(h)) == 3.0f * static_cast<float>(h));
  // A static 1 against a dynamic 1 gives 1.
  auto r1 = dt::eval(one + dt::ones<float>(Hidden(1)));
  REQUIRE(r1.extents() == std::array<dt::index_t, 2>{2, 1});
  CHECK(r1(Batch(1), Hidden(0)) == 4.0f);
  // Both static 1: stays 1.
  auto r2 = dt::eval(one + one);
  static_assert(std::is_same_v<decltype(r2)::specs, dims<Batch, Hidden::fixed<1>>>);
  CHECK(r2(Batch(0), Hidden(0)) == 6.0f);
}
