#include <catch2/catch.hpp>

#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/merge.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/split.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace dt = dimtensor;

namespace merge_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
DIMTENSOR_DIM(BatchHeads);
}  // namespace merge_test

using namespace merge_test;

TEST_CASE("merge of row-major adjacent dims is a view", "[ops][merge]") {
  auto x = dt::empty<float>(Batch(2), Heads(3), Queries(4));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i);
  auto y = dt::merge<Batch, Heads, BatchHeads>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, BatchHeads, Queries>>);
  CHECK(y.extents() == std::array<dt::index_t, 2>{6, 4});
  CHECK(y.strides() == std::array<dt::index_t, 2>{4, 1});
  CHECK(y.storage() == x.storage());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 3; ++h)
      for (dt::index_t q = 0; q < 4; ++q) CHECK(y(BatchHeads(b * 3 + h), Queries(q)) == x(Batch(b), Heads(h), Queries(q)));

  auto inner = dt::merge<Heads, Queries, Hidden>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(inner), dt::tensor<float, Batch, Hidden>>);
  CHECK(inner(Batch(1), Hidden(7)) == x(Batch(1), Heads(1), Queries(3)));
  inner(Batch(0), Hidden(11)) = 100.f;
  CHECK(x(Batch(0), Heads(2), Queries(3)) == 100.f);
}

TEST_CASE("merge of dims whose strides do not chain copies first", "[ops][merge]") {
  auto x = dt::empty<int>(Heads(3), Batch(2), Queries(4));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<int>(i);
  auto p = dt::transpose<Heads, Batch>(x);  // [Batch, Heads, Queries], not row-major
  auto y = dt::merge<Batch, Heads, BatchHeads>(p);
  CHECK(y.storage() != x.storage());
  CHECK(y.is_contiguous());
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t h = 0; h < 3; ++h)
      for (dt::index_t q = 0; q < 4; ++q) CHECK(y(BatchHeads(b * 3 + h), Queries(q)) == x(Heads(h), Batch(b), Queries(q)));

  auto pq = dt::transpose<Heads, Queries>(x);      // [Queries, Batch, Heads], strides 1, 4, 8
  auto z = dt::merge<Queries, Batch, Hidden>(pq);  // stride(Queries) 1 != 4 * 2: a copy
  CHECK(z.storage() != x.storage());
  CHECK(z(Hidden(3 * 2 + 1), Heads(2)) == x(Heads(2), Batch(1), Queries(3)));

  // A non-contiguous tensor whose two merged dims still chain: a view.
  auto bq = dt::permute<Batch, Queries, Heads>(x);  // strides 4, 1, 8
  REQUIRE_FALSE(bq.is_contiguous());
  auto v = dt::merge<Batch, Queries, Hidden>(bq);
  CHECK(v.storage() == x.storage());
  CHECK(v.strides() == std::array<dt::index_t, 2>{1, 8});
  for (dt::index_t b = 0; b < 2; ++b)
    for (dt::index_t q = 0; q < 4; ++q)
      for (dt::index_t h = 0; h < 3; ++h) CHECK(v(Hidden(b * 4 + q), Heads(h)) == x(Heads(h), Batch(b), Queries(q)));
}

TEST_CASE("merge keeps a static product and handles extent-1 dims as views", "[ops][merge]") {
  auto x = dt::zeros<float>(Batch::fixed<2>{}, Heads::fixed<3>{}, Queries(5));
  auto y = dt::merge<Batch, Heads, BatchHeads>(x);
  STATIC_REQUIRE(std::is_same_v<decltype(y), dt::tensor<float, BatchHeads::fixed<6>, Queries>>);

  auto one = dt::empty<float>(Heads(3), Batch(1), Queries(2));
  for (dt::index_t i = 0; i < one.size(); ++i) one.data()[i] = static_cast<float>(i);
  auto t = dt::transpose<Heads, Batch>(one);  // [Batch=1, Heads, Queries]
  auto m = dt::merge<Batch, Heads, BatchHeads>(t);
  CHECK(m.storage() == one.storage());
  CHECK(m(BatchHeads(2), Queries(1)) == one(Heads(2), Batch(0), Queries(1)));

  auto e = dt::merge<Batch, Heads, BatchHeads>(x + 1.f);
  CHECK(e(BatchHeads(5), Queries(4)) == 1.f);
  STATIC_REQUIRE(std::is_same_v<decltype(dt::merge<Batch, Heads, BatchHeads>(dt::ill_formed{})), dt::ill_formed>);
}

// d2l 10.5 (multi-head attention):
//   transpose_qkv(X, h):  X.reshape(B, Q, h, -1).permute(0, 2, 1, 3).reshape(-1, Q, H / h)
//   transpose_output(X, h): X.reshape(-1, h, Q, F).permute(0, 2, 1, 3).reshape(B, Q, -1)
TEST_CASE("d2l transpose_qkv / transpose_output round trip", "[ops][merge][split][permute]") {
  constexpr dt::index_t B = 2, Q = 4, H = 6, h = 3, F = H / h;
  auto x = dt::empty<float>(Batch(B), Queries(Q), Hidden(H));
  for (dt::index_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(i) * 0.5f - 3.f;

  auto qkv = dt::merge<Batch, Heads, BatchHeads>(
      dt::permute<Batch, Heads, Queries, HeadFeat>(dt::split<Hidden, Heads, HeadFeat>(x, Heads(h))));
  STATIC_REQUIRE(std::is_same_v<decltype(qkv), dt::tensor<float, BatchHeads, Queries, HeadFeat>>);
  REQUIRE(qkv.extents() == std::array<dt::index_t, 3>{B * h, Q, F});

  // torch's result, element by element: out[b * h + j][q][f] = X[b][q][j * F + f].
  float const* xd = x.data();
  for (dt::index_t b = 0; b < B; ++b)
    for (dt::index_t j = 0; j < h; ++j)
      for (dt::index_t q = 0; q < Q; ++q)
        for (dt::index_t f = 0; f < F; ++f)
          CHECK(qkv(BatchHeads(b * h + j), Queries(q), HeadFeat(f)) == xd[(b * Q + q) * H + j * F + f]);
  auto flat = qkv.contiguous();
  for (dt::index_t i = 0; i < flat.size(); ++i) {
    dt::index_t const f = i % F, q = (i / F) % Q, bh = i / (F * Q);
    CHECK(flat.data()[i] == xd[((bh / h) * Q + q) * H + (bh % h) * F + f]);
  }

  auto out = dt::merge<Heads, HeadFeat, Hidden>(dt::permute<Batch, Queries, Heads, HeadFeat>(
      dt::split<BatchHeads, Batch, Heads>(qkv, Batch(B))));
  STATIC_REQUIRE(std::is_same_v<decltype(out), decltype(x)>);
  REQUIRE(out.extents() == x.extents());
  for (dt::index_t b = 0; b < B; ++b)
    for (dt::index_t q = 0; q < Q; ++q)
      for (dt::index_t k = 0; k < H; ++k) CHECK(out(Batch(b), Queries(q), Hidden(k)) == x(Batch(b), Queries(q), Hidden(k)));
}
