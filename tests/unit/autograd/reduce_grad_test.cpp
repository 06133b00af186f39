// Gradients of the reductions (sum, mean, max, min over a dim and over all
// elements), against central finite differences and hand-computed ties.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/reduce.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

namespace reduce_grad_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Feat);

using cube = dt::tensor<double, Batch, Queries, Feat>;
using matrix = dt::tensor<double, Batch, Feat>;

// A cube of distinct values (a permutation of k / 10 shifted), so that max
// and min have a margin of 0.1 to the runner-up: finite differences with a
// step of 1e-6 never cross a tie.
cube distinct_cube(dt::index_t b, dt::index_t q, dt::index_t f) {
  cube x(dt::uninitialized, {b, q, f});
  dt::index_t const n = x.size();
  for (dt::index_t k = 0; k < n; ++k) x.data()[k] = static_cast<double>((k * 7 + 3) % n) / 10.0 - 1.0;
  return x;
}

TEST_CASE("sum and mean over a dim and over all elements", "[autograd][reduce_grad]") {
  auto x = uniform<cube>({2, 3, 4}, 1);
  check_gradients([](auto const& a) { return dt::sum<Batch>(a); }, x);
  check_gradients([](auto const& a) { return dt::sum<Queries>(a); }, x);
  check_gradients([](auto const& a) { return dt::sum<Feat>(a, dt::keep_dim); }, x);
  check_gradients([](auto const& a) { return dt::mean<Queries>(a); }, x);
  check_gradients([](auto const& a) { return dt::mean<Feat>(a, dt::keep_dim); }, x);
  check_gradients([](auto const& a) { return dt::sum(a); }, x);
  check_gradients([](auto const& a) { return dt::mean(a); }, x);
}

TEST_CASE("max and min over a dim route the gradient to the extremum", "[autograd][reduce_grad]") {
  auto x = distinct_cube(3, 4, 5);
  check_gradients([](auto const& a) { return dt::max<Batch>(a); }, x);
  check_gradients([](auto const& a) { return dt::max<Queries>(a); }, x);
  check_gradients([](auto const& a) { return dt::max<Feat>(a); }, x);
  check_gradients([](auto const& a) { return dt::min<Batch>(a); }, x);
  check_gradients([](auto const& a) { return dt::min<Queries>(a, dt::keep_dim); }, x);
  check_gradients([](auto const& a) { return dt::min<Feat>(a, dt::keep_dim); }, x);
  check_gradients([](auto const& a) { return dt::max(a); }, x);
  check_gradients([](auto const& a) { return dt::min(a); }, x);

  SECTION("a lazy operand: the gradient goes on through the expression") {
    auto y = uniform<cube>({3, 4, 5}, 2, -0.01, 0.01);
    check_gradients([](auto const& a, auto const& b) { return dt::max<Queries>(a * 2.0 + b); }, x, y);
    check_gradients([](auto const& a, auto const& b) { return dt::min(a * 2.0 + b); }, x, y);
  }
  SECTION("a non-contiguous operand (a transposed view)") {
    check_gradients([](auto const& a) { return dt::max<Batch>(dt::transpose<Batch, Feat>(a)); }, x);
  }
}

TEST_CASE("max<D> and min<D> give ties' gradient to the first extremum, as argmax", "[autograd][reduce_grad]") {
  SECTION("along the last dim") {
    matrix x{{1.0, 3.0, 3.0, 2.0}, {5.0, 5.0, 5.0, 0.0}};
    x.requires_grad_();
    dt::tensor<double, Batch> const m = dt::max<Feat>(x);
    m.backward(dt::tensor<double, Batch>{10.0, 20.0});
    matrix const want{{0.0, 10.0, 0.0, 0.0}, {20.0, 0.0, 0.0, 0.0}};
    CHECK(dt::equal(x.grad(), want));
  }
  SECTION("along the first dim (strided)") {
    matrix x{{1.0, 3.0, 2.0}, {1.0, 4.0, 2.0}, {0.0, 4.0, 2.0}};
    x.requires_grad_();
    auto const m = dt::min<Batch>(x, dt::keep_dim);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(m)>, dt::tensor<double, Batch::fixed<1>, Feat>>);
    m.backward(dt::tensor<double, Batch::fixed<1>, Feat>{{1.0, 2.0, 3.0}});
    matrix const want{{0.0, 2.0, 3.0}, {0.0, 0.0, 0.0}, {1.0, 0.0, 0.0}};
    CHECK(dt::equal(x.grad(), want));
  }
  SECTION("NaN: to the first NaN, as argmax points at it") {
    double const nan = std::numeric_limits<double>::quiet_NaN();
    matrix x{{1.0, nan, 7.0, nan}};
    x.requires_grad_();
    dt::max<Feat>(x).backward(dt::tensor<double, Batch>{1.0});
    CHECK(dt::equal(x.grad(), matrix{{0.0, 1.0, 0.0, 0.0}}));
  }
}

TEST_CASE("full max() and min() split the gradient evenly among ties", "[autograd][reduce_grad]") {
  matrix x{{1.0, 3.0, 3.0}, {3.0, -2.0, 0.0}};
  x.requires_grad_();
  dt::max(x).backward(dt::full(6.0));
  CHECK(dt::equal(x.grad(), matrix{{0.0, 2.0, 2.0}, {2.0, 0.0, 0.0}}));
  x.zero_grad();
  dt::min(x).backward();
  CHECK(dt::equal(x.grad(), matrix{{0.0, 0.0, 0.0}, {0.0, 1.0, 0.0}}));

  SECTION("NaN: split among the NaNs") {
    double const nan = std::numeric_limits<double>::quiet_NaN();
    matrix z{{nan, 3.0}, {nan, 9.0}};
    z.requires_grad_();
    dt::max(z).backward();
    CHECK(dt::equal(z.grad(), matrix{{0.5, 0.0}, {0.5, 0.0}}));
  }
}

TEST_CASE("reduction gradients: exact type, accumulation, no_grad", "[autograd][reduce_grad]") {
  auto x = distinct_cube(2, 3, 4);
  x.requires_grad_();
  static_assert(std::is_same_v<decltype(x.grad()), cube>);

  dt::sum(dt::max<Queries>(x)).backward();
  cube const once = x.grad().clone();
  dt::sum(dt::max<Queries>(x)).backward();
  for (dt::index_t k = 0; k < x.size(); ++k) CHECK(x.grad().data()[k] == 2.0 * once.data()[k]);

  SECTION("no_grad records nothing") {
    dt::autograd::no_grad const guard;
    auto const m = dt::max<Feat>(x);
    auto const n = dt::min(x);
    CHECK_FALSE(m.requires_grad());
    CHECK_FALSE(n.requires_grad());
  }
  SECTION("a tensor that does not require grad records nothing") {
    auto const plain = distinct_cube(2, 3, 4);
    CHECK_FALSE(dt::max<Batch>(plain).requires_grad());
    CHECK_FALSE(dt::min(plain).requires_grad());
  }
  SECTION("float tensors are differentiated too") {
    dt::tensor<float, Batch, Feat> f{{1.0f, 4.0f}, {6.0f, 2.0f}};
    f.requires_grad_();
    dt::sum(dt::min<Batch>(f)).backward();
    static_assert(std::is_same_v<decltype(f.grad()), dt::tensor<float, Batch, Feat>>);
    CHECK(dt::equal(f.grad(), dt::tensor<float, Batch, Feat>{{1.0f, 0.0f}, {0.0f, 1.0f}}));
  }
}

}  // namespace reduce_grad_test
