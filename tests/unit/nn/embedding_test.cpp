// nn::embedding: lookups, gradients (rows added up where an index repeats)
// against finite differences and by hand, PyTorch's names, save/load, bad input.
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/embedding.hpp>
#include <dimtensor/nn/parameters.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
using test_support::check_gradients;
using test_support::uniform;

namespace embedding_test {
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Embed);
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
using tokens_t = dt::tensor<std::int64_t, Batch, Steps>;
}  // namespace embedding_test

using namespace embedding_test;

TEST_CASE("embedding: looks up the rows of the indices, Feat appended", "[nn][embedding]") {
  dt::generator gen(4);
  nn::embedding<Vocab, Embed> emb(Vocab(10), Embed(3), gen);
  CHECK(emb.num_embeddings() == 10);
  CHECK(emb.embedding_dim() == 3);
  CHECK(emb.weight.requires_grad());
  tokens_t const tokens{{1, 2, 9}, {0, 2, 2}};
  auto const out = emb(tokens);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(out)>, dt::tensor<float, Batch, Steps, Embed>>);
  REQUIRE(out.extents() == std::array<dt::index_t, 3>{2, 3, 3});
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t s = 0; s < 3; ++s) {
      auto const v = tokens(Batch(b), Steps(s));
      for (dt::index_t e = 0; e < 3; ++e) CHECK(out(Batch(b), Steps(s), Embed(e)) == emb.weight(Vocab(v), Embed(e)));
    }
  }
  SECTION("indices of one dim, and int32 indices") {
    auto const one = emb(dt::tensor<std::int32_t, Steps>{7, 7});
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(one)>, dt::tensor<float, Steps, Embed>>);
    CHECK(one(Steps(1), Embed(2)) == emb.weight(Vocab(7), Embed(2)));
  }
  SECTION("the weight starts as N(0, 1)") {
    nn::embedding<Vocab, Embed> big(Vocab(200), Embed(50), gen);
    double sum = 0, sq = 0;
    for (dt::index_t i = 0; i < big.weight.size(); ++i) {
      sum += big.weight.data()[i];
      sq += double(big.weight.data()[i]) * big.weight.data()[i];
    }
    double const n = static_cast<double>(big.weight.size());
    CHECK(std::abs(sum / n) < 0.05);
    CHECK(std::abs(sq / n - 1) < 0.05);
  }
}

TEST_CASE("embedding: the weight's gradient adds up the rows of repeated indices", "[nn][embedding][autograd]") {
  dt::generator gen(5);
  nn::embedding<Vocab, Embed, double> emb(Vocab(5), Embed(2), gen);
  tokens_t const tokens{{1, 3, 1}, {4, 1, 0}};
  SECTION("finite differences") {
    check_gradients([&](auto const&) { return emb(tokens); }, emb.weight);
  }
  SECTION("by hand: ones give the count of each index") {
    emb.weight.zero_grad();
    auto const out = emb(tokens);
    dt::tensor<double, Batch, Steps, Embed> g(out.extents());
    g.fill(1);
    out.backward(g);
    static_assert(std::is_same_v<decltype(emb.weight.grad()), dt::tensor<double, Vocab, Embed>>);
    double const counts[5] = {1, 3, 0, 1, 1};
    for (dt::index_t v = 0; v < 5; ++v) {
      CHECK(emb.weight.grad()(Vocab(v), Embed(0)) == counts[v]);
      CHECK(emb.weight.grad()(Vocab(v), Embed(1)) == counts[v]);
    }
    // A second pass accumulates.
    emb(tokens).backward(g);
    CHECK(emb.weight.grad()(Vocab(1), Embed(1)) == 6);
  }
  SECTION("nothing is recorded under no_grad") {
    dt::autograd::no_grad const guard;
    CHECK_FALSE(emb(tokens).requires_grad());
  }
}

TEST_CASE("embedding: a padding row is drawn as zeros and gets no gradient (nn.Embedding's padding_idx)",
          "[nn][embedding][autograd]") {
  dt::generator gen(6);
  nn::embedding<Vocab, Embed, double> emb(Vocab(5), Embed(2), {.padding_idx = 1}, gen);
  REQUIRE(emb.padding_idx() == 1);
  CHECK(emb.weight.requires_grad());
  CHECK(emb.weight(Vocab(1), Embed(0)) == 0);
  CHECK(emb.weight(Vocab(1), Embed(1)) == 0);
  CHECK(emb.weight(Vocab(2), Embed(0)) != 0);
  // the padding row is looked up as any other (here after loading weights into it)
  emb.weight.detach().fill(0.5);
  tokens_t const tokens{{1, 3, 1}, {4, 1, 0}};
  auto const out = emb(tokens);
  CHECK(out(Batch(0), Steps(0), Embed(1)) == 0.5);
  dt::tensor<double, Batch, Steps, Embed> g(out.extents());
  g.fill(1);
  out.backward(g);
  double const counts[5] = {1, 0, 0, 1, 1};   // index 1 appears three times, and adds nothing
  for (dt::index_t v = 0; v < 5; ++v) {
    CHECK(emb.weight.grad()(Vocab(v), Embed(0)) == counts[v]);
    CHECK(emb.weight.grad()(Vocab(v), Embed(1)) == counts[v]);
  }
  // a negative padding index counts from the end; out of range is bad input
  CHECK(nn::embedding<Vocab, Embed>(Vocab(5), Embed(2), {.padding_idx = -1}, gen).padding_idx() == 4);
  CHECK_FALSE(nn::embedding<Vocab, Embed>(Vocab(5), Embed(2), gen).padding_idx().has_value());
  CHECK_THROWS_WITH((nn::embedding<Vocab, Embed>(Vocab(5), Embed(2), {.padding_idx = 5}, gen)),
                    Catch::Contains("padding_idx 5 outside the 5 rows of Vocab"));
  CHECK_THROWS_WITH((nn::embedding<Vocab, Embed>(Vocab(5), Embed(2), {.padding_idx = -6}, gen)),
                    Catch::Contains("padding_idx -6 outside the 5 rows of Vocab"));
}

TEST_CASE("embedding: parameters by PyTorch's name, saved and loaded", "[nn][embedding]") {
  dt::generator gen(6);
  nn::embedding<Vocab, Embed> a(Vocab(7), Embed(4), gen);
  CHECK(nn::parameter_names(a) == std::vector<std::string>{"weight"});
  std::vector<std::string> keys;
  a.for_each_parameter([&](std::string const& k, auto const&) { keys.push_back(k); }, "encoder.embedding.");
  CHECK(keys == std::vector<std::string>{"encoder.embedding.weight"});
  auto const dir = std::filesystem::temp_directory_path() / "dimtensor_embedding_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (std::string const target : {"w.safetensors", "npy"}) {
    INFO(target);
    nn::save_parameters(a, dir / target);
    nn::embedding<Vocab, Embed> b(Vocab(7), Embed(4), gen);
    CHECK_FALSE(dt::equal(a.weight, b.weight));
    nn::load_parameters(b, dir / target);
    CHECK(dt::equal(a.weight, b.weight));
  }
  nn::embedding<Vocab, Embed> other(Vocab(8), Embed(4), gen);
  REQUIRE_THROWS_AS(nn::load_parameters(other, dir / "w.safetensors"), dt::io_error);
  std::filesystem::remove_all(dir);
}

TEST_CASE("embedding: bad input", "[nn][embedding]") {
  dt::generator gen(7);
  nn::embedding<Vocab, Embed> emb(Vocab(4), Embed(2), gen);
  REQUIRE_THROWS_AS(emb(tokens_t{{0, 4}}), dt::value_error);
  REQUIRE_THROWS_WITH(emb(tokens_t{{0, 4}}),
                      Catch::StartsWith("embedding: ") && Catch::Contains("4") && Catch::Contains("Vocab"));
  REQUIRE_THROWS_WITH(emb(tokens_t{{-1, 0}}), Catch::Contains("-1") && Catch::Contains("Vocab"));
  REQUIRE_THROWS_AS((nn::embedding<Vocab, Embed>(Vocab(0), Embed(2))), dt::value_error);
  REQUIRE_THROWS_WITH((nn::embedding<Vocab, Embed>(Vocab(3), Embed(-1))), Catch::Contains("Embed"));
}
