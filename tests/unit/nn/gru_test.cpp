// nn::gru: values against a naive loop of PyTorch's equations, gradients
// against finite differences, parameters by PyTorch's names, save/load,
// bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/gru.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
using test_support::check_gradients;
using test_support::uniform;

namespace gru_test {

using dt::index_t;

DIMTENSOR_DIM(Time);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Hidden);

using gru_d = nn::gru<Time, Batch, Embed, Hidden, double>;
using input_d = dt::tensor<double, Time, Batch, Embed>;
using state_d = dt::tensor<double, nn::Layers, Batch, Hidden>;

// A parameter's element (row i, column j; j = 0 for a bias), by key.
struct params {
  std::vector<std::vector<double>> w_ih, w_hh, b_ih, b_hh;
  std::vector<index_t> in_sizes;
};

template <class M>
params read_params(M const& m) {
  params p;
  m.for_each_parameter([&](std::string const& key, auto const& t) {
    auto const c = t.contiguous();
    std::vector<double> v(c.data(), c.data() + c.size());
    if (key.rfind("weight_ih", 0) == 0) {
      p.w_ih.push_back(v);
      p.in_sizes.push_back(t.extents()[1]);
    } else if (key.rfind("weight_hh", 0) == 0) {
      p.w_hh.push_back(v);
    } else if (key.rfind("bias_ih", 0) == 0) {
      p.b_ih.push_back(v);
    } else {
      p.b_hh.push_back(v);
    }
  });
  return p;
}

template <class X>
X ones_of(X const& x) {
  X out(x.extents());
  out.fill(1);
  return out;
}

double sigmoid(double a) { return 1 / (1 + std::exp(-a)); }

// PyTorch's equations, one loop per element: x[t][b][i] flat time-major,
// h0 [layers][b][h] flat (or empty). Returns outputs [t][b][h] and final state.
struct reference_result {
  std::vector<double> out, state;
};
reference_result reference(params const& p, std::vector<double> const& x, index_t T, index_t B, index_t H,
                           std::vector<double> const& h0) {
  std::size_t const L = p.w_ih.size();
  std::vector<double> in = x;
  reference_result res;
  res.state.assign(L * B * H, 0.0);
  for (std::size_t l = 0; l < L; ++l) {
    index_t const I = p.in_sizes[l];
    std::vector<double> h(B * H, 0.0);
    if (!h0.empty()) std::copy(h0.begin() + l * B * H, h0.begin() + (l + 1) * B * H, h.begin());
    std::vector<double> out(T * B * H);
    for (index_t t = 0; t < T; ++t) {
      std::vector<double> next(B * H);
      for (index_t b = 0; b < B; ++b) {
        for (index_t j = 0; j < H; ++j) {
          double gi[3], gh[3];
          for (int k = 0; k < 3; ++k) {
            index_t const row = k * H + j;
            gi[k] = p.b_ih[l][row];
            gh[k] = p.b_hh[l][row];
            for (index_t i = 0; i < I; ++i) gi[k] += p.w_ih[l][row * I + i] * in[(t * B + b) * I + i];
            for (index_t i = 0; i < H; ++i) gh[k] += p.w_hh[l][row * H + i] * h[b * H + i];
          }
          double const r = sigmoid(gi[0] + gh[0]);
          double const z = sigmoid(gi[1] + gh[1]);
          double const n = std::tanh(gi[2] + r * gh[2]);
          next[b * H + j] = (1 - z) * n + z * h[b * H + j];
        }
      }
      h = next;
      std::copy(h.begin(), h.end(), out.begin() + t * B * H);
    }
    std::copy(h.begin(), h.end(), res.state.begin() + l * B * H);
    in = out;
    res.out = out;
  }
  return res;
}

template <class X>
std::vector<double> flat(X const& x) {
  auto const c = dt::eval(x).contiguous();
  return std::vector<double>(c.data(), c.data() + c.size());
}

void check_all_close(std::vector<double> const& got, std::vector<double> const& want, double tol = 1e-12) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(got[i] == Approx(want[i]).margin(tol));
  }
}

}  // namespace gru_test

using namespace gru_test;

TEST_CASE("gru: outputs and final state are PyTorch's equations", "[nn][gru]") {
  dt::generator gen(11);
  gru_d rnn(Embed(3), Hidden(4), 2, 0.0, gen);
  rnn.eval();
  auto const x = uniform<input_d>({5, 2, 3}, 1);
  auto const p = read_params(rnn);

  SECTION("from a zero state") {
    auto [out, state] = rnn(x);
    static_assert(std::is_same_v<decltype(out), dt::tensor<double, Time, Batch, Hidden>>);
    static_assert(std::is_same_v<decltype(state), state_d>);
    CHECK(out.extents() == std::array<index_t, 3>{5, 2, 4});
    CHECK(state.extents() == std::array<index_t, 3>{2, 2, 4});
    auto const want = reference(p, flat(x), 5, 2, 4, {});
    check_all_close(flat(out), want.out);
    check_all_close(flat(state), want.state);
  }
  SECTION("from a given state") {
    auto const h0 = uniform<state_d>({2, 2, 4}, 2);
    auto [out, state] = rnn(x, h0);
    auto const want = reference(p, flat(x), 5, 2, 4, flat(h0));
    check_all_close(flat(out), want.out);
    check_all_close(flat(state), want.state);
  }
  SECTION("a batch-major input gives the same numbers, batch-major") {
    auto const xb = dt::permute<Batch, Time, Embed>(x).contiguous();
    auto [out, state] = rnn(xb);
    static_assert(std::is_same_v<dt::detail::tags_of<typename decltype(out)::specs>, dt::dims<Batch, Time, Hidden>>);
    auto const [out_t, state_t] = rnn(x);
    check_all_close(flat(dt::permute<Time, Batch, Hidden>(out)), flat(out_t));
    check_all_close(flat(state), flat(state_t));
  }
  SECTION("a lazy input is evaluated") {
    auto [out, state] = rnn(x * 2.0);
    auto const want = reference(p, flat(x * 2.0), 5, 2, 4, {});
    check_all_close(flat(out), want.out);
  }
  SECTION("one layer, one step") {
    gru_d one(Embed(3), Hidden(4), 1, 0.0, gen);
    auto const x1 = uniform<input_d>({1, 3, 3}, 3);
    auto [out, state] = one(x1);
    auto const want = reference(read_params(one), flat(x1), 1, 3, 4, {});
    check_all_close(flat(out), want.out);
    check_all_close(flat(state), want.state);
  }
}

TEST_CASE("gru: parameters have PyTorch's names, shapes and initial range", "[nn][gru]") {
  dt::generator gen(3);
  nn::gru<Time, Batch, Embed, Hidden> rnn(Embed(5), Hidden(4), 3, 0.1, gen);
  CHECK(rnn.num_layers() == 3);
  CHECK(rnn.input_size() == 5);
  CHECK(rnn.hidden_size() == 4);
  CHECK(nn::parameter_names(rnn) ==
        std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",  //
                                 "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",  //
                                 "weight_ih_l2", "weight_hh_l2", "bias_ih_l2", "bias_hh_l2"});
  CHECK(nn::parameter_count(rnn) == 12 * 5 + 12 * 4 + 24 + 2 * (12 * 4 * 2 + 24));
  CHECK(rnn.first_layer.weight_ih.extents() == std::array<index_t, 2>{12, 5});
  CHECK(rnn.upper_layers[1].weight_ih.extents() == std::array<index_t, 2>{12, 4});
  rnn.for_each_parameter([&](std::string const& key, auto const& t) {
    INFO(key);
    CHECK(t.requires_grad());
    for (index_t i = 0; i < t.size(); ++i) {
      CHECK(std::abs(t.data()[i]) <= 0.5f);  // 1/sqrt(4)
    }
  });
  rnn.for_each_parameter([](std::string const& key, auto const&) { CHECK(key.rfind("encoder.rnn.", 0) == 0); },
                         "encoder.rnn.");
}

TEST_CASE("gru: gradients match finite differences", "[nn][gru][autograd]") {
  dt::generator gen(5);
  gru_d rnn(Embed(3), Hidden(2), 2, 0.0, gen);
  rnn.eval();
  auto& l0 = rnn.first_layer;
  auto& l1 = rnn.upper_layers[0];
  auto x = uniform<input_d>({3, 2, 3}, 7);
  auto h0 = uniform<state_d>({2, 2, 2}, 8);

  SECTION("outputs, with respect to the input, the state and every parameter") {
    check_gradients([&](auto const& xx, auto const& hh, auto const&...) { return rnn(xx, hh).first; }, x, h0,
                    l0.weight_ih, l0.weight_hh, l0.bias_ih, l0.bias_hh, l1.weight_ih, l1.weight_hh, l1.bias_ih,
                    l1.bias_hh);
  }
  SECTION("final state, with respect to the input, the state and every parameter") {
    check_gradients([&](auto const& xx, auto const& hh, auto const&...) { return rnn(xx, hh).second; }, x, h0,
                    l0.weight_ih, l0.weight_hh, l0.bias_ih, l0.bias_hh, l1.weight_ih, l1.weight_hh, l1.bias_ih,
                    l1.bias_hh);
  }
  SECTION("outputs and state together, from a zero state, batch-major input") {
    auto xb = dt::permute<Batch, Time, Embed>(x).contiguous();
    check_gradients(
        [&](auto const& xx, auto const&...) {
          auto [out, state] = rnn(xx);
          return dt::eval(dt::permute<Time, Batch, Hidden>(out) * 2.0 + dt::sum<nn::Layers>(state));
        },
        xb, l0.weight_ih, l0.weight_hh, l1.bias_hh);
  }
  SECTION("gradients accumulate over two passes; the gradient has the value's type") {
    x.requires_grad_();
    auto const [o1, s1] = rnn(x);
    o1.backward(ones_of(o1));
    auto const first = x.grad().clone();
    auto const w_first = l0.weight_hh.grad().clone();
    auto const [o2, s2] = rnn(x);
    o2.backward(ones_of(o2));
    static_assert(std::is_same_v<decltype(x.grad()), input_d>);
    static_assert(std::is_same_v<decltype(l0.weight_hh.grad()), dt::tensor<double, nn::Gates, Hidden>>);
    CHECK(dt::max_abs_diff(x.grad(), first * 2.0) < 1e-12);
    CHECK(dt::max_abs_diff(l0.weight_hh.grad(), w_first * 2.0) < 1e-12);
  }
  SECTION("nothing is recorded under no_grad") {
    dt::autograd::no_grad const guard;
    auto const [out, state] = rnn(x, h0);
    CHECK_FALSE(out.requires_grad());
    CHECK_FALSE(state.requires_grad());
  }
}

TEST_CASE("gru: dropout between layers in training mode only", "[nn][gru]") {
  dt::generator gen(9);
  gru_d rnn(Embed(3), Hidden(6), 2, 0.5, gen, 42);
  auto const x = uniform<input_d>({4, 3, 3}, 4);
  CHECK(rnn.is_training());
  auto const [train_out, train_state] = rnn(x);
  rnn.eval();
  auto const [eval_out, eval_state] = rnn(x);
  auto const [eval_out2, eval_state2] = rnn(x);
  CHECK(dt::max_abs_diff(train_out, eval_out) > 1e-3);
  CHECK(dt::equal(eval_out, eval_out2));
  // The first layer's state never sees dropout.
  auto const p = read_params(rnn);
  auto const want = reference(p, flat(x), 4, 3, 6, {});
  auto const ts = flat(train_state);
  check_all_close(std::vector<double>(ts.begin(), ts.begin() + 18),
                  std::vector<double>(want.state.begin(), want.state.begin() + 18));

  SECTION("training mode with a seeded dropout is differentiable") {
    auto xx = uniform<input_d>({2, 2, 3}, 5);
    rnn.train();
    check_gradients(
        [&](auto const& in) {
          rnn.dropout.gen().seed(77);
          return rnn(in).first;
        },
        xx);
  }
}

TEST_CASE("gru: saves and loads its parameters by PyTorch's keys", "[nn][gru]") {
  dt::generator gen(21);
  nn::gru<Time, Batch, Embed, Hidden> a(Embed(3), Hidden(4), 2, 0.0, gen);
  nn::gru<Time, Batch, Embed, Hidden> b(Embed(3), Hidden(4), 2, 0.0, gen);
  auto const dir = std::filesystem::temp_directory_path() / "dimtensor_gru_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (std::string const target : {"weights.safetensors", "npy"}) {
    INFO(target);
    dt::nn::save_parameters(a, dir / target);
    nn::gru<Time, Batch, Embed, Hidden> c(Embed(3), Hidden(4), 2, 0.0, gen);
    dt::nn::load_parameters(c, dir / target);
    std::vector<float> va, vc;
    a.for_each_parameter([&](std::string const&, auto const& t) { va.insert(va.end(), t.data(), t.data() + t.size()); });
    c.for_each_parameter([&](std::string const&, auto const& t) { vc.insert(vc.end(), t.data(), t.data() + t.size()); });
    CHECK(va == vc);
  }
  SECTION("a network of other sizes refuses them, naming the key") {
    dt::nn::save_parameters(a, dir / "w.safetensors");
    nn::gru<Time, Batch, Embed, Hidden> wide(Embed(3), Hidden(5), 2, 0.0, gen);
    REQUIRE_THROWS_AS(dt::nn::load_parameters(wide, dir / "w.safetensors"), dt::io_error);
    REQUIRE_THROWS_WITH(dt::nn::load_parameters(wide, dir / "w.safetensors"), Catch::Contains("weight_ih_l0"));
    nn::gru<Time, Batch, Embed, Hidden> deep(Embed(3), Hidden(4), 3, 0.0, gen);
    REQUIRE_THROWS_WITH(dt::nn::load_parameters(deep, dir / "w.safetensors"), Catch::Contains("weight_ih_l2"));
  }
  std::filesystem::remove_all(dir);
  (void)b;
}

TEST_CASE("gru: bad input throws naming the dim", "[nn][gru]") {
  dt::generator gen(1);
  gru_d rnn(Embed(3), Hidden(4), 2, 0.0, gen);
  SECTION("input features") {
    auto const x = uniform<input_d>({2, 2, 5}, 1);
    REQUIRE_THROWS_AS(rnn(x), dt::shape_error);
    REQUIRE_THROWS_WITH(rnn(x), Catch::Contains("gru") && Catch::Contains("Embed") && Catch::Contains("5") &&
                                    Catch::Contains("3"));
  }
  SECTION("state extents") {
    auto const x = uniform<input_d>({2, 2, 3}, 1);
    REQUIRE_THROWS_WITH(rnn(x, state_d(state_d::extents_type{3, 2, 4})), Catch::Contains("Layers") && Catch::Contains("3"));
    REQUIRE_THROWS_WITH(rnn(x, state_d(state_d::extents_type{2, 1, 4})), Catch::Contains("Batch") && Catch::Contains("1"));
    REQUIRE_THROWS_WITH(rnn(x, state_d(state_d::extents_type{2, 2, 3})), Catch::Contains("Hidden"));
    REQUIRE_THROWS_AS(rnn(x, state_d(state_d::extents_type{2, 2, 3})), dt::shape_error);
  }
  SECTION("no steps") {
    auto const x = input_d(input_d::extents_type{0, 2, 3});
    REQUIRE_THROWS_AS(rnn(x), dt::value_error);
    REQUIRE_THROWS_WITH(rnn(x), Catch::Contains("Time"));
  }
  SECTION("sizes") {
    REQUIRE_THROWS_AS(gru_d(Embed(0), Hidden(4)), dt::value_error);
    REQUIRE_THROWS_WITH(gru_d(Embed(3), Hidden(4), 0), Catch::Contains("layers"));
    REQUIRE_THROWS_AS(gru_d(Embed(3), Hidden(4), 2, 1.0), dt::value_error);
  }
}
