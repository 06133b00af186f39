#include <catch2/catch.hpp>
#include <cmath>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/parameters.hpp>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "unit/support/files.hpp"

namespace linear_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

TEST_CASE("linear: kaiming-uniform init and shapes", "[nn]") {
  dt::generator gen(7);
  dt::nn::linear<Feat, Hidden> lin(Feat(20), Hidden(8), false, gen);
  CHECK_FALSE(lin.has_bias());
  CHECK(lin.in_features() == 20);
  CHECK(lin.out_features() == 8);
  double const bound = 1.0 / std::sqrt(20.0);
  for (dt::index_t o = 0; o < 8; ++o)
    for (dt::index_t i = 0; i < 20; ++i) {
      float const w = lin.weight(Hidden(o), Feat(i));
      CHECK(std::abs(w) <= bound);
    }
  dt::generator g1(3), g2(3);
  dt::nn::linear<Feat, Hidden> a(Feat(4), Hidden(3), true, g1), b(Feat(4), Hidden(3), true, g2);
  CHECK(a.weight(Hidden(2), Feat(3)) == b.weight(Hidden(2), Feat(3)));
  CHECK(a.bias(Hidden(1)) == b.bias(Hidden(1)));
  CHECK(a.bias(Hidden(1)) != 0.0f);
}

TEST_CASE("linear: forward against a naive loop", "[nn]") {
  dt::generator gen(11);
  auto const with_bias = GENERATE(true, false);
  dt::nn::linear<Feat, Hidden> lin(Feat(5), Hidden(3), with_bias, gen);

  SECTION("In last") {
    auto const x = dt::randn<float>(gen, Batch(2), Queries(4), Feat(5));
    dt::tensor<float, Batch, Queries, Hidden> const y = lin(x);
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t q = 0; q < 4; ++q)
        for (dt::index_t h = 0; h < 3; ++h) {
          double acc = with_bias ? lin.bias(Hidden(h)) : 0.0;
          for (dt::index_t f = 0; f < 5; ++f)
            acc += double(x(Batch(b), Queries(q), Feat(f))) * lin.weight(Hidden(h), Feat(f));
          CHECK(y(Batch(b), Queries(q), Hidden(h)) == Approx(acc).margin(1e-5));
        }
  }
  SECTION("In in the middle, static extents") {
    auto const x = dt::randn<float>(gen, Batch::fixed<2>{}, Feat::fixed<5>{}, Queries::fixed<4>{});
    auto const y = lin(x);
    static_assert(std::remove_cvref_t<decltype(y)>::rank == 3);
    dt::tensor<float, Batch, Hidden, Queries> const yy = y;
    CHECK(y.extents() == std::array<dt::index_t, 3>{2, 3, 4});
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t q = 0; q < 4; ++q)
        for (dt::index_t h = 0; h < 3; ++h) {
          double acc = with_bias ? lin.bias(Hidden(h)) : 0.0;
          for (dt::index_t f = 0; f < 5; ++f)
            acc += double(x(Batch(b), Feat(f), Queries(q))) * lin.weight(Hidden(h), Feat(f));
          CHECK(yy(Batch(b), Hidden(h), Queries(q)) == Approx(acc).margin(1e-5));
        }
  }
}

TEST_CASE("linear: a bias of the wrong extent is a shape_error naming it", "[nn]") {
  dt::nn::linear<Feat, Hidden> lin(Feat(4), Hidden(3));
  lin.bias = dt::zeros<float>(Hidden(2));
  auto const x = dt::ones<float>(Batch(2), Feat(4));
  REQUIRE_THROWS_AS(lin(x), dt::shape_error);
  REQUIRE_THROWS_WITH(lin(x), Catch::Contains("linear") && Catch::Contains("Hidden") && Catch::Contains("bias") &&
                                  Catch::Contains("2") && Catch::Contains("3"));
}

TEST_CASE("linear: In extent mismatch is a shape_error", "[nn]") {
  dt::nn::linear<Feat, Hidden> lin(Feat(5), Hidden(3));
  auto const x = dt::ones<float>(Batch(2), Feat(6));
  REQUIRE_THROWS_AS(lin(x), dt::shape_error);
  REQUIRE_THROWS_WITH(
      lin(x), Catch::Contains("linear") && Catch::Contains("Feat") && Catch::Contains("6") && Catch::Contains("5"));
}

// A module of two layers written by hand, passing the protocol of
// nn/module.hpp on with prefixes (what a reflected struct does for itself).
struct two_layers {
  dt::nn::linear<Feat, Hidden> W_q;
  dt::nn::linear<Hidden, Hidden> W_o;

  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    W_q.for_each_parameter(f, prefix + "W_q.");
    W_o.for_each_parameter(f, prefix + "W_o.");
  }
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    W_q.for_each_parameter(f, prefix + "W_q.");
    W_o.for_each_parameter(f, prefix + "W_o.");
  }
};

TEST_CASE("linear: for_each_parameter gives PyTorch's state_dict keys", "[nn]") {
  dt::generator gen(5);
  dt::nn::linear<Feat, Hidden> with_bias(Feat(4), Hidden(3), true, gen);
  dt::nn::linear<Feat, Hidden> without_bias(Feat(4), Hidden(3), false, gen);

  std::vector<std::string> keys;
  std::vector<void const*> addresses;
  with_bias.for_each_parameter([&](std::string const& key, auto& p) {
    keys.push_back(key);
    addresses.push_back(&p);
  });
  CHECK(keys == std::vector<std::string>{"weight", "bias"});
  CHECK(addresses == std::vector<void const*>{&with_bias.weight, &with_bias.bias});

  keys.clear();
  std::as_const(with_bias).for_each_parameter([&](std::string const& key, auto const&) { keys.push_back(key); },
                                              "W_q.");
  CHECK(keys == std::vector<std::string>{"W_q.weight", "W_q.bias"});

  keys.clear();
  without_bias.for_each_parameter([&](std::string const& key, auto&) { keys.push_back(key); }, "W_k.");
  CHECK(keys == std::vector<std::string>{"W_k.weight"});

  // The parameters are the members themselves: writing through f changes the
  // layer (under no_grad, as they require gradients).
  {
    dt::autograd::no_grad const guard;
    without_bias.for_each_parameter([](std::string const&, auto& p) { p.assign(p * 0.0f); });
  }
  CHECK(without_bias.weight(Hidden(2), Feat(3)) == 0.0f);

  STATIC_REQUIRE(dt::nn::Module<dt::nn::linear<Feat, Hidden>>);
  STATIC_REQUIRE(dt::nn::Module<two_layers>);
  CHECK(dt::nn::parameter_names(with_bias) == std::vector<std::string>{"weight", "bias"});
  CHECK(dt::nn::parameter_names(without_bias) == std::vector<std::string>{"weight"});
  CHECK(dt::nn::parameter_count(with_bias) == 4 * 3 + 3);
  CHECK(dt::nn::parameter_count(without_bias) == 4 * 3);

  two_layers const model{dt::nn::linear<Feat, Hidden>(Feat(4), Hidden(3), true, gen),
                         dt::nn::linear<Hidden, Hidden>(Hidden(3), Hidden(3), false, gen)};
  CHECK(dt::nn::parameter_names(model) == std::vector<std::string>{"W_q.weight", "W_q.bias", "W_o.weight"});
  CHECK(dt::nn::parameter_count(model) == 4 * 3 + 3 + 3 * 3);
}

TEST_CASE("linear: parameters load from and save to .npy folders and safetensors", "[nn]") {
  namespace fs = std::filesystem;
  test_support::temp_dir const tmp("dimtensor_linear_test_");  // a fresh one for each section
  fs::path const& dir = tmp.path();
  dt::generator gen(5);
  auto const layers = [&] {
    return two_layers{dt::nn::linear<Feat, Hidden>(Feat(4), Hidden(3), true, gen),
                      dt::nn::linear<Hidden, Hidden>(Hidden(3), Hidden(3), true, gen)};
  };
  auto const same = [](two_layers const& a, two_layers const& b) {
    bool equal = true;
    for (dt::index_t o = 0; o < 3; ++o) {
      equal = equal && a.W_q.bias(Hidden(o)) == b.W_q.bias(Hidden(o)) && a.W_o.bias(Hidden(o)) == b.W_o.bias(Hidden(o));
      for (dt::index_t i = 0; i < 4; ++i)
        equal = equal && a.W_q.weight(Hidden(o), Feat(i)) == b.W_q.weight(Hidden(o), Feat(i));
      for (dt::index_t i = 0; i < 3; ++i)
        equal = equal && a.W_o.weight(Hidden(o), dt::prime<Hidden>(i)) == b.W_o.weight(Hidden(o), dt::prime<Hidden>(i));
    }
    return equal;
  };
  two_layers const src = layers();

  SECTION("a folder written by hand, one <key>.npy per parameter") {
    dt::save_npy(dir / "W_q.weight.npy", src.W_q.weight);
    dt::save_npy(dir / "W_q.bias.npy", src.W_q.bias);
    dt::save_npy(dir / "W_o.weight.npy", src.W_o.weight);
    dt::save_npy(dir / "W_o.bias.npy", src.W_o.bias);
    two_layers dst = layers();
    REQUIRE_FALSE(same(src, dst));
    auto const handle = dst.W_o.weight;  // shares the parameter's elements
    dt::nn::load_parameters(dst, dir);
    CHECK(same(src, dst));
    // The values land in the parameters' own storage, as PyTorch's load_state_dict.
    CHECK(handle.data() == dst.W_o.weight.data());
    CHECK(handle(Hidden(1), dt::prime<Hidden>(2)) == src.W_o.weight(Hidden(1), dt::prime<Hidden>(2)));
  }
  SECTION("save_parameters then load_parameters, folder and safetensors") {
    for (fs::path const& target : {dir / "saved", dir / "saved.safetensors"}) {
      dt::nn::save_parameters(src, target);
      two_layers dst = layers();
      REQUIRE_FALSE(same(src, dst));
      dt::nn::load_parameters(dst, target);
      CHECK(same(src, dst));
    }
    CHECK(fs::exists(dir / "saved" / "W_o.weight.npy"));
  }
  SECTION("a wrong shape names the key and both shapes; nothing changes") {
    dt::save_npy(dir / "W_q.weight.npy", src.W_q.weight);
    dt::save_npy(dir / "W_q.bias.npy", src.W_q.bias);
    dt::save_npy(dir / "W_o.weight.npy", dt::ones<float>(Hidden(3), dt::prime<Hidden>(5)));
    dt::save_npy(dir / "W_o.bias.npy", src.W_o.bias);
    two_layers dst = layers();
    auto const old = dst.W_q.weight.clone();
    REQUIRE_THROWS_AS(dt::nn::load_parameters(dst, dir), dt::io_error);
    REQUIRE_THROWS_WITH(dt::nn::load_parameters(dst, dir),
                        Catch::Contains("W_o.weight") && Catch::Contains("Hidden'=5") && Catch::Contains("Hidden'=3"));
    for (dt::index_t i = 0; i < 4; ++i) CHECK(dst.W_q.weight(Hidden(0), Feat(i)) == old(Hidden(0), Feat(i)));
  }
  SECTION("a missing file names the key") {
    dt::save_npy(dir / "W_q.weight.npy", src.W_q.weight);
    two_layers dst = layers();
    REQUIRE_THROWS_AS(dt::nn::load_parameters(dst, dir), dt::io_error);
    REQUIRE_THROWS_WITH(dt::nn::load_parameters(dst, dir), Catch::Contains("W_q.bias"));
  }
  SECTION("safetensors: a missing key and an extra key are errors") {
    dt::nn::save_parameters(src.W_q, dir / "one.safetensors");  // keys weight, bias
    two_layers dst = layers();
    REQUIRE_THROWS_WITH(dt::nn::load_parameters(dst, dir / "one.safetensors"), Catch::Contains("W_q.weight"));
    dt::nn::linear<Feat, Hidden> lone(Feat(4), Hidden(3), false, gen);
    REQUIRE_THROWS_WITH(dt::nn::load_parameters(lone, dir / "one.safetensors"), Catch::Contains("bias"));
  }
}

}  // namespace linear_test

namespace linear_test {

TEST_CASE("linear: lazy inputs and ill_formed", "[nn]") {
  dt::generator gen(2);
  dt::nn::linear<Feat, Hidden> lin(Feat(3), Hidden(2), gen);
  auto const x = dt::randn<float>(gen, Batch(2), Feat(3));
  dt::tensor<float, Batch, Hidden> const y = lin(x + x);
  dt::tensor<float, Batch, Hidden> const y1 = lin(x);
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 2; ++h) {
      double const ref = 2.0 * (y1(Batch(b), Hidden(h)) - lin.bias(Hidden(h))) + lin.bias(Hidden(h));
      CHECK(y(Batch(b), Hidden(h)) == Approx(ref).margin(1e-5));
    }
  STATIC_REQUIRE(std::is_same_v<decltype(lin(dt::ill_formed{})), dt::ill_formed>);
}

}  // namespace linear_test

namespace linear_test {

TEMPLATE_TEST_CASE("linear<Hidden, Hidden>: a square layer against a naive loop", "[nn]", float) {
  using T = TestType;
  using HiddenIn = dt::prime<Hidden>;
  double const tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  dt::generator gen(13);
  auto const with_bias = GENERATE(true, false);
  // d2l's W_o is square in size too; in and out sizes may also differ.
  auto const sizes = GENERATE(std::pair<dt::index_t, dt::index_t>{6, 6}, std::pair<dt::index_t, dt::index_t>{4, 6});
  dt::index_t const in = sizes.first, out = sizes.second;
  dt::nn::linear<Hidden, Hidden, T> W_o(Hidden(in), Hidden(out), with_bias, gen);

  STATIC_REQUIRE(std::is_same_v<typename decltype(W_o)::weight_in, HiddenIn>);
  STATIC_REQUIRE(std::is_same_v<decltype(W_o.weight), dt::tensor<T, Hidden, HiddenIn>>);
  CHECK(W_o.in_features() == in);
  CHECK(W_o.out_features() == out);
  CHECK(W_o.weight.extents() == std::array<dt::index_t, 2>{out, in});
  double const bound = 1.0 / std::sqrt(double(in));
  for (dt::index_t o = 0; o < out; ++o)
    for (dt::index_t i = 0; i < in; ++i) CHECK(std::abs(double(W_o.weight(Hidden(o), HiddenIn(i)))) <= bound);

  auto naive = [&](auto const& x, dt::index_t b, dt::index_t q, dt::index_t o, auto const& at) {
    double acc = with_bias ? double(W_o.bias(Hidden(o))) : 0.0;
    for (dt::index_t i = 0; i < in; ++i) acc += double(W_o.weight(Hidden(o), HiddenIn(i))) * double(at(x, b, q, i));
    return acc;
  };

  SECTION("Hidden last") {
    auto const x = dt::randn<T>(gen, Batch(2), Queries(3), Hidden(in));
    dt::tensor<T, Batch, Queries, Hidden> const y = W_o(x);
    CHECK(y.extents() == std::array<dt::index_t, 3>{2, 3, out});
    auto const at = [](auto const& t, dt::index_t b, dt::index_t q, dt::index_t i) {
      return t(Batch(b), Queries(q), Hidden(i));
    };
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t q = 0; q < 3; ++q)
        for (dt::index_t o = 0; o < out; ++o)
          CHECK(double(y(Batch(b), Queries(q), Hidden(o))) == Approx(naive(x, b, q, o, at)).margin(tol));
  }
  SECTION("Hidden in the middle, lazy input") {
    auto const x = dt::randn<T>(gen, Batch(2), Hidden(in), Queries(3));
    auto const y = W_o(x * T(2));
    STATIC_REQUIRE(std::is_same_v<typename std::remove_cvref_t<decltype(y)>::specs, dt::dims<Batch, Hidden, Queries>>);
    CHECK(y.extents() == std::array<dt::index_t, 3>{2, out, 3});
    auto const at = [](auto const& t, dt::index_t b, dt::index_t q, dt::index_t i) {
      return 2 * t(Batch(b), Hidden(i), Queries(q));
    };
    for (dt::index_t b = 0; b < 2; ++b)
      for (dt::index_t q = 0; q < 3; ++q)
        for (dt::index_t o = 0; o < out; ++o)
          CHECK(double(y(Batch(b), Hidden(o), Queries(q))) == Approx(naive(x, b, q, o, at)).margin(tol));
  }
  SECTION("the input's Hidden must have in_features elements") {
    auto const x = dt::ones<T>(Batch(2), Hidden(in + 1));
    REQUIRE_THROWS_AS(W_o(x), dt::shape_error);
    REQUIRE_THROWS_WITH(W_o(x), Catch::Contains("linear") && Catch::Contains("Hidden") &&
                                    Catch::Contains(std::to_string(in + 1)) && Catch::Contains(std::to_string(in)));
  }
}

TEST_CASE("linear<Hidden, Hidden>: parameters and a second application", "[nn]") {
  dt::generator gen(17);
  dt::nn::linear<Hidden, Hidden> W_o(Hidden(4), Hidden(4), true, gen);
  CHECK(dt::nn::parameter_names(W_o) == std::vector<std::string>{"weight", "bias"});
  CHECK(dt::nn::parameter_count(W_o) == 4 * 4 + 4);
  // Applying the square layer twice maps Hidden to Hidden each time.
  auto const x = dt::randn<float>(gen, Batch(3), Hidden(4));
  dt::tensor<float, Batch, Hidden> const once = W_o(x);
  dt::tensor<float, Batch, Hidden> const twice = W_o(W_o(x));
  dt::tensor<float, Batch, Hidden> const again = W_o(once);
  for (dt::index_t b = 0; b < 3; ++b)
    for (dt::index_t h = 0; h < 4; ++h)
      CHECK(twice(Batch(b), Hidden(h)) == Approx(again(Batch(b), Hidden(h))).margin(1e-6));
}

TEST_CASE("linear: extents must be positive", "[nn]") {
  REQUIRE_THROWS_AS((dt::nn::linear<Feat, Hidden>(Feat(0), Hidden(3))), dt::value_error);
  REQUIRE_THROWS_WITH((dt::nn::linear<Feat, Hidden>(Feat(4), Hidden(-1))),
                      Catch::Contains("linear") && Catch::Contains("Hidden") && Catch::Contains("-1"));
  REQUIRE_THROWS_WITH((dt::nn::linear<Hidden, Hidden>(Hidden(0), Hidden(3))), Catch::Contains("Hidden 0"));
}

}  // namespace linear_test
