// Gradients of the structural operations (views, copies, gathers), against
// central finite differences (tests/unit/support/gradcheck.hpp) and, where
// the sum is easy to write, against hand-computed or naive-loop references.
#include <catch2/catch.hpp>

#include <cstdint>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/concat.hpp>
#include <dimtensor/ops/index_select.hpp>
#include <dimtensor/ops/merge.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/rename.hpp>
#include <dimtensor/ops/repeat_interleave.hpp>
#include <dimtensor/ops/slice.hpp>
#include <dimtensor/ops/split.hpp>
#include <dimtensor/ops/squeeze.hpp>
#include <dimtensor/ops/transpose.hpp>
#include <dimtensor/ops/unsqueeze.hpp>

#include "unit/support/gradcheck.hpp"

namespace dt = dimtensor;
using test_support::check_gradients;
using test_support::uniform;

namespace structural_grad {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(HeadFeat);
DIMTENSOR_DIM(BatchSteps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Keys);
DIMTENSOR_DIM(Score);
DIMTENSOR_DIM(Copies);
}  // namespace structural_grad
using namespace structural_grad;

namespace {
using cube = dt::tensor<double, Batch, Steps, Feat>;
using static_cube = dt::tensor<double, Batch::fixed<2>, Steps, Feat::fixed<4>>;

// x's gradient after y.backward(r), on a fresh leaf.
template <class X, class F>
X gradient_of(X x, F const& f) {
  x.zero_grad();
  x.requires_grad_();
  auto y = dt::eval(f(x));
  decltype(y) r(y.extents());
  for (dt::index_t i = 0; i < r.size(); ++i) r.data()[i] = 1.0 + static_cast<double>(i);
  y.backward(r);
  return x.grad();
}
}  // namespace

TEST_CASE("permute hands the gradient back through the inverse permutation", "[autograd][structural]") {
  auto x = uniform<cube>({2, 3, 4}, 1);
  check_gradients([](auto const& a) { return dt::permute<Feat, Batch, Steps>(a); }, x);
  check_gradients([](auto const& a) { return dt::tanh(dt::permute<Steps, Feat, Batch>(a)); }, x);
  SECTION("a lazy operand") {
    check_gradients([](auto const& a) { return dt::permute<Feat, Steps, Batch>(dt::sin(a) * 2.0); }, x);
  }
  SECTION("static extents") {
    auto s = uniform<static_cube>({2, 3, 4}, 2);
    check_gradients([](auto const& a) { return dt::exp(dt::permute<Feat, Batch, Steps>(a)); }, s);
  }
  SECTION("the gradient's element at the permuted place") {
    cube const g = gradient_of(x, [](auto const& a) { return dt::permute<Feat, Batch, Steps>(a); });
    static_assert(std::is_same_v<std::remove_const_t<decltype(g)>, cube>);
    // y[f][b][s] = x[b][s][f] got the weight 1 + (f·2 + b)·3 + s.
    for (dt::index_t b = 0; b < 2; ++b) {
      for (dt::index_t s = 0; s < 3; ++s) {
        for (dt::index_t f = 0; f < 4; ++f) {
          CHECK(g(Batch(b), Steps(s), Feat(f)) == 1.0 + static_cast<double>((f * 2 + b) * 3 + s));
        }
      }
    }
  }
}

TEST_CASE("unsqueeze and squeeze hand the gradient back without the extent-1 dim", "[autograd][structural]") {
  auto x = uniform<cube>({2, 3, 4}, 3);
  check_gradients([](auto const& a) { return dt::unsqueeze<Heads, 0>(a); }, x);
  check_gradients([](auto const& a) { return dt::unsqueeze<Heads, 1>(a); }, x);
  check_gradients([](auto const& a) { return dt::tanh(dt::unsqueeze<Heads, 3>(a)); }, x);
  SECTION("a lazy operand") {
    check_gradients([](auto const& a) { return dt::unsqueeze<Heads, 2>(a * 2.0); }, x);
  }
  SECTION("static extents") {
    auto s = uniform<static_cube>({2, 3, 4}, 4);
    check_gradients([](auto const& a) { return dt::unsqueeze<Heads, 1>(dt::exp(a)); }, s);
  }
  SECTION("broadcast against another operand: the gradient sums over the broadcast dim") {
    auto w = uniform<dt::tensor<double, Batch, Heads, Steps, Feat>>({2, 5, 3, 4}, 5);
    check_gradients([](auto const& a, auto const& b) { return dt::unsqueeze<Heads, 1>(a) * b; }, x, w);
  }
  SECTION("squeeze of a static extent 1") {
    auto s = uniform<dt::tensor<double, Batch, Score::fixed<1>, Feat>>({2, 1, 4}, 6);
    check_gradients([](auto const& a) { return dt::squeeze<Score>(a); }, s);
    check_gradients([](auto const& a) { return dt::tanh(dt::squeeze<Score>(a * a)); }, s);
  }
  SECTION("squeeze of a dynamic extent 1") {
    auto s = uniform<dt::tensor<double, Batch, Feat, Score>>({2, 4, 1}, 7);
    check_gradients([](auto const& a) { return dt::squeeze<Score>(a); }, s);
    check_gradients([](auto const& a) { return dt::exp(dt::squeeze<Batch>(dt::slice<Batch>(a, 1, 2))); }, s);
  }
  SECTION("unsqueeze then squeeze is the identity") {
    check_gradients([](auto const& a) { return dt::squeeze<Heads>(dt::unsqueeze<Heads, 2>(a)); }, x);
  }
}

TEST_CASE("the additive-attention pattern: [B, Q, 1, F] + [B, 1, K, F]", "[autograd][structural]") {
  using qs = dt::tensor<double, Batch, Queries, Feat>;
  using ks = dt::tensor<double, Batch, Keys, Feat>;
  auto q = uniform<qs>({2, 3, 4}, 8);
  auto k = uniform<ks>({2, 5, 4}, 9);
  check_gradients(
      [](auto const& qq, auto const& kk) {
        return dt::tanh(dt::unsqueeze<Keys, 2>(qq) + dt::unsqueeze<Queries, 1>(kk));
      },
      q, k);
  SECTION("scored down to [B, Q, K] with a squeeze, as d2l's AdditiveAttention") {
    auto w = uniform<dt::tensor<double, Feat, Score::fixed<1>>>({4, 1}, 10);
    check_gradients(
        [](auto const& qq, auto const& kk, auto const& ww) {
          auto const features = dt::tanh(dt::unsqueeze<Keys, 2>(qq * 2.0) + dt::unsqueeze<Queries, 1>(kk));
          return dt::squeeze<Score>(dt::sum<Feat>(dt::unsqueeze<Score, 3>(features) * dt::transpose<Feat, Score>(ww)));
        },
        q, k, w);
  }
}

TEST_CASE("rename hands the gradient back under the old name", "[autograd][structural]") {
  auto x = uniform<cube>({2, 3, 4}, 11);
  check_gradients([](auto const& a) { return dt::rename<Steps, Queries>(a); }, x);
  check_gradients([](auto const& a) { return dt::rename<Feat, Feat>(dt::tanh(a)); }, x);
  SECTION("a lazy operand and static extents") {
    auto s = uniform<static_cube>({2, 3, 4}, 12);
    check_gradients([](auto const& a) { return dt::exp(dt::rename<Feat, Score>(a * 0.5)); }, s);
  }
}

TEST_CASE("merge and split hand the gradient back through the inverse reshape", "[autograd][structural]") {
  auto x = uniform<cube>({2, 3, 4}, 13);
  SECTION("merge of a row-major tensor (a view)") {
    check_gradients([](auto const& a) { return dt::merge<Batch, Steps, BatchSteps>(a); }, x);
    check_gradients([](auto const& a) { return dt::tanh(dt::merge<Steps, Feat, HeadFeat>(a)); }, x);
  }
  SECTION("merge of a non-contiguous view (a copy, recorded too)") {
    check_gradients([](auto const& a) { return dt::merge<Feat, Steps, HeadFeat>(dt::transpose<Steps, Feat>(a)); }, x);
    auto const y = dt::merge<Feat, Steps, HeadFeat>(dt::transpose<Steps, Feat>(x.detach().requires_grad_()));
    CHECK(y.requires_grad());
  }
  SECTION("merge of a lazy operand and of static extents") {
    check_gradients([](auto const& a) { return dt::merge<Batch, Steps, BatchSteps>(a * 3.0); }, x);
    auto s = uniform<dt::tensor<double, Batch::fixed<2>, Steps::fixed<3>, Feat>>({2, 3, 4}, 14);
    check_gradients([](auto const& a) { return dt::exp(dt::merge<Batch, Steps, BatchSteps>(a)); }, s);
  }
  SECTION("split with a dynamic and a static number of parts") {
    check_gradients([](auto const& a) { return dt::split<Feat, Heads, HeadFeat>(a, Heads(2)); }, x);
    check_gradients([](auto const& a) { return dt::tanh(dt::split<Steps, Heads, HeadFeat>(a, Heads::fixed<3>{})); },
                    x);
    auto s = uniform<static_cube>({2, 3, 4}, 15);
    check_gradients([](auto const& a) { return dt::exp(dt::split<Feat, Heads, HeadFeat>(a, Heads(4))); }, s);
    check_gradients([](auto const& a) { return dt::split<Feat, Heads, HeadFeat>(a * 2.0, Heads::fixed<2>{}); }, s);
  }
  SECTION("split of a non-contiguous view") {
    check_gradients(
        [](auto const& a) { return dt::sin(dt::split<Feat, Heads, HeadFeat>(dt::transpose<Batch, Feat>(a), Heads(2))); },
        x);
  }
  SECTION("d2l's transpose_qkv and transpose_output round trip") {
    check_gradients(
        [](auto const& a) {
          auto const heads = dt::permute<Batch, Heads, Steps, HeadFeat>(dt::split<Feat, Heads, HeadFeat>(a, Heads(2)));
          auto const merged = dt::merge<Batch, Heads, BatchSteps>(dt::tanh(heads));
          auto const back = dt::split<BatchSteps, Batch, Heads>(merged, Batch(2));
          return dt::merge<Heads, HeadFeat, Feat>(dt::permute<Batch, Steps, Heads, HeadFeat>(back));
        },
        x);
  }
}

TEST_CASE("slice hands the gradient into the sliced range of zeros", "[autograd][structural]") {
  auto x = uniform<cube>({2, 5, 4}, 16);
  check_gradients([](auto const& a) { return dt::slice<Steps>(a, 1, 4); }, x);
  check_gradients([](auto const& a) { return dt::tanh(dt::slice<Feat>(a, 3, 4)); }, x);
  SECTION("a lazy operand, a non-contiguous input and static extents") {
    check_gradients([](auto const& a) { return dt::slice<Batch>(a * 2.0, 1, 2); }, x);
    check_gradients([](auto const& a) { return dt::slice<Steps>(dt::transpose<Steps, Feat>(a), 2, 5); }, x);
    auto s = uniform<static_cube>({2, 3, 4}, 17);
    check_gradients([](auto const& a) { return dt::exp(dt::slice<Feat>(a, 1, 3)); }, s);
  }
  SECTION("overlapping slices of one tensor add up; an empty slice gives zeros") {
    cube const g = gradient_of(x, [](auto const& a) { return dt::slice<Steps>(a, 0, 3) + dt::slice<Steps>(a, 2, 5); });
    // The weight of y[b][s][f] is 1 + (b·3 + s)·4 + f; x[b][s'] got y[s'] (s' < 3) and y[s' - 2] (s' ≥ 2).
    for (dt::index_t b = 0; b < 2; ++b) {
      for (dt::index_t s = 0; s < 5; ++s) {
        for (dt::index_t f = 0; f < 4; ++f) {
          double want = 0.0;
          if (s < 3) want += 1.0 + static_cast<double>((b * 3 + s) * 4 + f);
          if (s >= 2) want += 1.0 + static_cast<double>((b * 3 + s - 2) * 4 + f);
          CHECK(g(Batch(b), Steps(s), Feat(f)) == want);
        }
      }
    }
    cube leaf = x.detach().clone();
    leaf.requires_grad_();
    auto const empty = dt::slice<Steps>(leaf, 2, 2);
    REQUIRE(empty.requires_grad());
    empty.backward(decltype(empty)(empty.extents()));
    cube const z = leaf.grad();
    REQUIRE(z.extents() == leaf.extents());
    for (dt::index_t i = 0; i < z.size(); ++i) CHECK(z.data()[i] == 0.0);
  }
}

TEST_CASE("concat splits the gradient among its operands", "[autograd][structural]") {
  auto a = uniform<cube>({2, 3, 4}, 18);
  auto b = uniform<cube>({2, 1, 4}, 19);
  auto c = uniform<cube>({2, 2, 4}, 20);
  check_gradients([](auto const& p, auto const& q) { return dt::concat<Steps>(p, q); }, a, b);
  check_gradients([](auto const& p, auto const& q, auto const& r) { return dt::tanh(dt::concat<Steps>(p, q, r)); }, a,
                  b, c);
  SECTION("along the first and the last dim") {
    auto d = uniform<cube>({1, 3, 4}, 21);
    check_gradients([](auto const& p, auto const& q) { return dt::concat<Batch>(p, q); }, a, d);
    auto e = uniform<cube>({2, 3, 2}, 22);
    check_gradients([](auto const& p, auto const& q) { return dt::concat<Feat>(q, p); }, a, e);
  }
  SECTION("lazy operands, static extents and an operand that needs no gradient") {
    cube const constant = uniform<cube>({2, 2, 4}, 23);
    check_gradients(
        [&](auto const& p, auto const& q) { return dt::concat<Steps>(p * 2.0, constant, dt::exp(q)); }, a, b);
    using fixed_steps = dt::tensor<double, Batch, Steps::fixed<2>, Feat::fixed<4>>;
    using any_steps = dt::tensor<double, Batch, Steps, Feat::fixed<4>>;
    auto s = uniform<fixed_steps>({2, 2, 4}, 24);
    auto t = uniform<any_steps>({2, 3, 4}, 25);
    check_gradients([](auto const& p, auto const& q) { return dt::concat<Steps>(p, q, p); }, s, t);
  }
  SECTION("the same tensor twice gets both halves") {
    cube const g = gradient_of(b, [](auto const& p) { return dt::concat<Steps>(p, p); });
    // y[b][s][f] has the weight 1 + (b·2 + s)·4 + f; b's element got s = 0 and s = 1.
    for (dt::index_t i = 0; i < 2; ++i) {
      for (dt::index_t f = 0; f < 4; ++f) {
        CHECK(g(Batch(i), Steps(0), Feat(f)) ==
              2.0 + static_cast<double>((i * 2) * 4 + f) + static_cast<double>((i * 2 + 1) * 4 + f));
      }
    }
  }
}

TEST_CASE("index_select accumulates into the selected indices", "[autograd][structural]") {
  using table = dt::tensor<double, Vocab, Feat>;
  auto w = uniform<table>({4, 3}, 26);
  dt::tensor<std::int64_t, Steps> const idx{0, 2, 2, 2, 1};
  SECTION("repeated indices add up") {
    table const g = gradient_of(w, [&](auto const& p) { return dt::index_select<Vocab>(p, idx); });
    // y[k][f] has the weight 1 + 3k + f.
    for (dt::index_t f = 0; f < 3; ++f) {
      CHECK(g(Vocab(0), Feat(f)) == 1.0 + static_cast<double>(f));
      CHECK(g(Vocab(1), Feat(f)) == 13.0 + static_cast<double>(f));
      CHECK(g(Vocab(2), Feat(f)) == (4.0 + 7.0 + 10.0) + 3.0 * static_cast<double>(f));
      CHECK(g(Vocab(3), Feat(f)) == 0.0);
    }
    check_gradients([&](auto const& p) { return dt::tanh(dt::index_select<Vocab>(p, idx)); }, w);
  }
  SECTION("a middle dim, indices of rank 2 and of int32, a lazy operand, static extents") {
    auto x = uniform<dt::tensor<double, Batch, Vocab, Feat::fixed<3>>>({2, 4, 3}, 27);
    dt::tensor<std::int32_t, Queries, Keys> const ix{{3, 0, 3}, {1, 1, 3}};
    check_gradients([&](auto const& p) { return dt::index_select<Vocab>(p, ix); }, x);
    check_gradients([&](auto const& p) { return dt::exp(dt::index_select<Vocab>(p * 2.0, ix)); }, x);
    dt::tensor<std::int64_t, Steps> const features{2, 0, 2, 2, 1};
    dt::tensor<std::int32_t, Queries, Keys> const batches{{1, 0, 1}, {1, 1, 1}};
    check_gradients([&](auto const& p) { return dt::index_select<Feat>(p, features); }, x);
    check_gradients([&](auto const& p) { return dt::index_select<Batch>(dt::transpose<Batch, Feat>(p), batches); }, x);
  }
  SECTION("large enough for threads: against a naive loop") {
    constexpr dt::index_t nb = 4, nv = 50, nf = 64, nk = 300;
    auto x = uniform<dt::tensor<double, Batch, Vocab, Feat>>({nb, nv, nf}, 28);
    dt::tensor<std::int64_t, Steps> many(dt::uninitialized, {nk});
    for (dt::index_t k = 0; k < nk; ++k) many.data()[k] = (k * 7) % 13 + (k % 3) * 17;
    auto const g = gradient_of(x, [&](auto const& p) { return dt::index_select<Vocab>(p, many); });
    for (dt::index_t b = 0; b < nb; ++b) {
      for (dt::index_t v = 0; v < nv; ++v) {
        for (dt::index_t f = 0; f < nf; ++f) {
          double want = 0.0;
          for (dt::index_t k = 0; k < nk; ++k) {
            if (many.data()[k] == v) want += 1.0 + static_cast<double>((b * nk + k) * nf + f);
          }
          if (g(Batch(b), Vocab(v), Feat(f)) != want) {
            FAIL("b " << b << " v " << v << " f " << f << ": " << g(Batch(b), Vocab(v), Feat(f)) << " != " << want);
          }
        }
      }
    }
  }
}

TEST_CASE("repeat_interleave sums the repeats back", "[autograd][structural]") {
  auto x = uniform<cube>({2, 3, 4}, 29);
  check_gradients([](auto const& a) { return dt::repeat_interleave<Steps>(a, 3); }, x);
  check_gradients([](auto const& a) { return dt::tanh(dt::repeat_interleave<Batch, Copies>(a, 2)); }, x);
  check_gradients([](auto const& a) { return dt::repeat_interleave<Feat>(a, 1); }, x);
  SECTION("a lazy operand, a non-contiguous input and static extents") {
    check_gradients([](auto const& a) { return dt::repeat_interleave<Feat>(a * 2.0, 2); }, x);
    check_gradients([](auto const& a) { return dt::repeat_interleave<Feat>(dt::transpose<Batch, Feat>(a), 3); }, x);
    auto s = uniform<static_cube>({2, 3, 4}, 30);
    check_gradients([](auto const& a) { return dt::exp(dt::repeat_interleave<Feat, Copies>(a, 2)); }, s);
  }
  SECTION("by hand; zero repeats give a zero gradient") {
    dt::tensor<double, Batch> v{1.0, 2.0};
    auto const g = gradient_of(v, [](auto const& p) { return dt::repeat_interleave<Batch>(p, 3); });
    CHECK(g(Batch(0)) == 1.0 + 2.0 + 3.0);
    CHECK(g(Batch(1)) == 4.0 + 5.0 + 6.0);
    auto const z = gradient_of(x, [](auto const& a) { return dt::repeat_interleave<Steps>(a, 0); });
    for (dt::index_t i = 0; i < z.size(); ++i) CHECK(z.data()[i] == 0.0);
  }
}

TEST_CASE("structural gradients: exact types, accumulation, no_grad", "[autograd][structural]") {
  auto x = uniform<static_cube>({2, 3, 4}, 31);
  x.requires_grad_();
  SECTION("the gradient has exactly the tensor's type") {
    auto const y = dt::merge<Steps, Batch, HeadFeat>(dt::transpose<Batch, Feat>(x));
    y.backward(decltype(y)(y.extents()));
    static_assert(std::is_same_v<decltype(x.grad()), static_cube>);
    CHECK(x.has_grad());
  }
  SECTION("gradients accumulate over two backward calls") {
    auto const y = dt::concat<Steps>(dt::slice<Steps>(x, 0, 2), dt::repeat_interleave<Steps>(x, 2));
    decltype(y) r(y.extents());
    for (dt::index_t i = 0; i < r.size(); ++i) r.data()[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
    y.backward(r);
    static_cube const once = x.grad().clone();
    y.backward(r);
    static_cube const twice = x.grad();
    for (dt::index_t i = 0; i < once.size(); ++i) CHECK(twice.data()[i] == Approx(2.0 * once.data()[i]));
  }
  SECTION("no_grad records nothing") {
    dt::autograd::no_grad const guard;
    dt::tensor<std::int64_t, Steps> const idx{1, 0};
    CHECK_FALSE(dt::permute<Feat, Steps, Batch>(x).requires_grad());
    CHECK_FALSE(dt::unsqueeze<Heads, 1>(x).requires_grad());
    CHECK_FALSE(dt::squeeze<Heads>(dt::unsqueeze<Heads, 1>(x)).requires_grad());
    CHECK_FALSE(dt::rename<Feat, Score>(x).requires_grad());
    CHECK_FALSE(dt::merge<Steps, Batch, HeadFeat>(dt::transpose<Batch, Feat>(x)).requires_grad());
    CHECK_FALSE(dt::split<Feat, Heads, HeadFeat>(x, Heads(2)).requires_grad());
    CHECK_FALSE(dt::slice<Steps>(x, 0, 1).requires_grad());
    CHECK_FALSE(dt::concat<Steps>(x, x).requires_grad());
    CHECK_FALSE(dt::index_select<Steps>(x, idx).requires_grad());
    CHECK_FALSE(dt::repeat_interleave<Steps>(x, 2).requires_grad());
  }
  SECTION("integer tensors pass through without recording") {
    dt::tensor<std::int64_t, Batch, Steps> const lens{{1, 2}, {3, 4}};
    auto const r = dt::repeat_interleave<Batch>(dt::permute<Steps, Batch>(lens), 2);
    CHECK_FALSE(r.requires_grad());
    CHECK(r(Steps(1), Batch(3)) == 4);
  }
}
