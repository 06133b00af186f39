#include <catch2/catch.hpp>

#include <cmath>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/optim/clip.hpp>

namespace dt = dimtensor;
namespace optim = dimtensor::optim;

namespace clip_test {

DIMTENSOR_DIM(Row);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);

template <class P>
void set_grad(P const& p, P const& g) {
  dt::sum(p * g).backward();
}

TEST_CASE("clip_grad_norm: the global norm, scaled down to max_norm", "[optim][clip]") {
  dt::tensor<float, Row> a{0, 0};
  dt::tensor<double, Row> b{0};
  a.requires_grad_();
  b.requires_grad_();
  set_grad(a, dt::tensor<float, Row>{3, 0});
  set_grad(b, dt::tensor<double, Row>{4});  // norm sqrt(9 + 16) = 5, over both element types
  SECTION("above max_norm: every gradient times max_norm / norm") {
    CHECK(optim::clip_grad_norm(optim::parameter_list(a, b), 1.0) == Approx(5));
    CHECK(a.grad().data()[0] == Approx(0.6));
    CHECK(a.grad().data()[1] == 0.0f);
    CHECK(b.grad().data()[0] == Approx(0.8));
    CHECK(optim::clip_grad_norm(optim::parameter_list(a, b), 1.0) == Approx(1));
  }
  SECTION("at or below max_norm: unchanged") {
    CHECK(optim::clip_grad_norm(optim::parameter_list(a, b), 5.0) == Approx(5));
    CHECK(a.grad().data()[0] == 3.0f);
    CHECK(b.grad().data()[0] == 4.0);
  }
  SECTION("parameters without a gradient are skipped") {
    b.zero_grad();
    CHECK(optim::clip_grad_norm(optim::parameter_list(a, b), 1.0) == Approx(3));
    CHECK(a.grad().data()[0] == Approx(1));
    CHECK_FALSE(b.has_grad());
  }
  SECTION("negative max_norm") {
    REQUIRE_THROWS_AS(optim::clip_grad_norm(optim::parameter_list(a, b), -1), dt::value_error);
    REQUIRE_THROWS_WITH(optim::clip_grad_norm(optim::parameter_list(a, b), -1), Catch::Contains("max_norm"));
  }
}

TEST_CASE("clip_grad_norm: over a module, as d2l's grad_clipping(net, theta)", "[optim][clip]") {
  dt::nn::linear<In, Out> layer(In(2), Out(3));
  dt::sum(layer(dt::tensor<float, In>{10, 20}) * 100.0f).backward();
  double sq = 0;
  for (dt::index_t i = 0; i < layer.weight.size(); ++i) sq += std::pow(layer.weight.grad().data()[i], 2);
  for (dt::index_t i = 0; i < layer.bias.size(); ++i) sq += std::pow(layer.bias.grad().data()[i], 2);
  CHECK(optim::clip_grad_norm(layer, 1.0) == Approx(std::sqrt(sq)));
  double after = 0;
  for (dt::index_t i = 0; i < layer.weight.size(); ++i) after += std::pow(layer.weight.grad().data()[i], 2);
  for (dt::index_t i = 0; i < layer.bias.size(); ++i) after += std::pow(layer.bias.grad().data()[i], 2);
  CHECK(std::sqrt(after) == Approx(1).epsilon(1e-6));
}

}  // namespace clip_test
