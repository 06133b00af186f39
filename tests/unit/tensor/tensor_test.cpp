// Tests of tensor/tensor.hpp: construction, element access, handles, clone,
// assign (with aliasing and into strided views), fill, contiguous, extents.
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace tensor_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
}  // namespace tensor_test

namespace dt = dimtensor;
using namespace tensor_test;
using dt::index_t;

namespace {

// A view of x's storage with other dims, extents and strides (what the
// structural ops build).
template <class... Out, class T, class... In>
dt::tensor<T, Out...> view_of(dt::tensor<T, In...> const& x, std::array<index_t, sizeof...(Out)> ext,
                              std::array<index_t, sizeof...(Out)> str, index_t offset = 0) {
  return dt::tensor<T, Out...>(x.storage(), x.data() + offset, ext, str);
}

template <class T>
void fill_iota(T& t) {
  for (index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<typename T::value_type>(i);
}

}  // namespace

// The named-extent constructor takes the dims in the tensor's order.
static_assert(std::is_constructible_v<dt::tensor<float, Batch, Hidden>, Batch, Hidden>);
static_assert(!std::is_constructible_v<dt::tensor<float, Batch, Hidden>, Hidden, Batch>);
static_assert(!std::is_constructible_v<dt::tensor<float, Batch, Hidden>, Batch>);
static_assert(!std::is_convertible_v<Batch, dt::tensor<float, Batch>>);  // explicit
static_assert(dt::tensor<float, Batch, Hidden::fixed<3>>::rank == 2);

TEST_CASE("tensor: named extents give a zero-filled tensor", "[core][tensor]") {
  dt::tensor<float, Batch, Queries> t(Batch(2), Queries(3));
  REQUIRE(t.extents() == std::array<index_t, 2>{2, 3});
  REQUIRE(t.strides() == std::array<index_t, 2>{3, 1});
  REQUIRE(t.size() == 6);
  REQUIRE(t.is_contiguous());
  for (index_t i = 0; i < 6; ++i) CHECK(t.data()[i] == 0.0f);

  dt::tensor<std::int64_t, Batch, Hidden::fixed<4>> s(Batch(3), Hidden::fixed<4>{});
  REQUIRE(s.extents() == std::array<index_t, 2>{3, 4});
  for (index_t i = 0; i < s.size(); ++i) CHECK(s.data()[i] == 0);
  // A dynamic value for a static dim is checked.
  dt::tensor<std::int64_t, Batch, Hidden::fixed<4>> s2(Batch(1), Hidden(4));
  CHECK(s2.size() == 4);
  REQUIRE_THROWS_AS((dt::tensor<float, Batch, Hidden::fixed<4>>(Batch(1), Hidden(5))), dt::shape_error);
  REQUIRE_THROWS_WITH((dt::tensor<float, Batch, Hidden::fixed<4>>(Batch(1), Hidden(5))),
                      "tensor: extent mismatch for dimension Hidden: 5 (given) vs 4 (static)");
  REQUIRE_THROWS_WITH((dt::tensor<float, Batch>(Batch(-2))), "tensor: negative extent -2 for dimension Batch");
}

TEST_CASE("tensor: braces with variable extents construct (no most vexing parse)", "[core][tensor]") {
  // `tensor<float, Batch, Queries> t(Batch(n), Queries(m));` with variables
  // declares a function; braces always declare the tensor.
  index_t const n = 2;
  index_t const m = 3;
  dt::tensor<float, Batch, Queries> t{Batch(n), Queries(m)};
  static_assert(dt::is_tensor_v<decltype(t)>);
  REQUIRE(t.extents() == std::array<index_t, 2>{2, 3});
  for (index_t i = 0; i < t.size(); ++i) CHECK(t.data()[i] == 0.0f);
  // Rank 1: a named extent in braces is an extent, never an element
  // (a tag does not convert to a number).
  dt::tensor<std::int64_t, Batch> one{Batch(n)};
  REQUIRE(one.extents() == std::array<index_t, 1>{2});
  CHECK(one(Batch(1)) == 0);
  dt::tensor<std::int64_t, Batch> values{n};  // numbers in braces are the elements
  REQUIRE(values.size() == 1);
  CHECK(values(Batch(0)) == 2);
  static_assert(!std::is_convertible_v<Batch, float> && !std::is_convertible_v<Batch, std::int64_t>);
  dt::tensor<float, Batch, Hidden::fixed<4>> s{Batch(n), Hidden::fixed<4>{}};
  CHECK(s.size() == 8);
}

TEST_CASE("tensor: default and extents constructors", "[core][tensor]") {
  dt::tensor<float, Batch, Hidden::fixed<4>> e;
  CHECK(e.extents() == std::array<index_t, 2>{0, 4});
  CHECK(e.size() == 0);
  dt::tensor<double, Hidden::fixed<3>> f;
  REQUIRE(f.size() == 3);
  for (index_t i = 0; i < 3; ++i) CHECK(f.data()[i] == 0.0);
  dt::tensor<int> r0;
  CHECK(r0.size() == 1);
  CHECK(r0.item() == 0);
  dt::tensor<float, Batch, Queries> g(std::array<index_t, 2>{4, 5});
  CHECK(g.size() == 20);
  CHECK(g(Batch(3), Queries(4)) == 0.0f);
}

TEST_CASE("tensor: nested initializer lists, rank 1 to 3", "[core][tensor]") {
  dt::tensor<int, Batch> r1{2, 6, 7};
  REQUIRE(r1.extents() == std::array<index_t, 1>{3});
  CHECK(r1(Batch(0)) == 2);
  CHECK(r1(Batch(2)) == 7);

  dt::tensor<float, Batch, Queries> r2{{1, 2, 3}, {4, 5, 6}};
  REQUIRE(r2.extents() == std::array<index_t, 2>{2, 3});
  for (index_t b = 0; b < 2; ++b)
    for (index_t q = 0; q < 3; ++q) CHECK(r2(Batch(b), Queries(q)) == static_cast<float>(b * 3 + q + 1));

  dt::tensor<double, Batch, Queries, Hidden> r3{{{1, 2}, {3, 4}, {5, 6}}, {{7, 8}, {9, 10}, {11, 12}}};
  REQUIRE(r3.extents() == std::array<index_t, 3>{2, 3, 2});
  CHECK(r3(Batch(1), Queries(2), Hidden(1)) == 12.0);
  CHECK(r3(Hidden(0), Batch(1), Queries(0)) == 7.0);

  dt::tensor<bool, Batch> flags{true, false, true};
  CHECK(flags(Batch(1)) == false);

  dt::tensor<float, Batch, Hidden::fixed<2>> st{{1, 2}, {3, 4}, {5, 6}};
  CHECK(st(Batch(2), Hidden(1)) == 6.0f);

  dt::tensor<float, Batch, Queries> empty_rows{{}, {}};
  CHECK(empty_rows.extents() == std::array<index_t, 2>{2, 0});
}

TEST_CASE("tensor: ragged or mis-sized initializer lists throw", "[core][tensor]") {
  using t2 = dt::tensor<float, Batch, Queries>;
  REQUIRE_THROWS_AS((t2{{1, 2, 3}, {4, 5}}), dt::shape_error);
  REQUIRE_THROWS_WITH((t2{{1, 2, 3}, {4, 5}}),
                      "tensor: ragged initializer list: extent mismatch for dimension Queries: 3 (first list) vs 2 "
                      "(a later list)");
  using t3 = dt::tensor<int, Batch, Queries, Hidden>;
  REQUIRE_THROWS_WITH((t3{{{1, 2}, {3, 4}}, {{5, 6}, {7}}}), Catch::Contains("dimension Hidden: 2 (first list) vs 1"));
  REQUIRE_THROWS_WITH((t3{{{1, 2}, {3, 4}}, {{5, 6}}}), Catch::Contains("dimension Queries: 2 (first list) vs 1"));
  // A static extent that the braces do not have.
  using ts = dt::tensor<float, Batch, Hidden::fixed<3>>;
  REQUIRE_THROWS_AS((ts{{1, 2}, {3, 4}}), dt::shape_error);
  REQUIRE_THROWS_WITH((ts{{1, 2}, {3, 4}}), "tensor: extent mismatch for dimension Hidden: 2 (given) vs 3 (static)");
}

TEST_CASE("tensor: element access by names in any order, range-checked", "[core][tensor]") {
  auto x = dt::empty<float>(Batch(2), Queries(3), Hidden(4));
  fill_iota(x);
  for (index_t b = 0; b < 2; ++b)
    for (index_t q = 0; q < 3; ++q)
      for (index_t h = 0; h < 4; ++h) {
        float const want = static_cast<float>((b * 3 + q) * 4 + h);
        REQUIRE(x(Batch(b), Queries(q), Hidden(h)) == want);
        REQUIRE(x(Hidden(h), Batch(b), Queries(q)) == want);
        REQUIRE(x(Queries(q), Hidden(h), Batch(b)) == want);
      }
  x(Queries(1), Batch(0), Hidden(2)) = -1.0f;  // writable, through a const handle too
  CHECK(x.data()[6] == -1.0f);

  REQUIRE_THROWS_AS(x(Batch(0), Queries(3), Hidden(0)), dt::value_error);
  REQUIRE_THROWS_WITH(x(Batch(0), Queries(3), Hidden(0)),
                      "element access: index 3 out of range for dimension Queries of extent 3");
  REQUIRE_THROWS_WITH(x(Hidden(-1), Batch(0), Queries(0)),
                      "element access: index -1 out of range for dimension Hidden of extent 4");
  REQUIRE_THROWS_WITH(x(Batch(2), Queries(0), Hidden(0)), Catch::Contains("dimension Batch of extent 2"));

  dt::tensor<double> scalar;
  scalar() = 2.5;
  CHECK(scalar() == 2.5);
}

TEST_CASE("tensor: item()", "[core][tensor]") {
  dt::tensor<float> s;
  s() = 3.5f;
  CHECK(s.item() == 3.5f);
  dt::tensor<int, Batch, Hidden> one{{42}};
  CHECK(one.item() == 42);
  dt::tensor<int, Batch> three{1, 2, 3};
  REQUIRE_THROWS_AS(three.item(), dt::shape_error);
  REQUIRE_THROWS_WITH(three.item(), "item: the tensor [Batch=3] has 3 elements, not 1");
}

TEST_CASE("tensor: copies share, clone() copies", "[core][tensor]") {
  dt::tensor<float, Batch, Queries> a{{1, 2}, {3, 4}};
  auto b = a;  // a handle
  auto c = a.clone();
  CHECK(b.data() == a.data());
  CHECK(c.data() != a.data());
  CHECK(c.storage() != a.storage());
  CHECK(a.storage().use_count() == 2);
  a(Batch(0), Queries(1)) = 20.0f;
  CHECK(b(Batch(0), Queries(1)) == 20.0f);
  CHECK(c(Batch(0), Queries(1)) == 2.0f);
  c(Batch(1), Queries(1)) = -4.0f;
  CHECK(a(Batch(1), Queries(1)) == 4.0f);
  // eval() of a tensor is the tensor itself.
  auto e = dt::eval(a);
  CHECK(e.data() == a.data());
  // `=` rebinds: the old elements are left to the other handles.
  a = a + 1.0f;
  CHECK(a.data() != b.data());
  CHECK(a(Batch(0), Queries(0)) == 2.0f);
  CHECK(b(Batch(0), Queries(0)) == 1.0f);
}

TEST_CASE("tensor: clone() of a strided view is contiguous", "[core][tensor]") {
  auto x = dt::empty<int>(Batch(3), Hidden(4));
  fill_iota(x);
  auto xt = view_of<Hidden, Batch>(x, {4, 3}, {1, 4});  // transpose
  REQUIRE_FALSE(xt.is_contiguous());
  auto c = xt.clone();
  REQUIRE(c.is_contiguous());
  REQUIRE(c.extents() == std::array<index_t, 2>{4, 3});
  for (index_t b = 0; b < 3; ++b)
    for (index_t h = 0; h < 4; ++h) {
      CHECK(c(Hidden(h), Batch(b)) == x(Batch(b), Hidden(h)));
      CHECK(c.data()[h * 3 + b] == static_cast<int>(b * 4 + h));
    }
}

TEST_CASE("tensor: assign() writes in place", "[core][tensor]") {
  auto x = dt::full<float>(1.0f, Batch(2), Hidden(3));
  auto handle = x;
  float* const before = x.data();
  // The value must have the target's dims: broadcast it explicitly.
  x.assign(dt::zeros<float>(Batch(2), Hidden::fixed<1>{}) + dt::arange<float>(Hidden(3)) * 2.0f);
  CHECK(x.data() == before);
  for (index_t b = 0; b < 2; ++b)
    for (index_t h = 0; h < 3; ++h) CHECK(handle(Batch(b), Hidden(h)) == 2.0f * static_cast<float>(h));

  // Extents must agree with the expression's (no broadcasting into a target).
  REQUIRE_THROWS_AS(x.assign(dt::ones<float>(Batch(3), Hidden(3))), dt::shape_error);
  REQUIRE_THROWS_WITH(x.assign(dt::ones<float>(Batch(3), Hidden(3))),
                      "assign: extent mismatch for dimension Batch: 2 (target) vs 3 (value)");
}

TEST_CASE("tensor: assign() may read its own elements (aliasing)", "[core][tensor]") {
  auto x = dt::empty<float>(Batch(2), Hidden(3));
  fill_iota(x);
  x.assign(x + 1.0f);
  for (index_t i = 0; i < 6; ++i) CHECK(x.data()[i] == static_cast<float>(i + 1));
  x.assign(x * x - x);
  for (index_t i = 0; i < 6; ++i) CHECK(x.data()[i] == static_cast<float>((i + 1) * i));

  // Reading a transposed view of the target: every element must come from the
  // old values, which an in-place loop would have overwritten.
  auto sq = dt::empty<int>(Batch(3), Hidden(3));
  fill_iota(sq);
  auto sq_t = view_of<Batch, Hidden>(sq, {3, 3}, {1, 3});
  sq.assign(sq_t + 0);
  for (index_t b = 0; b < 3; ++b)
    for (index_t h = 0; h < 3; ++h) CHECK(sq(Batch(b), Hidden(h)) == static_cast<int>(h * 3 + b));
}

TEST_CASE("tensor: assign() and fill() into non-contiguous views", "[core][tensor]") {
  auto x = dt::empty<float>(Batch(2), Hidden(4));
  fill_iota(x);
  // Every other column: [Batch=2, Hidden=2], strides {4, 2}.
  auto even = view_of<Batch, Hidden>(x, {2, 2}, {4, 2});
  REQUIRE_FALSE(even.is_contiguous());
  even.fill(-1.0f);
  float const after_fill[8] = {-1, 1, -1, 3, -1, 5, -1, 7};
  for (index_t i = 0; i < 8; ++i) CHECK(x.data()[i] == after_fill[i]);

  auto odd = view_of<Batch, Hidden>(x, {2, 2}, {4, 2}, 1);
  odd.assign(odd * 10.0f + even);  // reads two views of x, writes one of them
  float const after_assign[8] = {-1, 9, -1, 29, -1, 49, -1, 69};
  for (index_t i = 0; i < 8; ++i) CHECK(x.data()[i] == after_assign[i]);

  // A transposed view: [Hidden=4, Batch=2] over x.
  auto xt = view_of<Hidden, Batch>(x, {4, 2}, {1, 4});
  xt.assign(dt::arange<float>(Batch(2)) + dt::full<float>(100.0f, Hidden(4), Batch::fixed<1>{}));
  for (index_t b = 0; b < 2; ++b)
    for (index_t h = 0; h < 4; ++h) CHECK(x(Batch(b), Hidden(h)) == 100.0f + static_cast<float>(b));
  REQUIRE_THROWS_WITH(xt.assign(dt::ones<float>(Hidden(4), Batch(3))),
                      "assign: extent mismatch for dimension Batch: 2 (target) vs 3 (value)");
}

TEST_CASE("tensor: fill()", "[core][tensor]") {
  auto x = dt::zeros<double>(Batch(3), Hidden(5));
  x.fill(2.5);
  for (index_t i = 0; i < x.size(); ++i) CHECK(x.data()[i] == 2.5);
  dt::tensor<double> s;
  s.fill(-1.0);
  CHECK(s.item() == -1.0);
  auto none = dt::zeros<double>(Batch(0), Hidden(5));
  CHECK_NOTHROW(none.fill(1.0));
}

TEST_CASE("tensor: contiguous()", "[core][tensor]") {
  auto x = dt::empty<float>(Batch(2), Hidden(3));
  fill_iota(x);
  auto same = x.contiguous();
  CHECK(same.data() == x.data());
  auto xt = view_of<Hidden, Batch>(x, {3, 2}, {1, 3});
  auto c = xt.contiguous();
  CHECK(c.data() != x.data());
  REQUIRE(c.is_contiguous());
  for (index_t b = 0; b < 2; ++b)
    for (index_t h = 0; h < 3; ++h) CHECK(c(Hidden(h), Batch(b)) == x(Batch(b), Hidden(h)));
  // An unsqueezed dim (extent 1, any stride) does not make a tensor non-contiguous.
  auto u = view_of<Batch, Queries, Hidden>(x, {2, 1, 3}, {3, 0, 1});
  CHECK(u.is_contiguous());
  CHECK(u.contiguous().data() == x.data());
}

TEST_CASE("tensor: extent<D>() is an integral_constant for static dims", "[core][tensor]") {
  dt::tensor<float, Batch, Hidden::fixed<8>> t(Batch(3), Hidden::fixed<8>{});
  static_assert(std::is_same_v<decltype(t.extent<Hidden>()), std::integral_constant<index_t, 8>>);
  static_assert(std::is_same_v<decltype(t.extent<Batch>()), index_t>);
  static_assert(decltype(t.extent<Hidden>())::value == 8);
  CHECK(t.extent<Batch>() == 3);
  CHECK(t.extent<Hidden>() == 8);
  static_assert(std::is_same_v<decltype(t.named_extent<Hidden>()), Hidden>);
  CHECK(t.named_extent<Hidden>().value == 8);
  CHECK(t.named_extent<Batch>().value == 3);
}

TEST_CASE("tensor: converting from an expression checks static extents", "[core][tensor]") {
  auto dyn = dt::ones<float>(Hidden(5));
  auto ok = dt::ones<float>(Hidden(4));
  using fixed4 = dt::tensor<float, Hidden::fixed<4>>;
  fixed4 f = ok * 3.0f;
  CHECK(f(Hidden(3)) == 3.0f);
  REQUIRE_THROWS_AS(fixed4(dyn * 3.0f), dt::shape_error);
  REQUIRE_THROWS_WITH(fixed4(dyn * 3.0f), "tensor: extent mismatch for dimension Hidden: 5 (given) vs 4 (static)");
  // A dynamic tensor holds a static expression.
  dt::tensor<float, Hidden> d = f + 1.0f;
  CHECK(d(Hidden(0)) == 4.0f);
}

TEST_CASE("tensor: extents whose element count overflows are a value_error", "[core][tensor]") {
  index_t const big = index_t{1} << 40;
  REQUIRE_THROWS_AS((dt::tensor<float, Batch, Hidden>(Batch(big), Hidden(big))), dt::value_error);
  REQUIRE_THROWS_WITH((dt::tensor<float, Batch, Hidden>(Batch(big), Hidden(big))),
                      Catch::StartsWith("tensor: the extents [Batch=1099511627776, Hidden=1099511627776] hold more"));
  REQUIRE_THROWS_AS(dt::zeros<double>(Batch(std::numeric_limits<index_t>::max() / 4)), dt::value_error);
  REQUIRE_THROWS_AS(dt::zeros<float>(Batch(0), Queries(big), Hidden(big)), dt::value_error);
  auto empty = dt::zeros<float>(Batch(0), Queries(big), Hidden(3));
  CHECK(empty.size() == 0);
  CHECK(empty.strides() == std::array<index_t, 3>{big * 3, 3, 1});
}
