// nn::feed_forward (d2l's PositionWiseFFN): values by hand, gradients
// against finite differences, d2l's names, save/load, bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/feed_forward.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
using test_support::check_gradients;
using test_support::uniform;

namespace feed_forward_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFNHidden);
DIMTENSOR_DIM(Out);
using x_t = dt::tensor<double, Batch, Steps, Hidden>;
}  // namespace feed_forward_test

using namespace feed_forward_test;

TEST_CASE("feed_forward: dense2(relu(dense1(x))) at every position", "[nn][feed_forward]") {
  dt::generator gen(3);
  nn::feed_forward<Hidden, FFNHidden, Out, double> ffn(Hidden(4), FFNHidden(6), Out(3), gen);
  auto const x = uniform<x_t>({2, 3, 4}, 1);
  auto const y = ffn(x);
  static_assert(std::is_same_v<dt::detail::tags_of<typename std::remove_cvref_t<decltype(y)>::specs>,
                               dt::dims<Batch, Steps, Out>>);
  REQUIRE(y.extents() == std::array<dt::index_t, 3>{2, 3, 3});
  auto const& w1 = ffn.dense1.weight;
  auto const& b1 = ffn.dense1.bias;
  auto const& w2 = ffn.dense2.weight;
  auto const& b2 = ffn.dense2.bias;
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t s = 0; s < 3; ++s) {
      double h[6];
      for (dt::index_t j = 0; j < 6; ++j) {
        h[j] = b1(FFNHidden(j));
        for (dt::index_t i = 0; i < 4; ++i) h[j] += w1(FFNHidden(j), Hidden(i)) * x(Batch(b), Steps(s), Hidden(i));
        h[j] = h[j] > 0 ? h[j] : 0;
      }
      for (dt::index_t o = 0; o < 3; ++o) {
        double want = b2(Out(o));
        for (dt::index_t j = 0; j < 6; ++j) want += w2(Out(o), FFNHidden(j)) * h[j];
        CHECK(y(Batch(b), Steps(s), Out(o)) == Approx(want).margin(1e-12));
      }
    }
  }
  SECTION("the Transformer's form: Hidden back to Hidden") {
    nn::feed_forward<Hidden, FFNHidden> square(Hidden(4), FFNHidden(8), Hidden(4), gen);
    auto const out = square(dt::tensor<float, Batch, Steps, Hidden>(dt::tensor<float, Batch, Steps, Hidden>::extents_type{2, 5, 4}));
    static_assert(std::is_same_v<dt::detail::tags_of<typename std::remove_cvref_t<decltype(out)>::specs>,
                                 dt::dims<Batch, Steps, Hidden>>);
  }
}

TEST_CASE("feed_forward: gradients match finite differences", "[nn][feed_forward][autograd]") {
  dt::generator gen(4);
  nn::feed_forward<Hidden, FFNHidden, Out, double> ffn(Hidden(3), FFNHidden(5), Out(2), gen);
  auto x = uniform<x_t>({2, 2, 3}, 2);
  check_gradients([&](auto const& xx, auto const&...) { return ffn(xx); }, x, ffn.dense1.weight, ffn.dense1.bias,
                  ffn.dense2.weight, ffn.dense2.bias);
  static_assert(std::is_same_v<decltype(ffn.dense1.weight.grad()), dt::tensor<double, FFNHidden, Hidden>>);
}

TEST_CASE("feed_forward: the activation and the biases as options", "[nn][feed_forward]") {
  auto const x = uniform<x_t>({2, 3, 4}, 7, -2.0, 2.0);
  struct form {
    nn::activation act;
    double (*f)(double);
  };
  form const forms[] = {
      {nn::activation::relu, [](double v) { return v > 0 ? v : 0.0; }},
      {nn::activation::gelu, [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {nn::activation::gelu_tanh,
       [](double v) { return 0.5 * v * (1 + std::tanh(std::sqrt(2 / std::numbers::pi) * (v + 0.044715 * v * v * v))); }},
      {nn::activation::silu, [](double v) { return v / (1 + std::exp(-v)); }},
  };
  for (form const& fm : forms) {
    for (bool const bias : {true, false}) {
      INFO("activation " << static_cast<int>(fm.act) << ", bias " << bias);
      dt::generator gen(8);
      nn::feed_forward<Hidden, FFNHidden, Out, double> ffn(Hidden(4), FFNHidden(6), Out(3),
                                                           {.act = fm.act, .bias = bias}, gen);
      CHECK(ffn.act() == fm.act);
      CHECK(ffn.dense1.has_bias() == bias);
      CHECK(nn::parameter_names(ffn).size() == (bias ? 4u : 2u));
      auto const y = ffn(x);
      auto const& w1 = ffn.dense1.weight;
      auto const& w2 = ffn.dense2.weight;
      for (dt::index_t b = 0; b < 2; ++b) {
        for (dt::index_t s = 0; s < 3; ++s) {
          double h[6];
          for (dt::index_t j = 0; j < 6; ++j) {
            h[j] = bias ? ffn.dense1.bias(FFNHidden(j)) : 0.0;
            for (dt::index_t i = 0; i < 4; ++i) h[j] += w1(FFNHidden(j), Hidden(i)) * x(Batch(b), Steps(s), Hidden(i));
            h[j] = fm.f(h[j]);
          }
          for (dt::index_t o = 0; o < 3; ++o) {
            double want = bias ? ffn.dense2.bias(Out(o)) : 0.0;
            for (dt::index_t j = 0; j < 6; ++j) want += w2(Out(o), FFNHidden(j)) * h[j];
            CHECK(y(Batch(b), Steps(s), Out(o)) == Approx(want).margin(1e-12));
          }
        }
      }
    }
  }
  dt::generator gen(9);
  nn::feed_forward<Hidden, FFNHidden, Out, double> gelu_ffn(Hidden(3), FFNHidden(5), Out(2),
                                                            {.act = nn::activation::gelu_tanh}, gen);
  auto x2 = uniform<x_t>({2, 2, 3}, 10);
  check_gradients([&](auto const& xx, auto const&...) { return gelu_ffn(xx); }, x2, gelu_ffn.dense1.weight,
                  gelu_ffn.dense1.bias, gelu_ffn.dense2.weight, gelu_ffn.dense2.bias);
}

TEST_CASE("feed_forward: parameters by d2l's names, saved and loaded", "[nn][feed_forward]") {
  dt::generator gen(5);
  nn::feed_forward<Hidden, FFNHidden> a(Hidden(4), FFNHidden(6), Hidden(4), gen);
  CHECK(nn::parameter_names(a) ==
        std::vector<std::string>{"dense1.weight", "dense1.bias", "dense2.weight", "dense2.bias"});
  std::vector<std::string> keys;
  a.for_each_parameter([&](std::string const& k, auto const&) { keys.push_back(k); }, "blks.0.ffn.");
  CHECK(keys.front() == "blks.0.ffn.dense1.weight");
  auto const dir = std::filesystem::temp_directory_path() / "dimtensor_feed_forward_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (std::string const target : {"w.safetensors", "npy"}) {
    INFO(target);
    nn::save_parameters(a, dir / target);
    nn::feed_forward<Hidden, FFNHidden> b(Hidden(4), FFNHidden(6), Hidden(4), gen);
    nn::load_parameters(b, dir / target);
    CHECK(dt::equal(a.dense1.weight, b.dense1.weight));
    CHECK(dt::equal(a.dense2.bias, b.dense2.bias));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("feed_forward: bad input names the dim", "[nn][feed_forward]") {
  dt::generator gen(6);
  nn::feed_forward<Hidden, FFNHidden, Out, double> ffn(Hidden(3), FFNHidden(5), Out(2), gen);
  auto const x = uniform<x_t>({2, 2, 4}, 2);
  REQUIRE_THROWS_AS(ffn(x), dt::shape_error);
  REQUIRE_THROWS_WITH(ffn(x), Catch::Contains("Hidden") && Catch::Contains("4") && Catch::Contains("3"));
}
