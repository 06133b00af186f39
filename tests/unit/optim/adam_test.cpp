#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/optim/adam.hpp>

namespace dt = dimtensor;
namespace optim = dimtensor::optim;

namespace adam_test {

DIMTENSOR_DIM(Row);

template <class P>
void set_grad(P const& p, P const& g) {
  dt::sum(p * g).backward();
}

// Adam by its paper's formulas, in double.
struct reference_adam {
  double lr, b1, b2, eps, wd;
  std::vector<double> m, v;
  int t = 0;
  void step(std::vector<double>& p, std::vector<double> const& g) {
    if (m.empty()) m.assign(p.size(), 0), v.assign(p.size(), 0);
    ++t;
    for (std::size_t i = 0; i < p.size(); ++i) {
      double const gi = g[i] + wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      double const m_hat = m[i] / (1 - std::pow(b1, t));
      double const v_hat = v[i] / (1 - std::pow(b2, t));
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
};

TEST_CASE("adam: the first step moves every element by about lr", "[optim][adam]") {
  dt::tensor<double, Row> p{1, -2, 3};
  p.requires_grad_();
  optim::adam opt(p, 0.01);
  set_grad(p, dt::tensor<double, Row>{0.5, -4, 1e-3});
  opt.step();
  // m_hat = g, v_hat = g^2: the step is lr g / (|g| + eps).
  CHECK(p.data()[0] == Approx(1 - 0.01 * 0.5 / (0.5 + 1e-8)));
  CHECK(p.data()[1] == Approx(-2 + 0.01 * 4 / (4 + 1e-8)));
  CHECK(p.data()[2] == Approx(3 - 0.01 * 1e-3 / (1e-3 + 1e-8)));
}

TEST_CASE("adam: several steps with weight decay follow the rule", "[optim][adam]") {
  dt::tensor<double, Row> p{1, -2, 0.5, 3};
  p.requires_grad_();
  optim::adam opt(p, 0.05, {0.8, 0.95}, 1e-6, 0.1);
  reference_adam ref{0.05, 0.8, 0.95, 1e-6, 0.1, {}, {}};
  std::vector<double> want{1, -2, 0.5, 3};
  std::vector<dt::tensor<double, Row>> const grads{{0.3, -1, 2, 0}, {-0.5, 0.25, 1, 1}, {0, 0, -3, 0.1}};
  for (auto const& g : grads) {
    opt.zero_grad();
    set_grad(p, g);
    opt.step();
    ref.step(want, std::vector<double>(g.data(), g.data() + 4));
    // PyTorch's lr / (1 - b1^t) · m / (sqrt(v) / sqrt(1 - b2^t) + eps) is the paper's m_hat / (sqrt(v_hat) + eps).
    for (dt::index_t i = 0; i < 4; ++i) CHECK(p.data()[i] == Approx(want[i]).epsilon(1e-10));
  }
}

TEST_CASE("adam: a parameter without a gradient keeps its step count", "[optim][adam]") {
  dt::tensor<double, Row> a{1};
  dt::tensor<double, Row> b{1};
  a.requires_grad_();
  b.requires_grad_();
  optim::adam opt(optim::parameter_list(a, b), 0.1);
  set_grad(a, dt::tensor<double, Row>{1});
  opt.step();  // a's first step; b has no gradient
  CHECK(b.data()[0] == 1.0);
  opt.zero_grad();
  set_grad(a, dt::tensor<double, Row>{1});
  set_grad(b, dt::tensor<double, Row>{1});
  opt.step();
  // b's first step moves it by lr exactly (up to eps), a's second as well (same gradients).
  CHECK(b.data()[0] == Approx(1 - 0.1).epsilon(1e-7));
  CHECK(a.data()[0] == Approx(1 - 0.2).epsilon(1e-7));
}

TEST_CASE("adam: float parameters", "[optim][adam]") {
  dt::tensor<float, Row> p{1, 2};
  p.requires_grad_();
  optim::adam opt(p);  // lr 1e-3
  set_grad(p, dt::tensor<float, Row>{2, -2});
  opt.step();
  CHECK(p.data()[0] == Approx(1 - 1e-3f));
  CHECK(p.data()[1] == Approx(2 + 1e-3f));
}

TEST_CASE("adam: bad arguments", "[optim][adam]") {
  dt::tensor<float, Row> p{1};
  REQUIRE_THROWS_WITH(optim::adam(p, -1), Catch::Contains("learning rate"));
  REQUIRE_THROWS_WITH(optim::adam(p, 1e-3, {1.0, 0.999}), Catch::Contains("betas.first"));
  REQUIRE_THROWS_WITH(optim::adam(p, 1e-3, {0.9, -0.1}), Catch::Contains("betas.second"));
  REQUIRE_THROWS_WITH(optim::adam(p, 1e-3, {0.9, 0.999}, -1), Catch::Contains("eps"));
  REQUIRE_THROWS_AS(optim::adam(p, 1e-3, {0.9, 0.999}, 1e-8, -1), dt::value_error);
}

}  // namespace adam_test
