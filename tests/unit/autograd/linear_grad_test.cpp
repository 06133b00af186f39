// Gradients of nn::linear (input, weight, bias; In last, in the middle, a
// square layer) and nn::dropout (training and eval mode) against central
// finite differences, and the parameter protocol of training: parameters
// require gradients from the start, zero_grad(module) drops them,
// load_parameters writes into them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/dropout.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/files.hpp"
#include "unit/support/gradcheck.hpp"

namespace linear_grad_test {

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);

TEST_CASE("linear: gradients of a 3-D input, the weight and the bias", "[autograd][linear]") {
  dt::generator gen(5);
  auto const with_bias = GENERATE(true, false);
  dt::nn::linear<Feat, Hidden, double> layer(Feat(4), Hidden(3), with_bias, gen);
  auto x = uniform<dt::tensor<double, Batch, Queries, Feat>>({2, 3, 4}, 1);
  if (with_bias) {
    check_gradients([&](auto const& in, auto const&, auto const&) { return layer(in); }, x, layer.weight,
                    layer.bias);
  } else {
    check_gradients([&](auto const& in, auto const&) { return layer(in); }, x, layer.weight);
    CHECK_FALSE(layer.bias.requires_grad());
  }
  static_assert(std::is_same_v<decltype(layer.weight.grad()), dt::tensor<double, Hidden, Feat>>);
  static_assert(std::is_same_v<decltype(layer.bias.grad()), dt::tensor<double, Hidden>>);
}

TEST_CASE("linear: In in the middle, static extents, and a square layer", "[autograd][linear]") {
  dt::generator gen(6);
  SECTION("In in the middle: the output is a permuted view") {
    dt::nn::linear<Feat, Hidden, double> layer(Feat(4), Hidden(3), true, gen);
    auto x = uniform<dt::tensor<double, Batch::fixed<2>, Feat::fixed<4>, Queries>>({2, 4, 3}, 2);
    check_gradients([&](auto const& in, auto const&, auto const&) { return layer(in); }, x, layer.weight,
                    layer.bias);
  }
  SECTION("a square layer (Hidden to Hidden, weight [Hidden, Hidden'])") {
    dt::nn::linear<Hidden, Hidden, double> layer(Hidden(3), Hidden(3), true, gen);
    auto x = uniform<dt::tensor<double, Batch, Queries, Hidden>>({2, 2, 3}, 3);
    check_gradients([&](auto const& in, auto const&, auto const&) { return layer(in); }, x, layer.weight,
                    layer.bias);
  }
  SECTION("two layers in a row") {
    dt::nn::linear<Feat, Hidden, double> first(Feat(4), Hidden(3), true, gen);
    dt::nn::linear<Hidden, Hidden, double> second(Hidden(3), Hidden(3), false, gen);
    auto x = uniform<dt::tensor<double, Batch, Feat>>({3, 4}, 4);
    check_gradients([&](auto const& in, auto const&, auto const&, auto const&) { return dt::tanh(second(first(in))); },
                    x, first.weight, first.bias, second.weight);
  }
}

TEST_CASE("linear: the bias's gradient is the output's gradient summed over every dim but Out", "[autograd][linear]") {
  dt::generator gen(8);
  dt::nn::linear<Feat, Hidden> layer(Feat(2), Hidden(3), true, gen);
  auto const x = dt::ones<float>(Batch(2), Queries(4), Feat(2));
  auto const y = layer(x);
  y.backward(dt::ones<float>(Batch(2), Queries(4), Hidden(3)));
  for (dt::index_t h = 0; h < 3; ++h) CHECK(layer.bias.grad()(Hidden(h)) == 8.0f);
  // The weight's gradient: Σ over Batch and Queries of g · x = 8 everywhere.
  for (dt::index_t h = 0; h < 3; ++h) CHECK(layer.weight.grad()(Hidden(h), Feat(1)) == 8.0f);
  CHECK_FALSE(x.requires_grad());
}

// On the CPU the bias is the GEMM's C and the product's node sums its
// gradient: that node is recorded when the bias is the only operand that
// requires a gradient.
TEST_CASE("linear: the bias alone requiring a gradient gets it", "[autograd][linear]") {
  dt::generator gen(9);
  dt::nn::linear<Feat, Hidden> layer(Feat(5), Hidden(3), true, gen);
  layer.weight = layer.weight.detach();
  auto const x = dt::randn<float>(gen, Batch(3), Queries(7), Feat(5));
  auto const g = dt::randn<float>(gen, Batch(3), Queries(7), Hidden(3));
  auto const y = layer(x);
  REQUIRE(y.requires_grad());
  y.backward(g);
  for (dt::index_t h = 0; h < 3; ++h) {
    double sum = 0;
    for (dt::index_t b = 0; b < 3; ++b)
      for (dt::index_t q = 0; q < 7; ++q) sum += g(Batch(b), Queries(q), Hidden(h));
    CHECK(layer.bias.grad()(Hidden(h)) == Approx(sum).margin(1e-5));
  }
  CHECK_FALSE(layer.weight.requires_grad());
}

TEST_CASE("parameters require grad; zero_grad(module) drops their gradients", "[autograd][linear]") {
  dt::generator gen(9);
  dt::nn::linear<Feat, Hidden> layer(Feat(2), Hidden(3), true, gen);
  CHECK(layer.weight.requires_grad());
  CHECK(layer.bias.requires_grad());
  CHECK(layer.weight.is_leaf());
  auto const x = dt::ones<float>(Batch(1), Feat(2));
  layer(x).backward(dt::ones<float>(Batch(1), Hidden(3)));
  layer(x).backward(dt::ones<float>(Batch(1), Hidden(3)));
  CHECK(layer.bias.grad()(Hidden(0)) == 2.0f);  // two passes accumulate
  dt::nn::zero_grad(layer);
  CHECK_FALSE(layer.weight.has_grad());
  CHECK_FALSE(layer.bias.has_grad());

  SECTION("writing into a parameter needs no_grad") {
    REQUIRE_THROWS_AS(layer.weight.fill(0.0f), dt::value_error);
    dt::autograd::no_grad const guard;
    layer.weight.fill(0.0f);
    CHECK(layer.weight(Hidden(1), Feat(1)) == 0.0f);
  }
  SECTION("no_grad: the forward pass records nothing") {
    dt::autograd::no_grad const guard;
    auto const y = layer(x);
    CHECK_FALSE(y.requires_grad());
  }
  SECTION("load_parameters writes into parameters that require grad") {
    test_support::temp_dir const dir("linear_grad_load");
    dt::nn::linear<Feat, Hidden> other(Feat(2), Hidden(3), true, gen);
    dt::nn::save_parameters(other, dir.path() / "p.safetensors");
    dt::nn::load_parameters(layer, dir.path() / "p.safetensors");
    CHECK(layer.weight(Hidden(2), Feat(1)) == other.weight(Hidden(2), Feat(1)));
    CHECK(layer.weight.requires_grad());
  }
}

TEST_CASE("dropout: the gradient is g · mask / (1 - p) in training mode", "[autograd][dropout]") {
  auto x = uniform<dt::tensor<double, Batch, Feat>>({4, 5}, 10, 0.5, 1.5);  // no zeros: the mask shows in y
  check_gradients(
      [](auto const& in) {
        dt::nn::dropout drop(0.4, 77);  // a fresh seeded module: the same mask on every call
        return drop(in * 2.0);
      },
      x);

  SECTION("against the mask itself") {
    dt::nn::dropout drop(0.5, 78);
    x.requires_grad_();
    x.zero_grad();
    auto const y = drop(x);
    auto const g = uniform<dt::tensor<double, Batch, Feat>>({4, 5}, 11);
    y.backward(g);
    int kept = 0;
    for (dt::index_t i = 0; i < x.size(); ++i) {
      bool const keep = y.data()[i] != 0.0;
      kept += keep;
      CHECK(x.grad().data()[i] == (keep ? g.data()[i] / 0.5 : 0.0));
    }
    CHECK(kept > 0);
    CHECK(kept < x.size());
  }
  SECTION("eval mode and p = 0 pass the gradient unchanged") {
    dt::nn::dropout drop(0.5, 79);
    drop.eval();
    check_gradients([&](auto const& in) { return drop(in); }, x);
    dt::nn::dropout none(0.0);
    check_gradients([&](auto const& in) { return none(dt::exp(in)); }, x);
  }
}

}  // namespace linear_grad_test
