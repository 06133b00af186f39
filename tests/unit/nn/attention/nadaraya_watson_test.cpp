// Tests of nn/attention/nadaraya_watson.hpp: Nadaraya-Watson kernel
// regression as attention pooling, against naive loops written here (double
// precision), with keys shared by all queries ([KV]) and one row of keys per
// query ([Queries, KV]), with w = 1 (d2l's non-parametric pooling) and a
// learned w (NWKernelRegression's forward pass).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>

namespace nadaraya_watson_test {

DIMTENSOR_DIM(Test);
DIMTENSOR_DIM(Train);

namespace dt = dimtensor;
using dt::index_t;

// softmax_k(-((x - key(k)) · w)² / 2) over n keys, in double.
template <class Key>
std::vector<double> naive_weights(double x, index_t n, Key const& key, double w) {
  std::vector<double> s;
  double m = -INFINITY;
  for (index_t k = 0; k < n; ++k) {
    double const d = (x - key(k)) * w;
    s.push_back(-d * d / 2);
    m = std::max(m, s.back());
  }
  double sum = 0;
  for (auto& v : s) sum += (v = std::exp(v - m));
  for (auto& v : s) v /= sum;
  return s;
}

template <class T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

TEMPLATE_TEST_CASE("nadaraya_watson: keys [KV] shared by all queries, against a naive loop", "[nn][attention]", float) {
  using T = TestType;
  auto const w = GENERATE(1.0, 2.5, 0.3);
  index_t const n_train = 50, n_test = 12;
  dt::generator gen(1);
  // d2l: x_train sorted rand(50) * 5, y_train = 2 sin(x) + x^0.8 + noise, x_test arange(0, 5, 0.1).
  auto const x_train = dt::eval(dt::rand<T>(gen, Train(n_train)) * T(5));
  auto const y_train = dt::randn<T>(gen, Train(n_train));
  auto const x_test = dt::arange<T, Test>(0, 5, 5.0 / double(n_test));
  REQUIRE(x_test.template extent<Test>() == n_test);

  auto const weights = dt::nn::nadaraya_watson_weights<Train>(x_test, x_train, w);
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train, w);
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(weights)>, dt::tensor<T, Test, Train>>);
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(y_hat)>, dt::tensor<T, Test>>);
  for (index_t q = 0; q < n_test; ++q) {
    auto const want = naive_weights(double(x_test(Test(q))), n_train,
                                    [&](index_t k) { return double(x_train(Train(k))); }, w);
    double y = 0, total = 0;
    for (index_t k = 0; k < n_train; ++k) {
      CHECK(double(weights(Test(q), Train(k))) == Approx(want[std::size_t(k)]).margin(tolerance<T>()));
      y += want[std::size_t(k)] * double(y_train(Train(k)));
      total += double(weights(Test(q), Train(k)));
    }
    CHECK(total == Approx(1.0).margin(tolerance<T>()));
    CHECK(double(y_hat(Test(q))) == Approx(y).margin(tolerance<T>()));
  }
}

TEMPLATE_TEST_CASE("nadaraya_watson: keys and values [Queries, KV], one row per query", "[nn][attention]", float) {
  using T = TestType;
  auto const w = GENERATE(1.0, 1.7);
  // NWKernelRegression's training: each training input attends to the
  // other training points, keys and values [n_train, n_train - 1].
  index_t const n = 8, kv = n - 1;
  dt::generator gen(2);
  auto const queries = dt::eval(dt::rand<T>(gen, Test(n)) * T(5));
  auto const keys = dt::eval(dt::rand<T>(gen, Test(n), Train(kv)) * T(5));
  auto const values = dt::randn<T>(gen, Test(n), Train(kv));
  auto const y_hat = dt::nn::nadaraya_watson<Train>(queries, keys, values, w);
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(y_hat)>, dt::tensor<T, Test>>);
  auto const weights = dt::nn::nadaraya_watson_weights<Train>(queries, keys, w);
  for (index_t q = 0; q < n; ++q) {
    auto const want =
        naive_weights(double(queries(Test(q))), kv, [&](index_t k) { return double(keys(Test(q), Train(k))); }, w);
    double y = 0;
    for (index_t k = 0; k < kv; ++k) {
      CHECK(double(weights(Test(q), Train(k))) == Approx(want[std::size_t(k)]).margin(tolerance<T>()));
      y += want[std::size_t(k)] * double(values(Test(q), Train(k)));
    }
    CHECK(double(y_hat(Test(q))) == Approx(y).margin(tolerance<T>()));
  }

  // Keys per query with values shared by all ([KV]) pool the same way.
  auto const shared_values = dt::randn<T>(gen, Train(kv));
  auto const pooled = dt::nn::nadaraya_watson<Train>(queries, keys, shared_values, w);
  for (index_t q = 0; q < n; ++q) {
    double y = 0;
    for (index_t k = 0; k < kv; ++k) y += double(weights(Test(q), Train(k))) * double(shared_values(Train(k)));
    CHECK(double(pooled(Test(q))) == Approx(y).margin(tolerance<T>()));
  }
}

TEST_CASE("nadaraya_watson: lazy operands, and w = 1 is d2l's non-parametric pooling", "[nn][attention]") {
  dt::generator gen(3);
  auto const x_train = dt::eval(dt::rand<float>(gen, Train(20)) * 5.0f);
  auto const y_train = dt::sin(x_train) * 2.0f;  // a lazy expression as the values
  auto const x_test = dt::arange<float, Test>(0, 5, 0.5);
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test + 0.0f, x_train, y_train);
  auto const with_w = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train, 1.0);
  for (index_t q = 0; q < 10; ++q) {
    auto const want = naive_weights(double(x_test(Test(q))), 20, [&](index_t k) { return double(x_train(Train(k))); }, 1.0);
    double y = 0;
    for (index_t k = 0; k < 20; ++k) y += want[std::size_t(k)] * 2.0 * std::sin(double(x_train(Train(k))));
    CHECK(double(y_hat(Test(q))) == Approx(y).margin(1e-5));
    CHECK(y_hat(Test(q)) == with_w(Test(q)));
  }
}

TEST_CASE("nadaraya_watson: keys and values of different lengths are a shape_error", "[nn][attention]") {
  auto const x_test = dt::arange<float, Test>(0, 5, 0.5);
  auto const keys = dt::ones<float>(Train(20));
  auto const values = dt::ones<float>(Train(19));
  REQUIRE_THROWS_AS(dt::nn::nadaraya_watson<Train>(x_test, keys, values), dt::shape_error);
  REQUIRE_THROWS_WITH(dt::nn::nadaraya_watson<Train>(x_test, keys, values),
                      Catch::Contains("Train") && Catch::Contains("20") && Catch::Contains("19"));
  auto const row_keys = dt::ones<float>(Test(9), Train(20));
  REQUIRE_THROWS_AS(dt::nn::nadaraya_watson_weights<Train>(x_test, row_keys), dt::shape_error);
  REQUIRE_THROWS_WITH(dt::nn::nadaraya_watson_weights<Train>(x_test, row_keys),
                      Catch::Contains("Test") && Catch::Contains("10") && Catch::Contains("9"));
}

}  // namespace nadaraya_watson_test
