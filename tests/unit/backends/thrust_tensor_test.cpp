// Tensors of the Thrust backend on its host systems (C++ and OpenMP): the
// storage, the constructors, fused expressions with broadcasting, strided
// writes, moves between backends (and their gradient), contractions on
// strided views, and the same random numbers as the CPU for a seed — each
// checked against the CPU backend computing the same thing.

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include <dimtensor/backends/thrust.hpp>
#include <dimtensor/dimtensor.hpp>

namespace thrust_tensor_test {

namespace dt = dimtensor;
using dt::index_t;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

/// The largest |a - b| over two tensors of the same dims (b on any backend).
template <class A, class B>
double max_difference(A const& a, B const& b) {
  auto const x = dt::to<dt::cpu>(a).contiguous();
  auto const y = dt::to<dt::cpu>(b).contiguous();
  REQUIRE(x.extents() == y.extents());
  double m = 0;
  for (index_t i = 0; i < x.size(); ++i) {
    m = std::max(m, std::abs(static_cast<double>(x.data()[i]) - static_cast<double>(y.data()[i])));
  }
  return m;
}

#if defined(_OPENMP)
#define THRUST_TENSOR_TEST_BACKENDS dt::thrust_cpp, dt::thrust_omp
#else
#define THRUST_TENSOR_TEST_BACKENDS dt::thrust_cpp
#endif

TEMPLATE_TEST_CASE("thrust tensors: construction, element access, item, fill", "[backends][thrust]",
                   THRUST_TENSOR_TEST_BACKENDS) {
  using B = TestType;
  STATIC_REQUIRE(B::host_accessible);
  dt::basic_tensor<B, float, Batch, Hidden> z(Batch(2), Hidden(3));
  for (index_t b = 0; b < 2; ++b) {
    for (index_t h = 0; h < 3; ++h) CHECK(z(Batch(b), Hidden(h)) == 0.0f);
  }
  dt::basic_tensor<B, std::int64_t, Batch, Hidden> x{{1, 2, 3}, {4, 5, 6}};
  CHECK(x(Batch(1), Hidden(0)) == 4);
  CHECK(x(Hidden(2), Batch(0)) == 3);
  x.fill(7);
  CHECK(x(Batch(1), Hidden(2)) == 7);
  dt::basic_tensor<B, double> s{};
  s.fill(2.5);
  CHECK(s.item() == 2.5);
  CHECK_THROWS_AS(x.item(), dt::shape_error);
  auto const r = dt::to<B>(dt::arange<float>(Hidden(5)));
  CHECK(r(Hidden(4)) == 4.0f);
}

TEMPLATE_TEST_CASE("thrust tensors: fused expressions agree with the CPU backend", "[backends][thrust]",
                   THRUST_TENSOR_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(11);
  auto const a = dt::rand<float>(gen, Batch(3), Queries(4), Hidden(5));
  auto const bias = dt::rand<float>(gen, Hidden(5));
  auto const ta = dt::to<B>(a);
  auto const tb = dt::to<B>(bias);
  STATIC_REQUIRE(std::is_same_v<typename decltype(ta)::backend, B>);

  // Broadcasting over leading dims, math functions, scalars: one fused pass.
  dt::basic_tensor<B, float, Batch, Queries, Hidden> const y = dt::tanh(ta * 2.0f + tb) - dt::exp(-ta);
  dt::tensor<float, Batch, Queries, Hidden> const expected = dt::tanh(a * 2.0f + bias) - dt::exp(-a);
  CHECK(max_difference(y, expected) <= 1e-6);

  // A transposed (strided) operand, read row by row.
  auto const t = dt::transpose<Queries, Hidden>(ta);
  dt::basic_tensor<B, float, Batch, Hidden, Queries> const tc = t * 3.0f;
  dt::tensor<float, Batch, Hidden, Queries> const tc_cpu = dt::transpose<Queries, Hidden>(a) * 3.0f;
  CHECK(max_difference(tc, tc_cpu) == 0.0);
  CHECK(max_difference(t.contiguous(), dt::transpose<Queries, Hidden>(a).contiguous()) == 0.0);

  // Writing into a strided view of a Thrust tensor.
  auto dst = dt::basic_tensor<B, float, Batch, Queries, Hidden>(Batch(3), Queries(4), Hidden(5));
  auto view = dt::transpose<Queries, Hidden>(dst);
  {
    dt::autograd::no_grad guard;
    view.assign(t + 1.0f);
  }
  CHECK(max_difference(dst, a + 1.0f) <= 1e-7);
}

TEMPLATE_TEST_CASE("thrust tensors: random numbers and factories match the CPU for one seed", "[backends][thrust]",
                   THRUST_TENSOR_TEST_BACKENDS) {
  using B = TestType;
  auto const on_cpu = dt::rand<double>(dt::manual_seed(5), Batch(4), Hidden(6));
  auto const moved = dt::to<B>(on_cpu);
  CHECK(max_difference(moved, on_cpu) == 0.0);
  auto const back = dt::to<dt::cpu>(moved);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(back)>, dt::tensor<double, Batch, Hidden>>);
  CHECK(back.data() != on_cpu.data());
  auto const same = dt::to<dt::cpu>(on_cpu);
  CHECK(same.data() == on_cpu.data());  // already there: the same elements
}

TEMPLATE_TEST_CASE("thrust tensors: bmm and contract on strided views agree with the CPU", "[backends][thrust]",
                   THRUST_TENSOR_TEST_BACKENDS) {
  using B = TestType;
  auto& gen = dt::manual_seed(3);
  auto const q = dt::rand<float>(gen, Batch(2), Queries(3), Hidden(4));
  auto const k = dt::rand<float>(gen, Batch(2), KVPairs(5), Hidden(4));
  auto const scores_cpu = dt::bmm(q, dt::transpose<KVPairs, Hidden>(k));
  auto const scores = dt::bmm(dt::to<B>(q), dt::transpose<KVPairs, Hidden>(dt::to<B>(k)));
  CHECK(max_difference(scores, scores_cpu) <= 1e-6);
  auto const c_cpu = dt::contract<Hidden>(q, k);
  auto const c = dt::contract<Hidden>(dt::to<B>(q), dt::to<B>(k));
  CHECK(max_difference(c, c_cpu) <= 1e-6);

  // Integers go through the reference kernel on every backend.
  dt::tensor<std::int64_t, Batch, Queries, Hidden> const qi{{{1, 2}, {3, 4}}};
  dt::tensor<std::int64_t, Batch, Hidden, KVPairs> const ki{{{5, 6, 7}, {8, 9, 10}}};
  CHECK(max_difference(dt::bmm(dt::to<B>(qi), dt::to<B>(ki)), dt::bmm(qi, ki)) == 0.0);
}

TEMPLATE_TEST_CASE("thrust tensors: the gradient of a move goes back to the source backend", "[backends][thrust]",
                   THRUST_TENSOR_TEST_BACKENDS) {
  using B = TestType;
  auto x = dt::rand<double>(dt::manual_seed(9), Batch(2), Hidden(3));
  x.requires_grad_();
  auto const on_thrust = dt::to<B>(x);
  CHECK(on_thrust.requires_grad());
  auto const loss = dt::sum(on_thrust * on_thrust);
  loss.backward();
  REQUIRE(x.has_grad());
  CHECK(max_difference(x.grad(), x * 2.0) <= 1e-12);
}

}  // namespace thrust_tensor_test
