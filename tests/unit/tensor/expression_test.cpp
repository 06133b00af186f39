// Tests of tensor/expression.hpp: lazy nodes, their dims and extents, handles
// that keep operands alive, and evaluation by the flat and the row paths.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <type_traits>

#include <dimtensor/ops/creation.hpp>
#include <dimtensor/ops/elementwise.hpp>
#include <dimtensor/ops/unsqueeze.hpp>
#include <dimtensor/tensor/expression.hpp>

namespace expression_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);

// Counts how many elements were computed.
struct counting_square {
  int* calls;
  template <class T>
  T operator()(T x) const {
    ++*calls;
    return x * x;
  }
};
}  // namespace expression_test

namespace dt = dimtensor;
using namespace expression_test;
using dt::index_t;

namespace {

template <class... Out, class T, class... In>
dt::tensor<T, Out...> view_of(dt::tensor<T, In...> const& x, std::array<index_t, sizeof...(Out)> ext,
                              std::array<index_t, sizeof...(Out)> str, index_t offset = 0) {
  return dt::tensor<T, Out...>(x.storage(), x.data() + offset, ext, str);
}

template <class T>
void fill_iota(T& t, double scale = 1.0) {
  for (index_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<typename T::value_type>(scale * static_cast<double>(i));
}

}  // namespace

TEST_CASE("expression: a node computes nothing until evaluated", "[core][expression]") {
  auto x = dt::empty<float>(Batch(2), Hidden(3));
  fill_iota(x);
  int calls = 0;
  dt::map_expr<counting_square, decltype(x)> node("count", counting_square{&calls}, x);
  CHECK(calls == 0);
  static_assert(std::is_same_v<decltype(node)::specs, dt::dims<Batch, Hidden>>);
  CHECK(node.extents() == std::array<index_t, 2>{2, 3});

  // Elements changed after building are the ones evaluated.
  x(Batch(1), Hidden(2)) = 10.0f;
  auto y = node.eval();
  CHECK(calls == 6);
  CHECK(y(Batch(1), Hidden(2)) == 100.0f);
  CHECK(y(Batch(0), Hidden(1)) == 1.0f);

  // The public ops are lazy too.
  auto e = dt::exp(x) + x * 2.0f;
  x(Batch(0), Hidden(0)) = 1.0f;
  auto r = dt::eval(e);
  CHECK(r(Batch(0), Hidden(0)) == Approx(std::exp(1.0f) + 2.0f));
}

TEST_CASE("expression: a lazy node keeps its operands alive", "[core][expression]") {
  auto make = [] {
    auto a = dt::arange<double>(Hidden(4));
    auto b = dt::full<double>(0.5, Batch(2), Hidden(4));
    return dt::sqrt(a * b + 1.0);  // a and b die here; the node holds handles
  };
  auto node = make();
  // sqrt(plus(multiplies(a, b), 1.0)): the node is now a's only owner.
  auto const& product = std::get<0>(std::get<0>(node.operands()).operands());
  auto const& leaf_a = std::get<0>(product.operands());
  CHECK(leaf_a.storage().use_count() == 1);
  CHECK(leaf_a(Hidden(3)) == 3.0);
  auto y = dt::eval(node);
  for (index_t b = 0; b < 2; ++b)
    for (index_t h = 0; h < 4; ++h) CHECK(y(Batch(b), Hidden(h)) == std::sqrt(static_cast<double>(h) * 0.5 + 1.0));

  // The node shares the elements: a write through the original shows.
  auto t = dt::ones<float>(Hidden(3));
  auto node2 = t + 1.0f;
  long const uses = t.storage().use_count();
  CHECK(uses == 2);
  t.fill(5.0f);
  CHECK(dt::eval(node2)(Hidden(2)) == 6.0f);
}

TEST_CASE("expression: scalar_expr", "[core][expression]") {
  dt::scalar_expr<dt::default_backend, double> s(1.5);
  static_assert(decltype(s)::rank == 0);
  static_assert(std::is_same_v<decltype(s)::specs, dt::dims<>>);
  CHECK(s.value() == 1.5);
  dt::tensor<double> t = s;
  CHECK(t.item() == 1.5);
  auto x = dt::zeros<double>(Batch(2));
  auto y = dt::eval(x + s);
  CHECK(y(Batch(1)) == 1.5);
}

TEST_CASE("expression: flat and row paths give the same values", "[core][expression]") {
  constexpr index_t nb = 3, nq = 4, nh = 5;
  auto a = dt::empty<float>(Batch(nb), Queries(nq), Hidden(nh));
  fill_iota(a, 0.5);
  auto b = dt::empty<float>(Batch(nb), Queries(nq), Hidden(nh));
  fill_iota(b, -0.25);
  // The same b, stored as [Hidden, Queries, Batch] and read through a permuted view.
  auto b_store = dt::empty<float>(Hidden(nh), Queries(nq), Batch(nb));
  for (index_t i = 0; i < nb; ++i)
    for (index_t j = 0; j < nq; ++j)
      for (index_t k = 0; k < nh; ++k) b_store(Hidden(k), Queries(j), Batch(i)) = b(Batch(i), Queries(j), Hidden(k));
  auto b_view = view_of<Batch, Queries, Hidden>(b_store, {nb, nq, nh}, {1, nb, nq * nb});
  REQUIRE_FALSE(b_view.is_contiguous());

  auto flat = dt::eval(a * b - dt::tanh(a));
  auto rows = dt::eval(a * b_view - dt::tanh(a));
  for (index_t n = 0; n < flat.size(); ++n) REQUIRE(flat.data()[n] == rows.data()[n]);
  for (index_t i = 0; i < nb; ++i)
    for (index_t j = 0; j < nq; ++j)
      for (index_t k = 0; k < nh; ++k) {
        float const av = a(Batch(i), Queries(j), Hidden(k));
        float const bv = b(Batch(i), Queries(j), Hidden(k));
        REQUIRE(rows(Batch(i), Queries(j), Hidden(k)) == Approx(av * bv - std::tanh(av)).margin(1e-5));
      }

  // Broadcast leaves read by rows, too.
  auto bias = dt::arange<float>(Hidden(nh));
  auto col = dt::empty<float>(Queries(nq), Hidden::fixed<1>{});
  fill_iota(col, 10.0);
  auto bc = dt::eval(a + bias + col);
  for (index_t i = 0; i < nb; ++i)
    for (index_t j = 0; j < nq; ++j)
      for (index_t k = 0; k < nh; ++k)
        REQUIRE(bc(Batch(i), Queries(j), Hidden(k)) ==
                a(Batch(i), Queries(j), Hidden(k)) + static_cast<float>(k) + 10.0f * static_cast<float>(j));
}

TEST_CASE("expression: rank 0 and extent 0", "[core][expression]") {
  dt::tensor<double> s;
  s() = 2.0;
  dt::tensor<double> t;
  t() = 3.0;
  auto r = dt::eval(s * t + 1.0);
  static_assert(decltype(r)::rank == 0);
  CHECK(r.item() == 7.0);
  // A rank-0 tensor broadcasts against anything (no positions to disagree at).
  auto v = dt::eval(dt::arange<double>(Hidden(3)) * s);
  CHECK(v(Hidden(2)) == 4.0);

  auto none = dt::zeros<float>(Batch(0), Hidden(3));
  auto e = dt::eval(none + dt::ones<float>(Hidden(3)));
  CHECK(e.extents() == std::array<index_t, 2>{0, 3});
  CHECK(e.size() == 0);
  auto inner0 = dt::zeros<float>(Batch(2), Hidden(0));
  auto inner0_t = view_of<Hidden, Batch>(inner0, {0, 2}, {1, 0});
  auto e2 = dt::eval(dt::exp(inner0_t));
  CHECK(e2.extents() == std::array<index_t, 2>{0, 2});
  auto e3 = dt::eval(inner0 * 2.0f);
  CHECK(e3.size() == 0);
  REQUIRE_THROWS_AS(none + dt::ones<float>(Hidden(4)), dt::shape_error);
}

TEST_CASE("expression: nodes of nodes broadcast step by step", "[core][expression]") {
  auto q = dt::arange<float>(Queries(3));
  auto h = dt::arange<float>(Hidden(2));
  auto qh = dt::empty<float>(Queries(3), Hidden::fixed<1>{});
  fill_iota(qh);
  auto node = (qh + h) * 2.0f - q.eval()(Queries(0));
  static_assert(std::is_same_v<decltype(node)::specs, dt::dims<Queries, Hidden>>);
  CHECK(node.extents() == std::array<index_t, 2>{3, 2});
  auto r = dt::eval(node);
  for (index_t i = 0; i < 3; ++i)
    for (index_t k = 0; k < 2; ++k) CHECK(r(Queries(i), Hidden(k)) == 2.0f * static_cast<float>(i + k));
}

TEST_CASE("expression: extent<D>() and named_extent<D>() without evaluating", "[core][expression]") {
  auto const a = dt::ones<float>(Batch(3), Hidden::fixed<4>{});
  auto const q = dt::ones<float>(Queries(5), Hidden::fixed<4>{});
  auto const e = dt::unsqueeze<Queries, 1>(a) + dt::unsqueeze<Batch, 0>(q) * 2.f;  // lazy [Batch, Queries, Hidden]
  STATIC_REQUIRE(!dt::is_tensor_v<std::remove_const_t<decltype(e)>>);
  CHECK(e.extent<Batch>() == 3);
  CHECK(e.extent<Queries>() == 5);
  STATIC_REQUIRE(std::is_same_v<decltype(e.extent<Hidden>()), std::integral_constant<dt::index_t, 4>>);
  CHECK(e.named_extent<Queries>().value == 5);
  STATIC_REQUIRE(std::is_same_v<decltype(e.named_extent<Batch>()), Batch>);
  // The same answers as the evaluated tensor's.
  auto const t = dt::eval(e);
  CHECK(t.extent<Queries>() == e.extent<Queries>());
  CHECK(t.extent<Batch>() == e.extent<Batch>());
}
