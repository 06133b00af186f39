#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/sequence_mask.hpp>

#include <catch2/catch.hpp>

#include <cstdint>
#include <type_traits>

namespace dt = dimtensor;

namespace sequence_mask_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Hidden);

inline float draw(std::uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 6.0f - 3.0f;
}

TEST_CASE("sequence_mask: d2l's example", "[sequence_mask]") {
  // d2l: sequence_mask(torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([1, 2])) -> [[1, 0, 0], [4, 5, 0]]
  dt::tensor<float, Batch, Steps> const x{{1, 2, 3}, {4, 5, 6}};
  dt::tensor<std::int64_t, Batch> const valid_len{1, 2};
  auto y = dt::sequence_mask(x, valid_len);
  static_assert(std::is_same_v<decltype(y), dt::tensor<float, Batch, Steps>>);
  float const want[2][3] = {{1, 0, 0}, {4, 5, 0}};
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t s = 0; s < 3; ++s) CHECK(y(Batch(b), Steps(s)) == want[b][s]);
  }
  SECTION("the named form is the same, and x is left alone (d2l writes into X)") {
    auto z = dt::sequence_mask<Steps>(x, valid_len);
    for (dt::index_t i = 0; i < 6; ++i) CHECK(z.data()[i] == y.data()[i]);
    CHECK(x(Batch(0), Steps(2)) == 3.0f);
  }
  SECTION("assign() gives d2l's in-place effect") {
    auto t = x.clone();
    t.assign(dt::sequence_mask(t, valid_len, -1));
    CHECK(t(Batch(0), Steps(1)) == -1.0f);
    CHECK(t(Batch(1), Steps(1)) == 5.0f);
  }
}

TEST_CASE("sequence_mask with a value, against a naive loop", "[sequence_mask]") {
  std::uint32_t seed = 1;
  auto x = dt::empty<float>(Batch(4), Steps(37));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = draw(seed);
  dt::tensor<std::int32_t, Batch> const valid_len{0, 3, 37, 20};
  auto const y = dt::sequence_mask<Steps>(x, valid_len, -1.5);
  for (dt::index_t b = 0; b < 4; ++b) {
    for (dt::index_t s = 0; s < 37; ++s) {
      float const want = s < valid_len(Batch(b)) ? x(Batch(b), Steps(s)) : -1.5f;
      CHECK(y(Batch(b), Steps(s)) == want);
    }
  }
}

TEST_CASE("sequence_mask along a dim that is not the last", "[sequence_mask]") {
  // [Batch, Steps, Hidden]: mask time steps of a batch of sequences of feature vectors.
  std::uint32_t seed = 2;
  auto x = dt::empty<float>(Batch(3), Steps(5), Hidden(4));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = draw(seed);

  SECTION("one length per batch row, broadcast over Hidden") {
    dt::tensor<std::int64_t, Batch> const valid_len{2, 0, 5};
    auto const y = dt::sequence_mask<Steps>(x, valid_len, 9);
    for (dt::index_t b = 0; b < 3; ++b) {
      for (dt::index_t s = 0; s < 5; ++s) {
        for (dt::index_t h = 0; h < 4; ++h) {
          float const want = s < valid_len(Batch(b)) ? x(Batch(b), Steps(s), Hidden(h)) : 9.0f;
          CHECK(y(Batch(b), Steps(s), Hidden(h)) == want);
        }
      }
    }
  }
  SECTION("one length per (batch, hidden) position") {
    dt::tensor<std::int64_t, Batch, Hidden> const valid_len{{0, 1, 2, 3}, {5, 4, 3, 2}, {1, 1, 5, 0}};
    auto const y = dt::sequence_mask<Steps>(x, valid_len);
    for (dt::index_t b = 0; b < 3; ++b) {
      for (dt::index_t s = 0; s < 5; ++s) {
        for (dt::index_t h = 0; h < 4; ++h) {
          float const want = s < valid_len(Batch(b), Hidden(h)) ? x(Batch(b), Steps(s), Hidden(h)) : 0.0f;
          CHECK(y(Batch(b), Steps(s), Hidden(h)) == want);
        }
      }
    }
  }
  SECTION("the last dim, with lengths for the leading dim only") {
    dt::tensor<std::int64_t, Batch> const valid_len{1, 4, 0};
    auto const y = dt::sequence_mask(x, valid_len);  // masks Hidden
    for (dt::index_t b = 0; b < 3; ++b) {
      for (dt::index_t s = 0; s < 5; ++s) {
        for (dt::index_t h = 0; h < 4; ++h) {
          float const want = h < valid_len(Batch(b)) ? x(Batch(b), Steps(s), Hidden(h)) : 0.0f;
          CHECK(y(Batch(b), Steps(s), Hidden(h)) == want);
        }
      }
    }
  }
  SECTION("a rank-0 length applies to every row") {
    dt::tensor<std::int64_t> len(dt::uninitialized, {});
    len.data()[0] = 3;
    auto const y = dt::sequence_mask<Steps>(x, len);
    CHECK(y(Batch(2), Steps(2), Hidden(3)) == x(Batch(2), Steps(2), Hidden(3)));
    CHECK(y(Batch(2), Steps(3), Hidden(3)) == 0.0f);
  }
}

TEST_CASE("sequence_mask of integer and bool tensors", "[sequence_mask]") {
  dt::tensor<std::int32_t, Batch, Steps> const x{{1, 2, 3}, {4, 5, 6}};
  auto const y = dt::sequence_mask(x, dt::tensor<std::int32_t, Batch>{2, 1}, -7);
  CHECK(y(Batch(0), Steps(2)) == -7);
  CHECK(y(Batch(1), Steps(0)) == 4);
  dt::tensor<bool, Batch, Steps> const t{{true, true, true}, {true, true, true}};
  auto const m = dt::sequence_mask(t, dt::tensor<std::int64_t, Batch>{1, 3}, false);
  CHECK(m(Batch(0), Steps(0)));
  CHECK_FALSE(m(Batch(0), Steps(1)));
  CHECK(m(Batch(1), Steps(2)));
}

TEST_CASE("sequence_mask: bad lengths throw", "[sequence_mask]") {
  dt::tensor<float, Batch, Steps> const x{{1, 2, 3}, {4, 5, 6}};
  SECTION("a length above the extent") {
    dt::tensor<std::int64_t, Batch> const valid_len{1, 4};
    REQUIRE_THROWS_AS(dt::sequence_mask(x, valid_len), dt::value_error);
    REQUIRE_THROWS_WITH(dt::sequence_mask(x, valid_len),
                        Catch::Contains("sequence_mask: valid length 4 at valid_lens[Batch=1]") &&
                            Catch::Contains("dimension Steps of extent 3"));
  }
  SECTION("a negative length") {
    dt::tensor<std::int32_t, Batch> const valid_len{-2, 1};
    REQUIRE_THROWS_WITH(dt::sequence_mask<Steps>(x, valid_len),
                        Catch::Contains("valid length -2 at valid_lens[Batch=0]") && Catch::Contains("[0, 3]"));
  }
  SECTION("lengths for another number of rows") {
    dt::tensor<std::int64_t, Batch> const valid_len{1, 2, 3};
    REQUIRE_THROWS_AS(dt::sequence_mask(x, valid_len), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::sequence_mask(x, valid_len),
                        Catch::Contains("sequence_mask: extent mismatch for dimension Batch: 2 (x) vs 3 (valid_lens)"));
  }
}

}  // namespace sequence_mask_test
