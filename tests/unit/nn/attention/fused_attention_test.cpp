// Tests of nn/attention/fused.hpp and backends/cpu/attention.hpp: the fused
// scaled dot-product attention that nn::dot_product_attention takes on the
// CPU when dropout is off.  Its output and its gradients against the unfused
// path written out here (contract, masked_softmax, contract, and autograd
// through them), for 1-D, 2-D, typed, optional and no lengths, rows of
// length 0, several query blocks of both sizes, the named multi-head layout read in place
// and strided operands; finite differences in double; the weights computed
// when asked for; which operands the fused path takes.  Additive attention's
// fused scores (no [Queries, KV, Hidden] features) against its unfused path,
// also with projections large enough to leave the exponential form of tanh,
// and by finite differences.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

#include <dimtensor/backends/cpu/attention.hpp>
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>

namespace fused_attention_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(ValueFeat);

namespace dt = dimtensor;
using dt::index_t;
using dt::nn::HeadFeat;
using dt::nn::Heads;

template <class A, class B>
double max_diff(A const& a, B const& b) {
  return static_cast<double>(dt::max(dt::abs(dt::eval(a) - dt::eval(b))).item());
}

/// sum(out * g) and sum(reference * g) give q, k and v the same gradients
/// within @p tol (out and reference recorded from them); the gradients are
/// zeroed after.
template <class Q, class K, class V, class O, class R, class G>
void check_same_gradients(Q& q, K& k, V& v, O const& out, R const& reference, G const& g, double tol) {
  dt::sum(out * g).backward();
  auto const gq = q.grad().clone();
  auto const gk = k.grad().clone();
  auto const gv = v.grad().clone();
  q.zero_grad();
  k.zero_grad();
  v.zero_grad();
  dt::sum(reference * g).backward();
  CHECK(max_diff(gq, q.grad()) <= tol);
  CHECK(max_diff(gk, k.grad()) <= tol);
  CHECK(max_diff(gv, v.grad()) <= tol);
  q.zero_grad();
  k.zero_grad();
  v.zero_grad();
}

/// The unfused path: d2l's three steps, by name.
template <class Q, class K, class V, class... L>
auto unfused(Q const& q, K const& k, V const& v, L const&... lens);

/// The float fused path (@p attention, eval mode) gives the unfused path's
/// output and, recorded, its gradients of q, k and v (within 1e-5); q, k
/// and v are left unrecorded.
template <class A, class Q, class K, class V, class G, class... L>
void check_fused_float(A& attention, Q& q, K& k, V& v, G const& g, L const&... lens) {
  {
    dt::autograd::no_grad const no_grad;
    CHECK(max_diff(attention(q, k, v, lens...), unfused(q, k, v, lens...)) <= 1e-5);
  }
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  check_same_gradients(q, k, v, attention(q, k, v, lens...), unfused(q, k, v, lens...), g, 1e-5);
  q.requires_grad_(false);
  k.requires_grad_(false);
  v.requires_grad_(false);
}

/// The unfused path: d2l's three steps, by name.
template <class Q, class K, class V, class... L>
auto unfused(Q const& q, K const& k, V const& v, L const&... lens) {
  using T = typename Q::value_type;
  index_t const d = q.template extent<Feat>();
  auto const scores = dt::contract<Feat>(q, k) / static_cast<T>(std::sqrt(static_cast<double>(d)));
  return dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(scores, lens...), v);
}

using plan_3d =
    dt::detail::attention_plan<Queries, KVPairs, Feat, dt::tensor<float, Batch, Queries, Feat>::specs,
                                         dt::tensor<float, Batch, KVPairs, Feat>::specs,
                                         dt::tensor<float, Batch, KVPairs, ValueFeat>::specs>;
using plan_heads = dt::detail::attention_plan<Queries, KVPairs, HeadFeat,
                                                        dt::tensor<float, Batch, Queries, Heads, HeadFeat>::specs,
                                                        dt::tensor<float, Batch, KVPairs, Heads, HeadFeat>::specs,
                                                        dt::tensor<float, Batch, KVPairs, Heads, HeadFeat>::specs>;
using plan_keys_feature_first =
    dt::detail::attention_plan<Queries, KVPairs, Feat, dt::tensor<float, Batch, Queries, Feat>::specs,
                                         dt::tensor<float, Batch, Feat, KVPairs>::specs,
                                         dt::tensor<float, Batch, KVPairs, ValueFeat>::specs>;
using plan_shared_keys =
    dt::detail::attention_plan<Queries, KVPairs, Feat, dt::tensor<float, Batch, Queries, Feat>::specs,
                                         dt::tensor<float, KVPairs, Feat>::specs,
                                         dt::tensor<float, KVPairs, ValueFeat>::specs>;
using plan_two_value_dims =
    dt::detail::attention_plan<Queries, KVPairs, Feat, dt::tensor<float, Batch, Queries, Feat>::specs,
                                         dt::tensor<float, Batch, KVPairs, Feat>::specs,
                                         dt::tensor<float, Batch, KVPairs, Heads, ValueFeat>::specs>;

TEST_CASE("fused attention: the operands it takes", "[nn][attention][fused]") {
  static_assert(plan_3d::ok);
  static_assert(plan_heads::ok);                // the named multi-head form, Heads a batch dim
  static_assert(!plan_keys_feature_first::ok);  // the keys' features not last
  static_assert(!plan_shared_keys::ok);         // keys broadcast over the batch
  static_assert(!plan_two_value_dims::ok);      // values with a dim the queries lack
}

TEST_CASE("fused attention: rows per block", "[nn][attention][fused]") {
  using dt::backends::cpu::attention_block_rows;
  CHECK(attention_block_rows(70, true) == 256);
  CHECK(attention_block_rows(1024, true) == 256);  // 2^18 scores
  CHECK(attention_block_rows(2048, true) == 128);
  CHECK(attention_block_rows(3000, true) == 64);  // 87 rows fit: whole steps of 32
  CHECK(attention_block_rows(8192, true) == 32);
  CHECK(attention_block_rows(1 << 20, true) == 32);  // never fewer than 32
  CHECK(attention_block_rows(0, true) == 256);
  CHECK(attention_block_rows(70, false) == 64);  // rows of different lengths
}

TEMPLATE_TEST_CASE("fused attention: its matrix products, small ones as loops", "[nn][attention][fused]", float,
                   double) {
  using T = TestType;
  namespace cpu = dt::backends::cpu;
  // m x n x k: at most attention_small_product (loops), and past it (the BLAS where there is one).
  auto const [m, n, k] =
      GENERATE(std::tuple<index_t, index_t, index_t>{4, 6, 20}, std::tuple<index_t, index_t, index_t>{3, 5, 1},
               std::tuple<index_t, index_t, index_t>{16, 16, 16}, std::tuple<index_t, index_t, index_t>{37, 29, 23});
  bool const ta = GENERATE(false, true);
  bool const tb = GENERATE(false, true);
  T const beta = GENERATE(T(0), T(1));
  CAPTURE(m, n, k, ta, tb, beta, m * n * k <= cpu::attention_detail::attention_small_product);
  std::mt19937 gen(static_cast<std::uint32_t>(m * 131 + n * 17 + k));
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  // Leading dims past the rows' lengths.
  index_t const lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 1;
  std::vector<T> a(static_cast<std::size_t>((ta ? k : m) * lda)), b(static_cast<std::size_t>((tb ? n : k) * ldb)),
      c(static_cast<std::size_t>(m * ldc));
  for (auto* x : {&a, &b, &c}) {
    for (auto& e : *x) e = static_cast<T>(dist(gen));
  }
  std::vector<T> const c0 = c;
  cpu::attention_detail::attention_gemm<T>(ta, tb, m, n, k, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  double worst = 0.0;
  for (index_t i = 0; i < m; ++i) {
    for (index_t j = 0; j < n; ++j) {
      double want = static_cast<double>(beta) * static_cast<double>(c0[static_cast<std::size_t>(i * ldc + j)]);
      for (index_t p = 0; p < k; ++p) {
        want += static_cast<double>(a[static_cast<std::size_t>(ta ? p * lda + i : i * lda + p)]) *
                static_cast<double>(b[static_cast<std::size_t>(tb ? j * ldb + p : p * ldb + j)]);
      }
      worst = std::max(worst, std::abs(want - static_cast<double>(c[static_cast<std::size_t>(i * ldc + j)])));
    }
    // Past the row's n columns, C is left alone.
    CHECK(c[static_cast<std::size_t>(i * ldc + n)] == c0[static_cast<std::size_t>(i * ldc + n)]);
  }
  CHECK(worst <= (std::is_same_v<T, float> ? 1e-5 : 1e-12));
}

TEMPLATE_TEST_CASE("fused attention: the unfused path's output and gradients", "[nn][attention][fused]", float,
                   double) {
  using T = TestType;
  double const tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  // 600 queries: three blocks of the kernel where an entry's rows share one
  // length (256 rows a block), ten under 2-D lengths (64); the last one partial.
  static_assert(dt::backends::cpu::attention_block_max == 256 && dt::backends::cpu::attention_block == 64);
  auto const seed = GENERATE(1u, 2u);
  dt::generator gen(seed);
  index_t const b = 3, nq = 600, nk = 70, d = 12, dv = 5;
  auto q = dt::randn<T>(gen, Batch(b), Queries(nq), Feat(d));
  auto k = dt::randn<T>(gen, Batch(b), KVPairs(nk), Feat(d));
  auto v = dt::randn<T>(gen, Batch(b), KVPairs(nk), ValueFeat(dv));
  auto const g = dt::randn<T>(gen, Batch(b), Queries(nq), ValueFeat(dv));
  dt::lengths<KVPairs, Batch> const lens_1d{0, 33, 70};  // a batch entry whose rows all have length 0
  auto const lens_2d = dt::randint<std::int64_t>(gen, 0, nk + 1, Batch(b), Queries(nq));
  auto const lens_32 = dt::randint<std::int32_t>(gen, 1, nk + 1, Batch(b));

  dt::nn::dot_product_attention<Queries, KVPairs, Feat, T> attention(0.3);
  attention.eval();  // dropout off: the fused path

  auto check = [&](auto const&... lens) {
    q.requires_grad_(false);
    k.requires_grad_(false);
    v.requires_grad_(false);
    {
      dt::autograd::no_grad const no_grad;
      CHECK(max_diff(attention(q, k, v, lens...), unfused(q, k, v, lens...)) <= tol);
    }
    q.requires_grad_();
    k.requires_grad_();
    v.requires_grad_();
    check_same_gradients(q, k, v, attention(q, k, v, lens...), unfused(q, k, v, lens...), g, tol);
  };
  SECTION("1-D lengths with rows of length 0") { check(lens_1d); }
  SECTION("2-D lengths") { check(lens_2d); }
  SECTION("int32 lengths") { check(lens_32); }
  SECTION("no lengths") { check(); }
  SECTION("std::nullopt") { check(std::nullopt); }
  SECTION("std::optional, set") { check(std::optional(lens_2d)); }
  SECTION("lengths given as an expression") { check(lens_2d + std::int64_t{0}); }
}

TEST_CASE("fused attention: finite differences (double)", "[nn][attention][fused]") {
  dt::generator gen(7);
  index_t const b = 2, nq = 3, nk = 4, d = 3, dv = 2;
  auto q = dt::randn<double>(gen, Batch(b), Queries(nq), Feat(d)).requires_grad_();
  auto k = dt::randn<double>(gen, Batch(b), KVPairs(nk), Feat(d)).requires_grad_();
  auto v = dt::randn<double>(gen, Batch(b), KVPairs(nk), ValueFeat(dv)).requires_grad_();
  auto const g = dt::randn<double>(gen, Batch(b), Queries(nq), ValueFeat(dv));
  dt::lengths<KVPairs, Batch, Queries> const lens{{2, 4, 0}, {1, 3, 4}};
  dt::nn::dot_product_attention<Queries, KVPairs, Feat, double> attention;
  attention.eval();
  auto loss = [&] {
    dt::autograd::no_grad const no_grad;
    return dt::sum(attention(q, k, v, lens) * g).item();
  };
  dt::sum(attention(q, k, v, lens) * g).backward();
  double const h = 1e-6;
  auto probe = [&](auto& x) {
    auto const analytic = x.grad().contiguous();
    for (index_t i = 0; i < x.size(); ++i) {
      double* p = x.data() + i;  // dense leaves: element i
      double const keep = *p;
      *p = keep + h;
      double const up = loss();
      *p = keep - h;
      double const down = loss();
      *p = keep;
      CHECK(analytic.data()[i] == Approx((up - down) / (2 * h)).margin(1e-7));
    }
  };
  probe(q);
  probe(k);
  probe(v);
}

TEST_CASE("fused attention: the named multi-head layout, read in place", "[nn][attention][fused]") {
  dt::generator gen(3);
  index_t const b = 2, nq = 70, nk = 9, heads = 3, hd = 4;
  // [Batch, Queries, Heads, HeadFeat] views of one [Batch, Queries, Hidden] buffer, as split makes them.
  auto q = dt::randn<float>(gen, Batch(b), Queries(nq), Heads(heads), HeadFeat(hd)).requires_grad_();
  auto k = dt::randn<float>(gen, Batch(b), KVPairs(nk), Heads(heads), HeadFeat(hd)).requires_grad_();
  auto v = dt::randn<float>(gen, Batch(b), KVPairs(nk), Heads(heads), HeadFeat(hd)).requires_grad_();
  auto const g = dt::randn<float>(gen, Batch(b), Queries(nq), Heads(heads), HeadFeat(hd));
  dt::lengths<KVPairs, Batch> const lens{3, 9};
  dt::nn::dot_product_attention<Queries, KVPairs, HeadFeat> attention;
  attention.eval();
  auto const out = attention(q, k, v, lens);
  auto const scores = dt::contract<HeadFeat>(q, k) / 2.0f;
  auto const reference = dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(scores, lens), v);
  CHECK(max_diff(out, reference) <= 1e-5);
  check_same_gradients(q, k, v, out, reference, g, 1e-5);
}

TEST_CASE("fused attention: operands whose features are strided", "[nn][attention][fused]") {
  dt::generator gen(5);
  // values' features not contiguous: a transposed tensor made contiguous the other way round.
  auto const v_t = dt::randn<float>(gen, Batch(2), ValueFeat(3), KVPairs(6));
  auto const v = dt::transpose<ValueFeat, KVPairs>(v_t);  // [Batch, KVPairs, ValueFeat], feature stride 6
  REQUIRE(v.strides()[2] != 1);
  auto const q = dt::randn<float>(gen, Batch(2), Queries(4), Feat(5));
  auto const k = dt::randn<float>(gen, Batch(2), KVPairs(6), Feat(5));
  dt::lengths<KVPairs, Batch> const lens{2, 6};
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  attention.eval();
  CHECK(max_diff(attention(q, k, v, lens), unfused(q, k, v, lens)) <= 1e-6);
}

TEST_CASE("fused attention: the register tiles (float, values of whole vectors)", "[nn][attention][fused]") {
  using dt::backends::cpu::attention_detail::attention_tiles_fit;
  CHECK(attention_tiles_fit<float>(16) == (DIMTENSOR_HAS_SIMD == 1));
  CHECK(attention_tiles_fit<float>(80) == (DIMTENSOR_HAS_SIMD == 1));
  CHECK_FALSE(attention_tiles_fit<float>(5));    // BLAS
  CHECK_FALSE(attention_tiles_fit<double>(64));  // BLAS
  CHECK(dt::backends::cpu::attention_detail::attention_backward_tiles_fit<float>(32, 16) == (DIMTENSOR_HAS_SIMD == 1));
  CHECK_FALSE(dt::backends::cpu::attention_detail::attention_backward_tiles_fit<float>(7, 16));  // dQ, dK: BLAS
  // 600 keys: two runs of the value rows (512 at a time), ten groups of
  // packed keys, the last partial; 100 queries: strips of 6 rows and one of
  // 4; features 7 (forward on the tiles, backward on BLAS) or 32 (both on
  // the tiles); values 16 (one vector) or 80 (a group of 4 vectors and one of 1).
  auto const d = GENERATE(index_t{7}, index_t{32});
  auto const dv = GENERATE(index_t{16}, index_t{80});
  dt::generator gen(static_cast<std::uint64_t>(d * dv));
  index_t const b = 3, nq = 100, nk = 600;
  auto q = dt::randn<float>(gen, Batch(b), Queries(nq), Feat(d));
  auto k = dt::randn<float>(gen, Batch(b), KVPairs(nk), Feat(d));
  auto v = dt::randn<float>(gen, Batch(b), KVPairs(nk), ValueFeat(dv));
  auto const g = dt::randn<float>(gen, Batch(b), Queries(nq), ValueFeat(dv));
  dt::lengths<KVPairs, Batch> const lens_1d{0, 517, 600};
  auto const lens_2d = dt::randint<std::int64_t>(gen, 0, nk + 1, Batch(b), Queries(nq));
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  attention.eval();
  auto check = [&](auto const&... lens) { check_fused_float(attention, q, k, v, g, lens...); };
  SECTION("1-D lengths with rows of length 0") { check(lens_1d); }
  SECTION("2-D lengths") { check(lens_2d); }
  SECTION("2-D lengths, half the rows empty (whole strips of a block with nothing to compute)") {
    auto const half = dt::randint<std::int64_t>(gen, 0, 2, Batch(b), Queries(nq));
    check(dt::eval(half * lens_2d));
  }
  SECTION("no lengths") { check(); }
}

TEST_CASE("fused attention: long rows go over the keys in chunks, online (float)", "[nn][attention][fused]") {
  using dt::backends::cpu::attention_detail::attention_chunked;
  using dt::backends::cpu::attention_detail::attention_key_chunk;
  CHECK_FALSE(attention_chunked<float>(2 * attention_key_chunk, 16));
  CHECK(attention_chunked<float>(2 * attention_key_chunk + 1, 16) == (DIMTENSOR_HAS_SIMD == 1));
  CHECK_FALSE(attention_chunked<double>(4 * attention_key_chunk, 16));
  // 1,300 keys: two whole chunks and a partial one; rows whose lengths end
  // in each chunk, rows of length 0, and a row's maximum rising in a later
  // chunk (large keys at the end); 300 queries: two blocks with uniform
  // lengths, five with 2-D ones.
  dt::generator gen(31);
  index_t const b = 2, nq = 300, nk = 2 * attention_key_chunk + 276, d = 16, dv = 32;
  auto q = dt::randn<float>(gen, Batch(b), Queries(nq), Feat(d));
  auto k = dt::eval(dt::randn<float>(gen, Batch(b), KVPairs(nk), Feat(d)) *
                    dt::unsqueeze<Feat, 1>(1.0f + dt::arange<float>(KVPairs(nk)) / static_cast<float>(nk / 2)));
  auto v = dt::randn<float>(gen, Batch(b), KVPairs(nk), ValueFeat(dv));
  auto const g = dt::randn<float>(gen, Batch(b), Queries(nq), ValueFeat(dv));
  dt::lengths<KVPairs, Batch> const lens_1d{700, nk};
  auto const lens_2d = dt::randint<std::int64_t>(gen, 0, nk + 1, Batch(b), Queries(nq));
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  attention.eval();
  auto check = [&](auto const&... lens) { check_fused_float(attention, q, k, v, g, lens...); };
  SECTION("1-D lengths") { check(lens_1d); }
  SECTION("2-D lengths with rows of length 0") {
    auto const half = dt::randint<std::int64_t>(gen, 0, 2, Batch(b), Queries(nq));
    check(dt::eval(half * lens_2d));
  }
  SECTION("no lengths") { check(); }
}

TEST_CASE("fused attention: the register tiles read the named multi-head layout in place", "[nn][attention][fused]") {
  dt::generator gen(4);
  index_t const b = 2, nq = 40, nk = 90, heads = 3, hd = 16;
  auto q = dt::randn<float>(gen, Batch(b), Queries(nq), Heads(heads), HeadFeat(hd)).requires_grad_();
  auto k = dt::randn<float>(gen, Batch(b), KVPairs(nk), Heads(heads), HeadFeat(hd)).requires_grad_();
  auto v = dt::randn<float>(gen, Batch(b), KVPairs(nk), Heads(heads), HeadFeat(hd)).requires_grad_();
  dt::lengths<KVPairs, Batch> const lens{37, 90};
  dt::nn::dot_product_attention<Queries, KVPairs, HeadFeat> attention;
  attention.eval();
  auto const g = dt::randn<float>(gen, Batch(b), Queries(nq), Heads(heads), HeadFeat(hd));
  auto const out = attention(q, k, v, lens);
  auto const reference =
      dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(dt::contract<HeadFeat>(q, k) / 4.0f, lens), v);
  CHECK(max_diff(out, reference) <= 1e-5);
  // the backward pass on the tiles too (features 16 both sides), into the same strided layout
  check_same_gradients(q, k, v, out, reference, g, 1e-5);
}

TEST_CASE("fused attention: no keys", "[nn][attention][fused]") {
  auto const q = dt::ones<float>(Batch(2), Queries(3), Feat(4));
  auto const k = dt::ones<float>(Batch(2), KVPairs(0), Feat(4));
  auto const v = dt::ones<float>(Batch(2), KVPairs(0), ValueFeat(5));
  dt::lengths<KVPairs, Batch> const lens{0, 0};
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  attention.eval();
  auto const out = attention(q, k, v, lens);
  CHECK(max_diff(out, unfused(q, k, v, lens)) == 0);
  CHECK(dt::max(dt::abs(out)).item() == 0);
}

TEST_CASE("fused attention: the kept weights are the unfused path's, computed when asked for",
          "[nn][attention][fused]") {
  dt::generator gen(9);
  auto q = dt::randn<float>(gen, Batch(2), Queries(5), Feat(4));
  auto const k = dt::randn<float>(gen, Batch(2), KVPairs(6), Feat(4));
  auto const v = dt::randn<float>(gen, Batch(2), KVPairs(6), ValueFeat(3));
  dt::lengths<KVPairs, Batch> const lens{0, 4};
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> attention;
  attention.eval();
  (void)attention(q, k, v, lens);
  auto const weights = attention.attention_weights<Batch, Queries, KVPairs>();
  auto const expected = dt::masked_softmax<KVPairs>(dt::contract<Feat>(q, k) / 2.0f, lens);
  CHECK(max_diff(weights, expected) == 0);
  CHECK(weights.requires_grad() == false);
  // A later call replaces them; the handle taken before keeps the old ones.
  auto const q2 = q * 2.0f;
  (void)attention(q2, k, v, lens);
  CHECK(max_diff(weights, expected) == 0);
  auto const expected2 = dt::masked_softmax<KVPairs>(dt::contract<Feat>(q2, k) / 2.0f, lens);
  CHECK(max_diff(attention.attention_weights<Batch, Queries, KVPairs>(), expected2) == 0);
  // Asked for twice: the same tensor.
  CHECK(attention.attention_weights<Batch, Queries, KVPairs>().data() ==
        attention.attention_weights<Batch, Queries, KVPairs>().data());
  // Another thread's call keeps its own.
  std::thread([&] {
    (void)attention(q, k, v, lens);
    CHECK(max_diff(attention.attention_weights<Batch, Queries, KVPairs>(), expected) == 0);
  }).join();
  CHECK(max_diff(attention.attention_weights<Batch, Queries, KVPairs>(), expected2) == 0);
}

TEST_CASE("fused attention: dropout on keeps the unfused path, dropout off in training takes the fused one",
          "[nn][attention][fused]") {
  dt::generator gen(11);
  auto const q = dt::randn<float>(gen, Batch(2), Queries(3), Feat(4));
  auto const k = dt::randn<float>(gen, Batch(2), KVPairs(5), Feat(4));
  auto const v = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(3));
  dt::lengths<KVPairs, Batch> const lens{2, 5};
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> no_dropout(0.0);  // training mode, p = 0
  CHECK(max_diff(no_dropout(q, k, v, lens), unfused(q, k, v, lens)) <= 1e-6);
  dt::nn::dot_product_attention<Queries, KVPairs, Feat> with_dropout(0.5, 3);  // training mode: dropout drawn
  auto const out = with_dropout(q, k, v, lens);
  // Dropout zeroes or doubles each weight: the output differs from the plain one.
  CHECK(max_diff(out, unfused(q, k, v, lens)) > 1e-3);
}

}  // namespace fused_attention_test

namespace fused_attention_test {

DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(Hidden);

using additive_plan_3d =
    dt::detail::additive_plan<Queries, KVPairs, Hidden, dt::tensor<float, Batch, Queries, Hidden>::specs,
                                        dt::tensor<float, Batch, KVPairs, Hidden>::specs>;
using additive_plan_time_first =
    dt::detail::additive_plan<Queries, KVPairs, Hidden, dt::tensor<float, Queries, Batch, Hidden>::specs,
                                        dt::tensor<float, KVPairs, Batch, Hidden>::specs>;
static_assert(additive_plan_3d::ok);
static_assert(!additive_plan_time_first::ok);  // the unfused path takes these

/// Additive attention's unfused path, written out: the features, w_v, masked_softmax, the weighted sum.
template <class M, class Q, class K, class V, class... L>
auto additive_unfused(M& attention, Q const& q, K const& k, V const& v, L const&... lens) {
  auto const features =
      dt::tanh(dt::unsqueeze<KVPairs, 2>(attention.W_q(q)) + dt::unsqueeze<Queries, 1>(attention.W_k(k)));
  auto const scores = dt::squeeze<dt::nn::Score>(attention.w_v(features));
  return dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(scores, lens...), v);
}

TEMPLATE_TEST_CASE("fused additive scores: the unfused path's output and gradients", "[nn][attention][fused]", float,
                   double) {
  using T = TestType;
  double const tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  dt::generator gen(13);
  index_t const b = 3, nq = 21, nk = 37, qf = 6, kf = 5, dv = 4;
  auto q = dt::randn<T>(gen, Batch(b), Queries(nq), QueryFeat(qf));
  auto k = dt::randn<T>(gen, Batch(b), KVPairs(nk), KeyFeat(kf));
  auto v = dt::randn<T>(gen, Batch(b), KVPairs(nk), ValueFeat(dv));
  auto const g = dt::randn<T>(gen, Batch(b), Queries(nq), ValueFeat(dv));
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, T> attention(KeyFeat(kf), QueryFeat(qf),
                                                                                        Hidden(9), 0.0, gen);
  dt::lengths<KVPairs, Batch> const lens_1d{0, 17, 37};
  auto const lens_2d = dt::randint<std::int64_t>(gen, 0, nk + 1, Batch(b), Queries(nq));
  auto check = [&](auto const&... lens) {
    q.requires_grad_();
    k.requires_grad_();
    v.requires_grad_();
    auto const out = attention(q, k, v, lens...);
    auto const reference = additive_unfused(attention, q, k, v, lens...);
    CHECK(max_diff(out, reference) <= tol);
    // The kept weights are the masked softmax of the fused scores.
    CHECK(max_diff(attention.template attention_weights<Batch, Queries, KVPairs>(),
                   dt::masked_softmax<KVPairs>(
                       dt::squeeze<dt::nn::Score>(attention.w_v(dt::tanh(dt::unsqueeze<KVPairs, 2>(attention.W_q(q)) +
                                                                         dt::unsqueeze<Queries, 1>(attention.W_k(k))))),
                       lens...)) <= tol);
    auto grads = [&] {
      return std::tuple(q.grad().clone(), k.grad().clone(), v.grad().clone(), attention.W_q.weight.grad().clone(),
                        attention.W_k.weight.grad().clone(), attention.w_v.weight.grad().clone());
    };
    auto zero = [&] {
      q.zero_grad();
      k.zero_grad();
      v.zero_grad();
      attention.for_each_parameter([](auto const&, auto& p) { p.zero_grad(); });
    };
    zero();
    dt::sum(out * g).backward();
    auto const fused = grads();
    zero();
    dt::sum(reference * g).backward();
    auto const unfused = grads();
    zero();
    CHECK(max_diff(std::get<0>(fused), std::get<0>(unfused)) <= tol);
    CHECK(max_diff(std::get<1>(fused), std::get<1>(unfused)) <= tol);
    CHECK(max_diff(std::get<2>(fused), std::get<2>(unfused)) <= tol);
    CHECK(max_diff(std::get<3>(fused), std::get<3>(unfused)) <= tol);
    CHECK(max_diff(std::get<4>(fused), std::get<4>(unfused)) <= tol);
    // w_v's gradient sums over every (query, key, hidden): relative to its size.
    CHECK(max_diff(std::get<5>(fused), std::get<5>(unfused)) <=
          tol * std::max(1.0, static_cast<double>(dt::max(dt::abs(std::get<5>(unfused))).item())));
  };
  SECTION("1-D lengths with rows of length 0") { check(lens_1d); }
  SECTION("2-D lengths") { check(lens_2d); }
  SECTION("no lengths") { check(); }
  SECTION("projected queries past the exponential form's bound (those (i, h) take tanh itself)") {
    q = dt::eval(q * T(40));
    check(lens_2d);
  }
  SECTION("projected keys past the bound") {
    k = dt::eval(k * T(40));
    check(lens_1d);
  }
}

TEST_CASE("fused additive scores: tanh from exponentials, within 2.1e-7; tanh itself past the bound",
          "[nn][attention][fused]") {
  // One hidden feature of weight 1: each score is tanh(q_i + k_j) itself.
  namespace cpu = dt::backends::cpu;
  index_t const nq = 64, nk = 512;
  std::vector<float> q(nq), k(nk), scores(static_cast<std::size_t>(nq * nk));
  std::vector<index_t> const q_off{0}, k_off{0};
  float const w = 1.0f;
  auto run = [&] {
    cpu::additive_problem<float> p;
    p.batch = 1;
    p.queries = nq;
    p.kv = nk;
    p.hidden = 1;
    p.q = {q.data(), q_off.data(), 1};
    p.k = {k.data(), k_off.data(), 1};
    p.w = &w;
    cpu::additive_scores_forward<float>(p, scores.data());
  };
  std::mt19937 rng(5);
  for (float scale : {0.01f, 1.0f, 8.0f, 20.0f}) {
    std::uniform_real_distribution<float> u(-scale, scale);
    for (auto& x : q) x = u(rng);
    for (auto& x : k) x = u(rng);
    run();
    double worst = 0;
    for (index_t i = 0; i < nq; ++i) {
      for (index_t j = 0; j < nk; ++j) {
        double const exact =
            std::tanh(static_cast<double>(q[static_cast<std::size_t>(i)] + k[static_cast<std::size_t>(j)]));
        worst = std::max(worst, std::abs(scores[static_cast<std::size_t>(i * nk + j)] - exact));
      }
    }
    INFO("|q|, |k| <= " << scale);
    CHECK(worst <= 2.1e-7);
  }
  // Queries past the bound (20): those rows take math::tanh itself, exactly.
  std::uniform_real_distribution<float> big(20.5f, 40.0f), small(-1.0f, 1.0f);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = i % 2 == 0 ? -big(rng) : small(rng);
  for (std::size_t j = 0; j < k.size(); ++j) k[j] = j % 3 == 0 ? big(rng) - 20.0f : small(rng);
  run();
  for (index_t i = 0; i < nq; i += 2) {
    for (index_t j = 0; j < nk; ++j) {
      REQUIRE(scores[static_cast<std::size_t>(i * nk + j)] ==
              dt::math::tanh(q[static_cast<std::size_t>(i)] + k[static_cast<std::size_t>(j)]));
    }
  }
}

TEST_CASE("fused additive scores: finite differences (double)", "[nn][attention][fused]") {
  dt::generator gen(17);
  auto q = dt::randn<double>(gen, Batch(2), Queries(3), QueryFeat(2)).requires_grad_();
  auto k = dt::randn<double>(gen, Batch(2), KVPairs(4), KeyFeat(3)).requires_grad_();
  auto const v = dt::randn<double>(gen, Batch(2), KVPairs(4), ValueFeat(2));
  auto const g = dt::randn<double>(gen, Batch(2), Queries(3), ValueFeat(2));
  dt::lengths<KVPairs, Batch, Queries> const lens{{2, 4, 0}, {1, 3, 4}};
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden, double> attention(KeyFeat(3), QueryFeat(2),
                                                                                             Hidden(5), 0.0, gen);
  auto loss = [&] {
    dt::autograd::no_grad const no_grad;
    return dt::sum(attention(q, k, v, lens) * g).item();
  };
  dt::sum(attention(q, k, v, lens) * g).backward();
  double const h = 1e-6;
  auto probe = [&](auto& x, auto const& analytic_grad) {
    auto const analytic = analytic_grad.contiguous();
    for (index_t i = 0; i < x.size(); ++i) {
      double* p = x.data() + i;
      double const keep = *p;
      *p = keep + h;
      double const up = loss();
      *p = keep - h;
      double const down = loss();
      *p = keep;
      CHECK(analytic.data()[i] == Approx((up - down) / (2 * h)).margin(1e-7));
    }
  };
  probe(q, q.grad());
  probe(k, k.grad());
  probe(attention.w_v.weight, attention.w_v.weight.grad());
}

}  // namespace fused_attention_test
