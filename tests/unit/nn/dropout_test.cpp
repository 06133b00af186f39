#include <catch2/catch.hpp>

#include <vector>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/dropout.hpp>

namespace dropout_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Feat);

namespace dt = dimtensor;

TEST_CASE("dropout: p outside [0, 1) is a value_error", "[nn]") {
  REQUIRE_THROWS_AS(dt::nn::dropout(1.0), dt::value_error);
  REQUIRE_THROWS_AS(dt::nn::dropout(-0.1), dt::value_error);
  REQUIRE_THROWS_WITH(dt::nn::dropout(1.5), Catch::Contains("dropout") && Catch::Contains("1.5"));
}

TEST_CASE("dropout: identity in eval mode and for p == 0", "[nn]") {
  dt::generator gen(1);
  auto const x = dt::randn<float>(gen, Batch(10), Feat(7));
  dt::nn::dropout d(0.5, 3);
  CHECK(d.is_training());
  d.eval();
  CHECK_FALSE(d.is_training());
  dt::tensor<float, Batch, Feat> const y = d(x);
  dt::nn::dropout z(0.0);
  auto const y0 = z(x);
  for (dt::index_t b = 0; b < 10; ++b)
    for (dt::index_t f = 0; f < 7; ++f) {
      CHECK(y(Batch(b), Feat(f)) == x(Batch(b), Feat(f)));
      CHECK(y0(Batch(b), Feat(f)) == x(Batch(b), Feat(f)));
    }
  d.train();
  CHECK(d.is_training());
}

TEST_CASE("dropout: train mode drops a fraction p and scales the rest", "[nn]") {
  double const p = 0.3;
  dt::nn::dropout d(p, 42);
  auto const x = dt::ones<float>(Batch(100), Feat::fixed<1000>{});
  auto const y = d(x);
  static_assert(std::is_same_v<std::remove_const_t<decltype(y)>, std::remove_const_t<decltype(x)>>);
  long zeros = 0;
  bool scaled = true;
  float const keep = static_cast<float>(1.0f / (1.0 - p));
  for (dt::index_t b = 0; b < 100; ++b)
    for (dt::index_t f = 0; f < 1000; ++f) {
      float const v = y(Batch(b), Feat(f));
      if (v == 0.0f)
        ++zeros;
      else if (v != Approx(keep))
        scaled = false;
    }
  CHECK(scaled);
  CHECK(double(zeros) / 1e5 == Approx(p).margin(0.01));
}

TEST_CASE("dropout: same seed, same mask", "[nn]") {
  auto const x = dt::ones<double>(Batch(50), Feat(20));
  dt::nn::dropout a(0.5, 9), b(0.5, 9), c(0.5, 10);
  auto const ya = a(x), yb = b(x), yc = c(x);
  bool same = true, differs = false;
  for (dt::index_t i = 0; i < 50; ++i)
    for (dt::index_t f = 0; f < 20; ++f) {
      same = same && ya(Batch(i), Feat(f)) == yb(Batch(i), Feat(f));
      differs = differs || ya(Batch(i), Feat(f)) != yc(Batch(i), Feat(f));
    }
  CHECK(same);
  CHECK(differs);
}

TEST_CASE("dropout: the mask is Philox's, the same on one thread and two, and the gradient takes it", "[nn]") {
  dt::tensor<float, Batch, Feat> x(dt::tensor<float, Batch, Feat>::extents_type{300, 500});
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = 0.5f + static_cast<float>(i % 13);
  dt::tensor<float, Batch, Feat> g(x.extents());
  for (dt::index_t i = 0; i < g.size(); ++i) g.data()[i] = 1.0f + static_cast<float>(i % 7);
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2}) {
    dt::set_num_threads(threads);
    dt::nn::dropout d(0.25, 77);
    dt::generator keys(77);
    std::uint64_t const key = keys.next_u64();  // the key of the module's first call
    auto xr = x.detach().requires_grad_();
    auto const y = d(xr);
    y.backward(g);
    for (dt::index_t i = 0; i < x.size(); ++i) {
      bool const kept = dt::kernel::dropout_keeps(i, key, dt::kernel::keep_threshold(0.75));
      float const scale = static_cast<float>(1.0 / 0.75);
      REQUIRE(y.data()[i] == (kept ? x.data()[i] * scale : 0.0f));
      REQUIRE(xr.grad().data()[i] == (kept ? g.data()[i] * scale : 0.0f));
    }
    runs.emplace_back(y.data(), y.data() + y.size());
  }
  dt::set_num_threads(0);
  CHECK(runs[0] == runs[1]);
}

}  // namespace dropout_test

namespace dropout_test {

TEST_CASE("dropout: lazy inputs are evaluated", "[nn]") {
  auto const x = dt::ones<float>(Batch(4), Feat(5));
  dt::nn::dropout d(0.5, 1);
  d.eval();
  auto const y = d(x + x);
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(y)>, dt::tensor<float, Batch, Feat>>);
  CHECK(y(Batch(3), Feat(4)) == 2.0f);
  STATIC_REQUIRE(std::is_same_v<decltype(d(dt::ill_formed{})), dt::ill_formed>);
}

}  // namespace dropout_test
