#include <catch2/catch.hpp>
#include <cmath>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>
#include <dimtensor/nn/linear.hpp>
#include <filesystem>
#include <string>

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

TEST_CASE("linear: In extent mismatch is a shape_error", "[nn]") {
  dt::nn::linear<Feat, Hidden> lin(Feat(5), Hidden(3));
  auto const x = dt::ones<float>(Batch(2), Feat(6));
  REQUIRE_THROWS_AS(lin(x), dt::shape_error);
  REQUIRE_THROWS_WITH(
      lin(x), Catch::Contains("linear") && Catch::Contains("Feat") && Catch::Contains("6") && Catch::Contains("5"));
}

TEST_CASE("linear: parameters round trip through .npy", "[nn]") {
  namespace fs = std::filesystem;
  fs::path const dir = fs::temp_directory_path() / ("dimtensor_linear_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  dt::generator gen(5);
  dt::nn::linear<Feat, Hidden> src(Feat(4), Hidden(3), true, gen);
  auto params = src.named_parameters();
  REQUIRE(params.first.size() == 1);
  REQUIRE(params.second.size() == 1);
  CHECK(params.first[0].name == "weight");
  CHECK(params.second[0].name == "bias");
  CHECK(&params.first[0].value.get() == &src.weight);
  dt::save_npy(dir / "W_q.weight.npy", src.weight);
  dt::save_npy(dir / "W_q.bias.npy", src.bias);

  dt::nn::linear<Feat, Hidden> dst(Feat(4), Hidden(3), true, gen);
  dst.load_parameters(dir, "W_q.");
  for (dt::index_t o = 0; o < 3; ++o) {
    CHECK(dst.bias(Hidden(o)) == src.bias(Hidden(o)));
    for (dt::index_t i = 0; i < 4; ++i) CHECK(dst.weight(Hidden(o), Feat(i)) == src.weight(Hidden(o), Feat(i)));
  }

  SECTION("wrong shape names the key") {
    dt::save_npy(dir / "W_k.weight.npy", dt::ones<float>(Hidden(3), Feat(5)));
    dt::save_npy(dir / "W_k.bias.npy", src.bias);
    REQUIRE_THROWS_AS(dst.load_parameters(dir, "W_k."), dt::io_error);
    REQUIRE_THROWS_WITH(dst.load_parameters(dir, "W_k."), Catch::Contains("W_k.weight") && Catch::Contains("Feat=5"));
    CHECK(dst.weight(Hidden(0), Feat(0)) == src.weight(Hidden(0), Feat(0)));  // unchanged
  }
  SECTION("missing file names the key") {
    dt::nn::linear<Feat, Hidden> nb(Feat(4), Hidden(3), true, gen);
    REQUIRE_THROWS_WITH(nb.load_parameters(dir, "W_v."), Catch::Contains("W_v.weight"));
  }
  fs::remove_all(dir);
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
