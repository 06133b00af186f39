// nn::xavier_uniform_: PyTorch's bound gain * sqrt(6 / (fan_in + fan_out)),
// in place, the weight still a leaf that requires gradients.
#include <catch2/catch.hpp>

#include <cmath>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/init.hpp>

namespace dt = dimtensor;

namespace init_test {
DIMTENSOR_DIM(Out);
DIMTENSOR_DIM(In);
}  // namespace init_test

using namespace init_test;

TEST_CASE("xavier_uniform_: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))", "[nn][init]") {
  dt::nn::linear<In, Out> layer(In(300), Out(100));
  auto* const storage = layer.weight.data();
  dt::generator gen(9);
  dt::nn::xavier_uniform_(layer.weight, gen, 2.0);
  double const a = 2.0 * std::sqrt(6.0 / 400.0);
  double sum = 0;
  double squares = 0;
  double largest = 0;
  for (dt::index_t i = 0; i < layer.weight.size(); ++i) {
    double const v = layer.weight.data()[i];
    sum += v;
    squares += v * v;
    largest = std::max(largest, std::abs(v));
  }
  double const n = static_cast<double>(layer.weight.size());
  CHECK(largest <= a);
  CHECK(largest > 0.99 * a);                                // 30,000 draws reach the bound
  CHECK(std::abs(sum / n) < 0.01 * a);                      // mean 0
  CHECK(squares / n == Approx(a * a / 3).epsilon(0.02));    // variance a^2 / 3
  CHECK(layer.weight.data() == storage);                    // in place
  CHECK(layer.weight.requires_grad());
  // The same seed, the same weight.
  dt::nn::linear<In, Out> other(In(300), Out(100));
  dt::generator again(9);
  dt::nn::xavier_uniform_(other.weight, again, 2.0);
  CHECK(dt::max_abs_diff(other.weight, layer.weight) == 0.0);
}
