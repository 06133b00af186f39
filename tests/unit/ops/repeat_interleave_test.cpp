#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/repeat_interleave.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace repeat_interleave_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(BatchHeads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
}  // namespace repeat_interleave_test

using namespace repeat_interleave_test;

TEST_CASE("repeat_interleave of d2l's valid_lens over heads", "[ops][repeat_interleave]") {
  // torch.repeat_interleave(torch.tensor([2, 6]), repeats=3, dim=0) == [2, 2, 2, 6, 6, 6]
  dt::tensor<std::int64_t, Batch> valid_lens{2, 6};
  auto r = dt::repeat_interleave<Batch, BatchHeads>(valid_lens, 3);
  STATIC_REQUIRE(std::is_same_v<decltype(r), dt::tensor<std::int64_t, BatchHeads>>);
  REQUIRE(r.extents() == std::array<dt::index_t, 1>{6});
  std::int64_t const want[] = {2, 2, 2, 6, 6, 6};
  for (int i = 0; i < 6; ++i) CHECK(r(BatchHeads(i)) == want[i]);
  CHECK(r.storage() != valid_lens.storage());
}

TEST_CASE("repeat_interleave along an inner and an outer dim", "[ops][repeat_interleave]") {
  auto x = dt::empty<float>(Batch(2), Queries(3), Hidden::fixed<2>{});
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto mid = dt::repeat_interleave<Queries>(x, 2);
  STATIC_REQUIRE(std::is_same_v<decltype(mid), dt::tensor<float, Batch, Queries, Hidden::fixed<2>>>);
  REQUIRE(mid.extents() == std::array<dt::index_t, 3>{2, 6, 2});
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t q = 0; q < 6; ++q)
      for (dt::index_t h = 0; h < 2; ++h) CHECK(mid(Batch(b), Queries(q), Hidden(h)) == x(Batch(b), Queries(q / 2), Hidden(h)));

  // A static dim becomes dynamic: its new extent depends on n.
  auto last = dt::repeat_interleave<Hidden>(x, 3);
  STATIC_REQUIRE(std::is_same_v<decltype(last), dt::tensor<float, Batch, Queries, Hidden>>);
  REQUIRE(last.extents() == std::array<dt::index_t, 3>{2, 3, 6});
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t q = 0; q < 3; ++q)
      for (dt::index_t h = 0; h < 6; ++h) CHECK(last(Batch(b), Queries(q), Hidden(h)) == x(Batch(b), Queries(q), Hidden(h / 3)));

  auto first = dt::repeat_interleave<Batch, BatchHeads>(x, 2);
  STATIC_REQUIRE(std::is_same_v<decltype(first), dt::tensor<float, BatchHeads, Queries, Hidden::fixed<2>>>);
  for (dt::index_t b = 0; b < 4; ++b) CHECK(first(BatchHeads(b), Queries(2), Hidden(1)) == x(Batch(b / 2), Queries(2), Hidden(1)));
}

TEST_CASE("repeat_interleave of a strided view, an expression, zero and one repeats", "[ops][repeat_interleave]") {
  auto x = dt::empty<int>(Batch(2), Queries(3));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<int>(i);
  auto t = dt::repeat_interleave<Batch>(dt::transpose<Batch, Queries>(x), 2);  // [Queries, Batch=4]
  STATIC_REQUIRE(std::is_same_v<decltype(t), dt::tensor<int, Queries, Batch>>);
  for (dt::index_t q = 0; q < 3; ++q)
    for (dt::index_t b = 0; b < 4; ++b) CHECK(t(Queries(q), Batch(b)) == x(Batch(b / 2), Queries(q)));

  auto e = dt::repeat_interleave<Queries>(x * 10, 1);
  for (dt::index_t i = 0; i < e.size(); ++i) CHECK(e.data()[i] == 10 * x.data()[i]);

  auto none = dt::repeat_interleave<Queries>(x, 0);
  CHECK(none.extents() == std::array<dt::index_t, 2>{2, 0});
  CHECK(none.size() == 0);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::repeat_interleave<Batch>(dt::ill_formed{}, 2)), dt::ill_formed>);
}

TEST_CASE("repeat_interleave with a negative count is a value_error", "[ops][repeat_interleave]") {
  auto x = dt::zeros<float>(Batch(2));
  REQUIRE_THROWS_AS(dt::repeat_interleave<Batch>(x, -1), dt::value_error);
  REQUIRE_THROWS_WITH(dt::repeat_interleave<Batch>(x, -1),
                      Catch::Contains("repeat_interleave") && Catch::Contains("Batch") &&
                          Catch::Contains("must not be negative, got -1"));
}

TEST_CASE("repeat_interleave large enough for the threaded copy", "[ops][repeat_interleave]") {
  auto x = dt::empty<float>(Queries(100), Batch(200));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto r = dt::repeat_interleave<Queries>(dt::transpose<Queries, Batch>(x), 2);  // [Batch, Queries=200]
  REQUIRE(r.extents() == std::array<dt::index_t, 2>{200, 200});
  bool all = true;
  for (dt::index_t b = 0; b < 200; ++b)
    for (dt::index_t q = 0; q < 200; ++q) all = all && r(Batch(b), Queries(q)) == x(Queries(q / 2), Batch(b));
  CHECK(all);
}

TEST_CASE("repeat_interleave: repeats that overflow the extent are a value_error", "[ops][repeat_interleave]") {
  // 4 · (2^62 + 1) used to wrap to 4 and write past the buffer; 4 · 2^62 wrapped to an empty tensor.
  dt::tensor<float, Batch> x{1, 2, 3, 4};
  for (dt::index_t repeats : {(dt::index_t{1} << 62) + 1, dt::index_t{1} << 62, dt::index_t{1} << 61}) {
    INFO("repeats " << repeats);
    REQUIRE_THROWS_AS(dt::repeat_interleave<Batch>(x, repeats), dt::value_error);
    REQUIRE_THROWS_WITH(dt::repeat_interleave<Batch>(x, repeats),
                        Catch::StartsWith("repeat_interleave: dimension Batch of extent 4 repeated " +
                                          std::to_string(repeats) + " times overflows the extent"));
  }
  // 2^60 repeats fit in the extent, but 2^62 floats do not fit in memory: the tensor's own check.
  REQUIRE_THROWS_WITH(dt::repeat_interleave<Batch>(x, dt::index_t{1} << 60),
                      Catch::Contains("more elements than memory can address"));
  // An empty dim repeated any number of times stays empty, and nothing is copied.
  auto const empty = dt::zeros<float>(Batch(0), Hidden(3));
  auto const r = dt::repeat_interleave<Batch>(empty, (dt::index_t{1} << 62) + 1);
  CHECK(r.extents() == std::array<dt::index_t, 2>{0, 3});
}
