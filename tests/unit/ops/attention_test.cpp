// Tests of ops/attention.hpp: scaled_dot_product_attention as an operation,
// against d2l's formula written out with operations (contract,
// masked_softmax, contract, and autograd through them): on the CPU (its
// fused kernels) and on Thrust's host system (the generic kernels of
// backends/generic/attention.hpp), with 1-D, 2-D, optional and no lengths;
// the same numbers on both backends; operands the kernels do not take
// (computed by the formula); bad lengths (masked_softmax's message); the
// masking as one value, and its lengths read in place or laid out in the
// kernels' row order (heads a dim of their own).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <dimtensor/dimtensor.hpp>
#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
#include <dimtensor/backends/thrust.hpp>
#endif

namespace ops_attention_test {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Heads);

namespace dt = dimtensor;
using dt::index_t;

template <class A, class B>
double max_diff(A const& a, B const& b) {
  auto const x = dt::to<dt::cpu>(dt::eval(a));
  auto const y = dt::to<dt::cpu>(dt::eval(b));
  return static_cast<double>(dt::max(dt::abs(x - y)).item());
}

/// d2l's formula, by operations.
template <class Q, class K, class V, class... L>
auto formula(Q const& q, K const& k, V const& v, L const&... lens) {
  using T = typename Q::value_type;
  index_t const d = q.template extent<Feat>();
  auto const scores = dt::contract<Feat>(q, k) / static_cast<T>(std::sqrt(static_cast<double>(d)));
  return dt::contract<KVPairs>(dt::masked_softmax<KVPairs>(scores, lens...), v);
}

/// The operation gives the formula's output and the same gradients of q,
/// k and v (of sum(out * g)), within @p tol.
template <class Q, class K, class V, class G, class... L>
void check_against_formula(Q q, K k, V v, G const& g, double tol, L const&... lens) {
  {
    dt::autograd::no_grad const no_grad;
    CHECK(max_diff(dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, lens...),
                   formula(q, k, v, lens...)) <= tol);
  }
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  dt::sum(dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, lens...) * g).backward();
  auto const gq = q.grad().clone(), gk = k.grad().clone(), gv = v.grad().clone();
  q.zero_grad();
  k.zero_grad();
  v.zero_grad();
  dt::sum(formula(q, k, v, lens...) * g).backward();
  CHECK(max_diff(gq, q.grad()) <= tol);
  CHECK(max_diff(gk, k.grad()) <= tol);
  CHECK(max_diff(gv, v.grad()) <= tol);
}

template <class B, class T>
void check_backend(double tol) {
  dt::generator gen(11);
  index_t const b = 2, nq = 7, nk = 9, d = 16, dv = 16;
  auto const q = dt::to<B>(dt::randn<T>(gen, Batch(b), Queries(nq), Feat(d)));
  auto const k = dt::to<B>(dt::randn<T>(gen, Batch(b), KVPairs(nk), Feat(d)));
  auto const v = dt::to<B>(dt::randn<T>(gen, Batch(b), KVPairs(nk), ValueFeat(dv)));
  auto const g = dt::to<B>(dt::randn<T>(gen, Batch(b), Queries(nq), ValueFeat(dv)));
  auto const lens_1d = dt::to<B>(dt::lengths<KVPairs, Batch>{0, 5});  // an entry whose rows all have length 0
  auto const lens_2d = dt::to<B>(dt::randint<std::int64_t>(gen, 0, nk + 1, Batch(b), Queries(nq)));
  SECTION("1-D lengths, rows of length 0") { check_against_formula(q, k, v, g, tol, lens_1d); }
  SECTION("2-D lengths") { check_against_formula(q, k, v, g, tol, lens_2d); }
  SECTION("no lengths") { check_against_formula(q, k, v, g, tol); }
  SECTION("std::nullopt") { check_against_formula(q, k, v, g, tol, std::nullopt); }
  SECTION("std::optional, set") { check_against_formula(q, k, v, g, tol, std::optional(lens_2d)); }
}

TEST_CASE("scaled_dot_product_attention: the CPU's kernels against the formula", "[ops][attention]") {
  SECTION("float") { check_backend<dt::cpu, float>(1e-5); }
  SECTION("double") { check_backend<dt::cpu, double>(1e-12); }
}

#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
TEST_CASE("scaled_dot_product_attention: Thrust's generic kernels against the formula", "[ops][attention]") {
  SECTION("float") { check_backend<dt::thrust_cpp, float>(1e-5); }
  SECTION("double") { check_backend<dt::thrust_cpp, double>(1e-12); }
}

TEST_CASE("scaled_dot_product_attention: the CPU and Thrust give the same numbers", "[ops][attention]") {
  dt::generator gen(5);
  auto const q = dt::randn<double>(gen, Batch(3), Queries(4), Feat(8));
  auto const k = dt::randn<double>(gen, Batch(3), KVPairs(6), Feat(8));
  auto const v = dt::randn<double>(gen, Batch(3), KVPairs(6), ValueFeat(3));
  dt::lengths<KVPairs, Batch> const lens{2, 6, 0};
  auto const on_cpu = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, lens);
  auto const on_thrust = dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(
      dt::to<dt::thrust_cpp>(q), dt::to<dt::thrust_cpp>(k), dt::to<dt::thrust_cpp>(v), dt::to<dt::thrust_cpp>(lens));
  CHECK(max_diff(on_cpu, on_thrust) <= 1e-12);
}
#endif

/// Named heads ([Batch, Queries, Heads, Feat]): the kernels take the rows
/// by entry (Batch, Heads), then Queries, while the lengths lead the
/// scores' dims (Batch, Queries, Heads).
template <class B>
void check_named_heads(double tol) {
  dt::generator gen(21);
  index_t const b = 2, nq = 5, h = 3, nk = 7, d = 16, dv = 16;
  auto const q = dt::to<B>(dt::randn<double>(gen, Batch(b), Queries(nq), Heads(h), Feat(d)));
  auto const k = dt::to<B>(dt::randn<double>(gen, Batch(b), KVPairs(nk), Heads(h), Feat(d)));
  auto const v = dt::to<B>(dt::randn<double>(gen, Batch(b), KVPairs(nk), Heads(h), ValueFeat(dv)));
  auto const g = dt::to<B>(dt::randn<double>(gen, Batch(b), Queries(nq), Heads(h), ValueFeat(dv)));
  auto const lens_1d = dt::to<B>(dt::lengths<KVPairs, Batch>{3, 0});
  auto const lens_2d = dt::to<B>(dt::randint<std::int64_t>(gen, 0, nk + 1, Batch(b), Queries(nq)));
  auto const lens_3d = dt::to<B>(dt::randint<std::int32_t>(gen, 0, nk + 1, Batch(b), Queries(nq), Heads(h)));
  SECTION("1-D lengths: read in place") { check_against_formula(q, k, v, g, tol, lens_1d); }
  SECTION("2-D lengths: laid out by entry") { check_against_formula(q, k, v, g, tol, lens_2d); }
  SECTION("3-D int32 lengths: laid out by entry") { check_against_formula(q, k, v, g, tol, lens_3d); }
  SECTION("a masking value") { check_against_formula(q, k, v, g, tol, dt::masking_of<KVPairs>(lens_2d)); }
  SECTION("a masking chosen at run time, empty") {
    check_against_formula(q, k, v, g, tol, dt::masking_of<KVPairs>(std::optional<decltype(lens_2d)>{}));
  }
}

TEST_CASE("scaled_dot_product_attention: named heads, lengths in place or laid out", "[ops][attention]") {
  SECTION("cpu") { check_named_heads<dt::cpu>(1e-12); }
#if defined(DIMTENSOR_HAS_THRUST) && DIMTENSOR_HAS_THRUST
  SECTION("thrust_cpp") { check_named_heads<dt::thrust_cpp>(1e-12); }
#endif
}

TEST_CASE("attention_row_lengths: one form, in place where the lengths lead the kernels' rows", "[ops][attention]") {
  using scores = dt::dims<Batch, Queries, Heads, KVPairs>;
  using by_entry = boost::mp11::mp_list<Batch, Heads>;  // the kernels' batch order
  std::array<index_t, 4> const ext{2, 3, 4, 5};
  dt::lengths<KVPairs, Batch> const lens_1d{2, 5};
  auto const in_place = dt::detail::attention_row_lengths<by_entry, Queries, scores>(ext, dt::masking_of<KVPairs>(lens_1d));
  CHECK(in_place.rows.data == lens_1d.data());
  CHECK(in_place.rows.repeat == 12);  // a length per Batch: Queries x Heads rows
  CHECK(in_place.rows(11, 5) == 2);
  CHECK(in_place.rows(12, 5) == 5);
  // [Batch, Queries]: laid out in the kernels' order, (b, h, i) -> lens[b, i].
  dt::tensor<std::int64_t, Batch, Queries> const lens_2d{{0, 1, 2}, {3, 4, 5}};
  auto const laid = dt::detail::attention_row_lengths<by_entry, Queries, scores>(ext, dt::masking_of<KVPairs>(lens_2d));
  CHECK(laid.rows.data != lens_2d.data());
  REQUIRE(laid.rows.repeat == 1);
  for (index_t bb = 0; bb < 2; ++bb)
    for (index_t hh = 0; hh < 4; ++hh)
      for (index_t i = 0; i < 3; ++i) CHECK(laid.rows((bb * 4 + hh) * 3 + i, 5) == 3 * bb + i);
  // No lengths: every key.
  auto const none = dt::detail::attention_row_lengths<by_entry, Queries, scores>(ext, dt::masking_of<KVPairs>());
  CHECK(none.rows.data == nullptr);
  CHECK(none.rows(7, 5) == 5);
  // Out of range: masked_softmax's message, from the extents (no scores tensor).
  dt::lengths<KVPairs, Batch> const bad{2, 6};
  CHECK_THROWS_WITH((dt::detail::attention_row_lengths<by_entry, Queries, scores>(ext, dt::masking_of<KVPairs>(bad))),
                    Catch::Matchers::Contains("valid length 6 at valid_lens[Batch=1] is out of range"));
}

TEST_CASE("scaled_dot_product_attention: operands the kernels do not take", "[ops][attention]") {
  dt::generator gen(3);
  // Keys with their features first: the formula, by operations, with the same result.
  auto const q = dt::randn<float>(gen, Batch(2), Queries(3), Feat(4));
  auto const k_first = dt::randn<float>(gen, Batch(2), Feat(4), KVPairs(5));
  auto const v = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  auto const g = dt::randn<float>(gen, Batch(2), Queries(3), ValueFeat(2));
  static_assert(!dt::detail::attention_plan<Queries, KVPairs, Feat, decltype(q)::specs, decltype(k_first)::specs,
                                            decltype(v)::specs>::ok);
  dt::lengths<KVPairs, Batch> const lens{1, 5};
  check_against_formula(q, k_first, v, g, 1e-5, lens);
  // and the same numbers as the kernels' path on the keys made [Batch, KVPairs, Feat]
  auto const k = dt::permute<Batch, KVPairs, Feat>(k_first).contiguous();
  CHECK(max_diff(dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k_first, v, lens),
                 dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, lens)) <= 1e-5);
}

TEST_CASE("scaled_dot_product_attention: a length out of range is masked_softmax's error", "[ops][attention]") {
  dt::generator gen(1);
  auto const q = dt::randn<float>(gen, Batch(2), Queries(3), Feat(4));
  auto const k = dt::randn<float>(gen, Batch(2), KVPairs(5), Feat(4));
  auto const v = dt::randn<float>(gen, Batch(2), KVPairs(5), ValueFeat(2));
  dt::lengths<KVPairs, Batch> const lens{1, 6};
  auto call = [&] { return dt::scaled_dot_product_attention<Queries, KVPairs, Feat>(q, k, v, lens); };
  CHECK_THROWS_WITH(call(),
                    Catch::Matchers::Contains("masked_softmax: valid length 6 at valid_lens[Batch=1] is out of range "
                                              "for dimension KVPairs of extent 5"));
}

}  // namespace ops_attention_test
