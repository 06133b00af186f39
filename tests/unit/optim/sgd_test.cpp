#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/optim/sgd.hpp>

namespace dt = dimtensor;
namespace optim = dimtensor::optim;

namespace sgd_test {

DIMTENSOR_DIM(Row);
DIMTENSOR_DIM(Col);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);

// Gives p the gradient g (the gradient of sum(p * g)).
template <class P>
void set_grad(P const& p, P const& g) {
  dt::sum(p * g).backward();
}

// PyTorch's SGD on one element, in double.
struct reference_sgd {
  double lr, momentum, weight_decay;
  std::vector<double> buf;
  bool started = false;
  void step(std::vector<double>& p, std::vector<double> const& g) {
    if (buf.empty()) buf.assign(p.size(), 0);
    for (std::size_t i = 0; i < p.size(); ++i) {
      double d = g[i] + weight_decay * p[i];
      if (momentum != 0) {
        buf[i] = started ? momentum * buf[i] + d : d;
        d = buf[i];
      }
      p[i] -= lr * d;
    }
    started = momentum != 0;
  }
};

TEST_CASE("sgd: plain steps are p - lr g", "[optim][sgd]") {
  dt::tensor<float, Row> p{1, 2, -3};
  p.requires_grad_();
  optim::sgd opt(p, 0.5);
  set_grad(p, dt::tensor<float, Row>{1, -2, 0.5f});
  opt.step();
  CHECK(dt::allclose(p, dt::tensor<float, Row>{0.5f, 3, -3.25f}));
  CHECK(p.requires_grad());
  CHECK(p.is_leaf());
  SECTION("zero_grad drops the gradient, and a step without one changes nothing") {
    opt.zero_grad();
    CHECK_FALSE(p.has_grad());
    opt.step();
    CHECK(dt::allclose(p, dt::tensor<float, Row>{0.5f, 3, -3.25f}));
  }
}

TEST_CASE("sgd: momentum and weight decay follow PyTorch's rule", "[optim][sgd]") {
  auto p = dt::tensor<double, Row, Col>{{1, -2}, {0.5, 3}};
  p.requires_grad_();
  optim::sgd opt(p, 0.1, 0.9, 0.01);
  reference_sgd ref{0.1, 0.9, 0.01, {}};
  std::vector<double> want{1, -2, 0.5, 3};
  std::vector<dt::tensor<double, Row, Col>> const grads{
      {{0.3, -1}, {2, 0}}, {{-0.5, 0.25}, {1, 1}}, {{0, 0}, {-3, 0.1}}};
  for (auto const& g : grads) {
    opt.zero_grad();
    set_grad(p, g);
    opt.step();
    ref.step(want, std::vector<double>(g.data(), g.data() + 4));
    for (dt::index_t i = 0; i < 4; ++i) CHECK(p.data()[i] == Approx(want[i]).epsilon(1e-12));
  }
}

TEST_CASE("sgd: a parameter without a gradient is skipped, its momentum kept", "[optim][sgd]") {
  dt::tensor<float, Row> a{1, 1};
  dt::tensor<float, Row> b{1, 1};
  a.requires_grad_();
  b.requires_grad_();
  optim::sgd opt(optim::parameter_list(a, b), 1.0, 0.5);
  set_grad(a, dt::tensor<float, Row>{1, 2});
  set_grad(b, dt::tensor<float, Row>{1, 2});
  opt.step();  // both: buf = g, p = 1 - g
  opt.zero_grad();
  set_grad(a, dt::tensor<float, Row>{1, 2});
  opt.step();  // a: buf = 0.5 g + g; b untouched
  CHECK(dt::allclose(a, dt::tensor<float, Row>{1 - 1 - 1.5f, 1 - 2 - 3}));
  CHECK(dt::allclose(b, dt::tensor<float, Row>{0, -1}));
  opt.zero_grad();
  set_grad(b, dt::tensor<float, Row>{1, 2});
  opt.step();  // b: buf = 0.5 g (its first buffer) + g
  CHECK(dt::allclose(b, dt::tensor<float, Row>{0 - 1.5f, -1 - 3}));
}

TEST_CASE("sgd: over a module's parameters", "[optim][sgd]") {
  dt::nn::linear<In, Out> layer(In(3), Out(2));
  auto const w0 = layer.weight.clone();
  auto const b0 = layer.bias.clone();
  optim::sgd opt(layer, 0.1);
  REQUIRE(opt.parameters().size() == 2);
  CHECK(opt.parameters().entries()[0].key() == "weight");
  CHECK(opt.parameters().entries()[1].key() == "bias");
  auto const x = dt::tensor<float, In>{1, 2, 3};
  dt::sum(layer(x)).backward();
  opt.step();
  // d sum(W x + b) / dW = x for every row, / db = 1.
  for (dt::index_t o = 0; o < 2; ++o) {
    for (dt::index_t i = 0; i < 3; ++i) {
      CHECK(layer.weight.data()[o * 3 + i] == Approx(w0.data()[o * 3 + i] - 0.1f * x.data()[i]));
    }
    CHECK(layer.bias.data()[o] == Approx(b0.data()[o] - 0.1f));
  }
}

TEST_CASE("sgd: a parameter made to require grad after the optimizer is built", "[optim][sgd]") {
  dt::tensor<float, Row> p{1, 2};
  optim::sgd opt(p, 1.0);
  p.requires_grad_();
  set_grad(p, dt::tensor<float, Row>{1, 1});
  opt.step();
  CHECK(dt::allclose(p, dt::tensor<float, Row>{0, 1}));
}

TEST_CASE("sgd: bad arguments", "[optim][sgd]") {
  dt::tensor<float, Row> p{1, 2};
  REQUIRE_THROWS_AS(optim::sgd(p, -0.1), dt::value_error);
  REQUIRE_THROWS_WITH(optim::sgd(p, -0.1), Catch::Contains("learning rate"));
  REQUIRE_THROWS_WITH(optim::sgd(p, 0.1, -1), Catch::Contains("momentum"));
  REQUIRE_THROWS_WITH(optim::sgd(p, 0.1, 0, -1), Catch::Contains("weight_decay"));
  auto m = dt::tensor<float, Row, Col>{{1, 2}, {3, 4}};
  auto view = dt::transpose<Row, Col>(m);
  REQUIRE_THROWS_AS(optim::sgd(view, 0.1), dt::value_error);
  REQUIRE_THROWS_WITH(optim::sgd(view, 0.1), Catch::Contains("strided") && Catch::Contains("Col=2"));
}

}  // namespace sgd_test
