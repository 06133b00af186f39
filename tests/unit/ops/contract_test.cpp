// contract<D>(a, b): the result's dims and order, values against naive
// loops for the attention shapes and for layouts that need the lowering's
// copies (batch dims in other orders, free dims split by batch dims), weights
// without batch dims, rank-0 results, extents 0, static extents and the
// run-time shape errors.

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/bmm.hpp>
#include <dimtensor/ops/contract.hpp>
#include <dimtensor/ops/permute.hpp>
#include <dimtensor/ops/transpose.hpp>

namespace contract_test {

namespace dt = dimtensor;
using dt::index_t;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Heads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);

template <class Tensor>
void fill_random(Tensor& t, unsigned seed) {
  std::mt19937 rng(seed);
  using T = typename Tensor::value_type;
  for (index_t i = 0; i < t.size(); ++i) {
    if constexpr (std::is_floating_point_v<T>) {
      t.data()[i] = static_cast<T>(std::uniform_real_distribution<double>(-1.0, 1.0)(rng));
    } else {
      t.data()[i] = static_cast<T>(std::uniform_int_distribution<int>(-9, 9)(rng));
    }
  }
}

template <class T>
void check_value(T got, long double want) {
  if constexpr (std::is_floating_point_v<T>) {
    REQUIRE(static_cast<double>(got) == Approx(static_cast<double>(want)).margin(1e-5));
  } else {
    REQUIRE(got == static_cast<T>(want));
  }
}

template <class T, class... S>
using tensor = dt::tensor<T, S...>;

}  // namespace contract_test

using namespace contract_test;

TEMPLATE_TEST_CASE("contract: queries · keys over Hidden gives [Batch, Queries, KVPairs]", "[contract]", float, double,
                   std::int64_t) {
  auto q = dt::empty<TestType>(Batch(2), Queries(3), Hidden(5));
  auto k = dt::empty<TestType>(Batch(2), KVPairs(7), Hidden(5));
  fill_random(q, 1);
  fill_random(k, 2);
  auto const s = dt::contract<Hidden>(q, k);
  STATIC_REQUIRE(std::is_same_v<decltype(s), tensor<TestType, Batch, Queries, KVPairs> const>);
  REQUIRE(s.extents() == std::array<index_t, 3>{2, 3, 7});
  REQUIRE(s.is_contiguous());
  for (index_t b = 0; b < 2; ++b) {
    for (index_t i = 0; i < 3; ++i) {
      for (index_t j = 0; j < 7; ++j) {
        long double want = 0;
        for (index_t h = 0; h < 5; ++h) {
          want += static_cast<long double>(q(Batch(b), Queries(i), Hidden(h))) * k(Batch(b), KVPairs(j), Hidden(h));
        }
        check_value(s(Batch(b), Queries(i), KVPairs(j)), want);
      }
    }
  }
  SECTION("the same as bmm with the keys transposed") {
    auto const r = dt::bmm(q, dt::transpose<KVPairs, Hidden>(k));
    for (index_t x = 0; x < s.size(); ++x) check_value(r.data()[x], s.data()[x]);
  }
}

TEST_CASE("contract: weights · values over KVPairs gives [Batch, Queries, ValueFeat]", "[contract]") {
  auto w = dt::empty<float>(Batch(2), Queries(1), KVPairs(10));
  auto v = dt::empty<float>(Batch(2), KVPairs(10), ValueFeat(4));
  for (index_t x = 0; x < w.size(); ++x) w.data()[x] = 0.1f;
  for (index_t x = 0; x < v.size(); ++x) v.data()[x] = static_cast<float>(x % 40);  // arange(40) per batch
  auto const r = dt::contract<KVPairs>(w, v);
  STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<float, Batch, Queries, ValueFeat> const>);
  // mean over the 10 rows of arange(40).reshape(10, 4): 18, 19, 20, 21
  for (index_t b = 0; b < 2; ++b) {
    for (index_t f = 0; f < 4; ++f) CHECK(r(Batch(b), Queries(0), ValueFeat(f)) == Approx(18.0f + f));
  }
}

TEMPLATE_TEST_CASE("contract: a weight without batch dims is applied to every batch element", "[contract]", float,
                   double, std::int32_t) {
  auto x = dt::empty<TestType>(Batch(3), Queries(4), In(5));
  auto w = dt::empty<TestType>(Out(6), In(5));
  fill_random(x, 3);
  fill_random(w, 4);
  auto const y = dt::contract<In>(x, w);
  STATIC_REQUIRE(std::is_same_v<decltype(y), tensor<TestType, Batch, Queries, Out> const>);
  REQUIRE(y.extents() == std::array<index_t, 3>{3, 4, 6});
  for (index_t b = 0; b < 3; ++b) {
    for (index_t q = 0; q < 4; ++q) {
      for (index_t o = 0; o < 6; ++o) {
        long double want = 0;
        for (index_t i = 0; i < 5; ++i) want += static_cast<long double>(x(Batch(b), Queries(q), In(i))) * w(Out(o), In(i));
        check_value(y(Batch(b), Queries(q), Out(o)), want);
      }
    }
  }
  SECTION("the weight first: its dims lead") {
    auto const yt = dt::contract<In>(w, x);
    STATIC_REQUIRE(std::is_same_v<decltype(yt), tensor<TestType, Out, Batch, Queries> const>);
    for (index_t b = 0; b < 3; ++b) {
      for (index_t q = 0; q < 4; ++q) {
        for (index_t o = 0; o < 6; ++o) {
          REQUIRE(yt(Out(o), Batch(b), Queries(q)) == y(Batch(b), Queries(q), Out(o)));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("contract: layouts the lowering must copy or permute", "[contract]", float, double) {
  SECTION("batch dims in another order in each operand; b's batch dims are not in a's order") {
    auto a = dt::empty<TestType>(Batch(2), Heads(3), Queries(4), Hidden(5));
    auto b = dt::empty<TestType>(Heads(3), Batch(2), Hidden(5), KVPairs(6));
    fill_random(a, 5);
    fill_random(b, 6);
    auto const r = dt::contract<Hidden>(a, b);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<TestType, Batch, Heads, Queries, KVPairs> const>);
    for (index_t x = 0; x < 2; ++x) {
      for (index_t h = 0; h < 3; ++h) {
        for (index_t q = 0; q < 4; ++q) {
          for (index_t k = 0; k < 6; ++k) {
            long double want = 0;
            for (index_t d = 0; d < 5; ++d) {
              want += static_cast<long double>(a(Batch(x), Heads(h), Queries(q), Hidden(d))) *
                      b(Heads(h), Batch(x), Hidden(d), KVPairs(k));
            }
            check_value(r(Batch(x), Heads(h), Queries(q), KVPairs(k)), want);
          }
        }
      }
    }
  }
  SECTION("a's free dims split by a batch dim (a copied, the result permuted)") {
    auto a = dt::empty<TestType>(Queries(4), Batch(2), Heads(3), Hidden(5));
    auto b = dt::empty<TestType>(Batch(2), KVPairs(6), Hidden(5));
    fill_random(a, 7);
    fill_random(b, 8);
    auto const r = dt::contract<Hidden>(a, b);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<TestType, Queries, Batch, Heads, KVPairs> const>);
    REQUIRE(r.is_contiguous());
    for (index_t q = 0; q < 4; ++q) {
      for (index_t x = 0; x < 2; ++x) {
        for (index_t h = 0; h < 3; ++h) {
          for (index_t k = 0; k < 6; ++k) {
            long double want = 0;
            for (index_t d = 0; d < 5; ++d) {
              want += static_cast<long double>(a(Queries(q), Batch(x), Heads(h), Hidden(d))) *
                      b(Batch(x), KVPairs(k), Hidden(d));
            }
            check_value(r(Queries(q), Batch(x), Heads(h), KVPairs(k)), want);
          }
        }
      }
    }
  }
  SECTION("a batch dim in the middle of the result, written in place") {
    auto a = dt::empty<TestType>(Queries(4), Batch(2), Hidden(5));
    auto b = dt::empty<TestType>(Batch(2), KVPairs(6), Hidden(5));
    fill_random(a, 9);
    fill_random(b, 10);
    auto const r = dt::contract<Hidden>(a, b);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<TestType, Queries, Batch, KVPairs> const>);
    for (index_t q = 0; q < 4; ++q) {
      for (index_t x = 0; x < 2; ++x) {
        for (index_t k = 0; k < 6; ++k) {
          long double want = 0;
          for (index_t d = 0; d < 5; ++d) {
            want += static_cast<long double>(a(Queries(q), Batch(x), Hidden(d))) * b(Batch(x), KVPairs(k), Hidden(d));
          }
          check_value(r(Queries(q), Batch(x), KVPairs(k)), want);
        }
      }
    }
  }
  SECTION("batch dims apart, [Batch, Steps, Heads, Feat] as multi-head attention keeps them: read and written in place") {
    auto a = dt::empty<TestType>(Batch(2), Queries(4), Heads(3), Hidden(5));
    auto b = dt::empty<TestType>(Batch(2), KVPairs(6), Heads(3), Hidden(5));
    fill_random(a, 13);
    fill_random(b, 14);
    auto const r = dt::contract<Hidden>(a, b);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<TestType, Batch, Queries, Heads, KVPairs> const>);
    // and its gradients, through the same products: of sum(r * g)
    auto ar = a.detach().requires_grad_();
    auto br = b.detach().requires_grad_();
    auto g = dt::empty<TestType>(Batch(2), Queries(4), Heads(3), KVPairs(6));
    fill_random(g, 15);
    dt::contract<Hidden>(ar, br).backward(g);
    for (index_t x = 0; x < 2; ++x) {
      for (index_t h = 0; h < 3; ++h) {
        for (index_t q = 0; q < 4; ++q) {
          for (index_t k = 0; k < 6; ++k) {
            long double want = 0;
            for (index_t d = 0; d < 5; ++d) {
              want += static_cast<long double>(a(Batch(x), Queries(q), Heads(h), Hidden(d))) *
                      b(Batch(x), KVPairs(k), Heads(h), Hidden(d));
            }
            check_value(r(Batch(x), Queries(q), Heads(h), KVPairs(k)), want);
          }
        }
        for (index_t q = 0; q < 4; ++q) {
          for (index_t d = 0; d < 5; ++d) {
            long double want = 0;  // d/da = Σ_k g b
            for (index_t k = 0; k < 6; ++k) {
              want += static_cast<long double>(g(Batch(x), Queries(q), Heads(h), KVPairs(k))) *
                      b(Batch(x), KVPairs(k), Heads(h), Hidden(d));
            }
            check_value(ar.grad()(Batch(x), Queries(q), Heads(h), Hidden(d)), want);
          }
        }
        for (index_t k = 0; k < 6; ++k) {
          for (index_t d = 0; d < 5; ++d) {
            long double want = 0;  // d/db = Σ_q g a
            for (index_t q = 0; q < 4; ++q) {
              want += static_cast<long double>(g(Batch(x), Queries(q), Heads(h), KVPairs(k))) *
                      a(Batch(x), Queries(q), Heads(h), Hidden(d));
            }
            check_value(br.grad()(Batch(x), KVPairs(k), Heads(h), Hidden(d)), want);
          }
        }
      }
    }
  }
  SECTION("views as operands: permuted and transposed") {
    auto store = dt::empty<TestType>(Hidden(5), Queries(4), Batch(2));
    fill_random(store, 11);
    auto const a = dt::permute<Batch, Queries, Hidden>(store);
    auto kstore = dt::empty<TestType>(Batch(2), Hidden(5), KVPairs(6));
    fill_random(kstore, 12);
    auto const k = dt::transpose<Hidden, KVPairs>(kstore);  // [Batch, KVPairs, Hidden]
    auto const r = dt::contract<Hidden>(a, k);
    for (index_t x = 0; x < 2; ++x) {
      for (index_t q = 0; q < 4; ++q) {
        for (index_t j = 0; j < 6; ++j) {
          long double want = 0;
          for (index_t d = 0; d < 5; ++d) {
            want += static_cast<long double>(a(Batch(x), Queries(q), Hidden(d))) * k(Batch(x), KVPairs(j), Hidden(d));
          }
          check_value(r(Batch(x), Queries(q), KVPairs(j)), want);
        }
      }
    }
  }
}

TEST_CASE("contract: dots and batched dots", "[contract]") {
  auto a = dt::empty<double>(Batch(3), Hidden(4));
  auto b = dt::empty<double>(Hidden(4), Batch(3));
  fill_random(a, 13);
  fill_random(b, 14);
  SECTION("a batched dot: [Batch]") {
    auto const r = dt::contract<Hidden>(a, b);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<double, Batch> const>);
    for (index_t x = 0; x < 3; ++x) {
      long double want = 0;
      for (index_t d = 0; d < 4; ++d) want += static_cast<long double>(a(Batch(x), Hidden(d))) * b(Hidden(d), Batch(x));
      check_value(r(Batch(x)), want);
    }
  }
  SECTION("contracting everything: rank 0") {
    auto u = dt::empty<double>(Hidden(7));
    auto v = dt::empty<double>(Hidden(7));
    fill_random(u, 15);
    fill_random(v, 16);
    auto const r = dt::contract<Hidden>(u, v);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<double> const>);
    long double want = 0;
    for (index_t d = 0; d < 7; ++d) want += static_cast<long double>(u(Hidden(d))) * v(Hidden(d));
    check_value(r.item(), want);
  }
  SECTION("an outer product over a dim of extent 1") {
    auto const col = dt::ones<float>(Queries(3), Hidden(1));
    auto const row = dt::full<float>(2.0f, Hidden(1), KVPairs(4));
    auto const r = dt::contract<Hidden>(col, row);
    STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<float, Queries, KVPairs> const>);
    for (index_t x = 0; x < r.size(); ++x) REQUIRE(r.data()[x] == 2.0f);
  }
}

TEST_CASE("contract evaluates lazy operands", "[contract]") {
  auto x = dt::empty<float>(Batch(2), In(3));
  auto w = dt::empty<float>(Out(4), In(3));
  fill_random(x, 17);
  fill_random(w, 18);
  auto const r = dt::contract<In>(dt::tanh(x) + 1.0f, w * 0.5f);
  auto const ref = dt::contract<In>(dt::eval(dt::tanh(x) + 1.0f), dt::eval(w * 0.5f));
  for (index_t i = 0; i < r.size(); ++i) REQUIRE(r.data()[i] == Approx(ref.data()[i]));
}

TEST_CASE("contract with an extent 0", "[contract]") {
  SECTION("nothing to sum over: zeros") {
    auto const r = dt::contract<Hidden>(dt::ones<float>(Batch(2), Hidden(0)), dt::ones<float>(Hidden(0), Out(3)));
    REQUIRE(r.extents() == std::array<index_t, 2>{2, 3});
    for (index_t i = 0; i < r.size(); ++i) REQUIRE(r.data()[i] == 0.0f);
  }
  SECTION("an empty batch") {
    auto const r = dt::contract<Hidden>(dt::ones<float>(Batch(0), Hidden(2)), dt::ones<float>(Hidden(2), Batch(0)));
    REQUIRE(r.size() == 0);
  }
}

TEST_CASE("contract keeps static extents", "[contract]") {
  auto const a = dt::ones<float>(Batch(2), Queries::fixed<3>{}, Hidden::fixed<4>{});
  auto const b = dt::ones<float>(Batch::fixed<2>{}, KVPairs(5), Hidden(4));
  auto const r = dt::contract<Hidden>(a, b);
  STATIC_REQUIRE(std::is_same_v<decltype(r), tensor<float, Batch::fixed<2>, Queries::fixed<3>, KVPairs> const>);
  CHECK(r(Batch(1), Queries(2), KVPairs(4)) == 4.0f);
}

TEST_CASE("contract rejects dynamic extents that disagree", "[contract]") {
  auto const q = dt::ones<float>(Batch(2), Queries(3), Hidden(4));
  SECTION("the contracted dim") {
    auto const k = dt::ones<float>(Batch(2), KVPairs(5), Hidden(8));
    REQUIRE_THROWS_AS(dt::contract<Hidden>(q, k), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::contract<Hidden>(q, k), Catch::Contains("contract") &&
                                                        Catch::Contains("dimension Hidden: 4") &&
                                                        Catch::Contains("vs 8"));
  }
  SECTION("a batch dim") {
    auto const k = dt::ones<float>(KVPairs(5), Hidden(4), Batch(3));
    REQUIRE_THROWS_AS(dt::contract<Hidden>(q, k), dt::shape_error);
    REQUIRE_THROWS_WITH(dt::contract<Hidden>(q, k), Catch::Contains("contract") &&
                                                        Catch::Contains("dimension Batch: 2") &&
                                                        Catch::Contains("vs 3"));
  }
}

TEST_CASE("contract passes ill_formed on silently", "[contract]") {
  auto const a = dt::ones<float>(Batch(2), Hidden(4));
  STATIC_REQUIRE(dt::is_ill_formed_v<decltype(dt::contract<Hidden>(dt::ill_formed{}, a))>);
  STATIC_REQUIRE(dt::is_ill_formed_v<decltype(dt::contract<Hidden>(a, dt::ill_formed{}))>);
}

TEST_CASE("contract and bmm name the diagnosis of each mistake", "[contract][bmm]") {
  // The diagnosis types, checked without instantiating them (each mistake
  // also has a compile-fail test under tests/compile_fail/).
  using f3 = tensor<float, Batch, Queries, Hidden>;
  using k3 = tensor<float, Batch, KVPairs, Hidden>;
  using b3 = tensor<bool, Batch, KVPairs, Hidden>;
  namespace diag = dt::diagnostic;
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::contract_diagnosis<Hidden, f3, k3>())::type, void>);
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::contract_diagnosis<Hidden, b3, b3>())::type,
                                diag::contraction_of_bool<dt::call::contract>>);
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::contract_diagnosis<Out, f3, k3>())::type,
                                diag::not_a_dimension_of<dt::call::contract, Out, dt::dims<Batch, Queries, Hidden>>>);
  STATIC_REQUIRE(
      std::is_same_v<typename decltype(dt::detail::contract_diagnosis<Hidden, f3, tensor<double, Hidden>>())::type,
                     diag::element_types_differ<dt::call::contract, float, double>>);
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::contract_diagnosis<Hidden, dt::ill_formed, k3>())::type,
                                dt::ill_formed>);
  // bmm(queries, keys): the fix named is transposing the keys.
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<f3, k3>())::type,
                                diag::bmm_inner_dims_disagree<diag::left_contracts<Hidden>, diag::right_offers<KVPairs>,
                                                              diag::fix_transpose_right<KVPairs, Hidden>>>);
  // The fix is computed from the operands: the left one transposed by
  // mistake, the operands swapped, or nothing that fits.
  using q_t = tensor<float, Batch, Hidden, Queries>;
  using k_t = tensor<float, Batch, Hidden, KVPairs>;
  using w3 = tensor<float, Batch, Queries, KVPairs>;
  using v3 = tensor<float, Batch, KVPairs, Out>;
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<q_t, k_t>())::type,
                                diag::bmm_inner_dims_disagree<diag::left_contracts<Queries>, diag::right_offers<Hidden>,
                                                              diag::fix_transpose_left<Hidden, Queries>>>);
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<v3, w3>())::type,
                                diag::bmm_inner_dims_disagree<diag::left_contracts<Out>, diag::right_offers<Queries>,
                                                              diag::fix_swap_operands>>);
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<f3, v3>())::type,
                                diag::bmm_inner_dims_disagree<diag::left_contracts<Hidden>, diag::right_offers<KVPairs>,
                                                              diag::no_fix_found>>);
  // A transpose whose result would hold a dim twice is no fix: in bmm(x, x)
  // for x [B, Q, H] every candidate keeps Q (or H) twice.
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<f3, f3>())::type,
                                diag::bmm_inner_dims_disagree<diag::left_contracts<Hidden>, diag::right_offers<Queries>,
                                                              diag::no_fix_found>>);
  STATIC_REQUIRE(std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<b3, b3>())::type,
                                diag::contraction_of_bool<dt::call::bmm>>);
  STATIC_REQUIRE(
      std::is_same_v<typename decltype(dt::detail::bmm_diagnosis<tensor<float, Batch, Queries, Hidden::fixed<2>>,
                                                                 tensor<float, Batch::fixed<3>, Hidden, Out>>())::type,
                     void>);
  STATIC_REQUIRE(std::is_same_v<
                 typename decltype(dt::detail::bmm_diagnosis<tensor<float, Batch::fixed<2>, Queries, Hidden>,
                                                             tensor<float, Batch::fixed<3>, Hidden, Out>>())::type,
                 diag::extent_mismatch<dt::call::bmm, Batch, diag::extents<2, 3>>>);
}
