// Typed valid lengths (tensor/lengths.hpp): lengths<Measured, Dims...> is a
// tensor that also knows the dim it measures; the calls that mask take it
// as they take an integer tensor, with the same numbers, and keep the
// measured dim where d2l's code carries lengths on (repeat_interleave over
// heads, valid_lengths from a mask, the data pipeline). The rejections are
// compile-fail tests (tests/compile_fail/lengths_*.cpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <type_traits>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/loss.hpp>
#include <dimtensor/nn/transformer.hpp>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace lengths_test {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(BatchHeads);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Steps);
DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(FFN);
}  // namespace lengths_test

using namespace lengths_test;

TEST_CASE("lengths: a tensor of int64 that names the dim it measures", "[ops][lengths]") {
  dt::lengths<KVPairs, Batch> const lens{2, 6};
  STATIC_REQUIRE(std::is_same_v<decltype(lens)::measures, KVPairs>);
  STATIC_REQUIRE(std::is_same_v<decltype(lens)::value_type, std::int64_t>);
  STATIC_REQUIRE(dt::is_tensor_v<dt::lengths<KVPairs, Batch>>);
  STATIC_REQUIRE(dt::is_lengths_v<dt::lengths<KVPairs, Batch>>);
  STATIC_REQUIRE_FALSE(dt::is_lengths_v<dt::tensor<std::int64_t, Batch>>);
  STATIC_REQUIRE(std::is_same_v<dt::measured_dim_t<std::optional<dt::lengths<KVPairs, Batch>>>, KVPairs>);
  STATIC_REQUIRE(std::is_void_v<dt::measured_dim_t<dt::tensor<int, Batch>>>);
  CHECK(lens.extent<Batch>() == 2);
  CHECK(lens(Batch(1)) == 6);
  CHECK(lens.values().storage() == lens.storage());
  // Operations take them as tensors and give plain tensors.
  auto const more = lens + std::int64_t{1};
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(dt::eval(more))>, dt::tensor<std::int64_t, Batch>>);
  CHECK(dt::eval(more)(Batch(0)) == 3);
}

TEST_CASE("lengths_of: an integer tensor tagged with the dim it measures, sharing storage", "[ops][lengths]") {
  dt::tensor<int, Batch, Queries> const per_query{{1, 2}, {3, 4}};
  auto const lens = dt::lengths_of<KVPairs>(per_query);
  STATIC_REQUIRE(std::is_same_v<decltype(lens), dt::basic_lengths<KVPairs, dt::cpu, int, Batch, Queries> const>);
  CHECK(lens.storage() == per_query.storage());
  CHECK(lens(Batch(1), Queries(0)) == 3);
  // Re-tagging lengths is explicit too.
  auto const as_steps = dt::lengths_of<Steps>(lens);
  STATIC_REQUIRE(std::is_same_v<decltype(as_steps)::measures, Steps>);
}

TEST_CASE("valid_lengths: the counterpart of sequence_mask counts the true elements", "[ops][lengths]") {
  // d2l's valid_len = (array != vocab['<pad>']).type(torch.int32).sum(1)
  dt::tensor<std::int64_t, Batch, Steps> const tokens{{5, 4, 3, 1}, {6, 1, 1, 1}, {1, 1, 1, 1}};
  auto const lens = dt::valid_lengths<Steps>(dt::ne(tokens, std::int64_t{1}));
  STATIC_REQUIRE(std::is_same_v<decltype(lens), dt::lengths<Steps, Batch> const>);
  CHECK(lens(Batch(0)) == 3);
  CHECK(lens(Batch(1)) == 1);
  CHECK(lens(Batch(2)) == 0);
  // sequence_mask with them gives the mask back.
  auto const mask = dt::sequence_mask<Steps>(dt::ones<int>(Batch(3), Steps(4)), lens);
  for (dt::index_t b = 0; b < 3; ++b)
    for (dt::index_t s = 0; s < 4; ++s) CHECK(mask(Batch(b), Steps(s)) == (tokens(Batch(b), Steps(s)) != 1 ? 1 : 0));
}

TEST_CASE("masked_softmax and sequence_mask: typed lengths give the numbers of untyped ones", "[ops][lengths]") {
  auto const scores = dt::randn<float>(Batch(2), Queries(3), KVPairs(5));
  dt::tensor<std::int64_t, Batch> const plain{2, 4};
  dt::lengths<KVPairs, Batch> const typed{2, 4};
  CHECK(dt::equal(dt::masked_softmax<KVPairs>(scores, typed), dt::masked_softmax<KVPairs>(scores, plain)));
  CHECK(
      dt::equal(dt::masked_softmax<KVPairs>(scores, std::optional(typed)), dt::masked_softmax<KVPairs>(scores, plain)));
  CHECK(dt::equal(dt::sequence_mask<KVPairs>(scores, typed, -1.0f), dt::sequence_mask<KVPairs>(scores, plain, -1.0f)));
  // The run-time checks stay: a length beyond the extent is a value_error.
  dt::lengths<KVPairs, Batch> const too_long{2, 6};
  CHECK_THROWS_AS(dt::masked_softmax<KVPairs>(scores, too_long), dt::value_error);
}

TEST_CASE("repeat_interleave over heads keeps the measured dim", "[ops][lengths]") {
  dt::lengths<KVPairs, Batch> const lens{2, 6};
  auto const r = dt::repeat_interleave<Batch, BatchHeads>(lens, 3);
  STATIC_REQUIRE(std::is_same_v<decltype(r), dt::lengths<KVPairs, BatchHeads> const>);
  std::int64_t const want[] = {2, 2, 2, 6, 6, 6};
  for (int i = 0; i < 6; ++i) CHECK(r(BatchHeads(i)) == want[i]);
}

TEST_CASE("attention modules and the loss take typed lengths of the dim they mask", "[ops][lengths][nn]") {
  dt::generator gen(3);
  auto const q = dt::randn<double>(gen, Batch(2), Queries(3), Feat(4));
  auto const k = dt::randn<double>(gen, Batch(2), KVPairs(5), Feat(4));
  auto const v = dt::randn<double>(gen, Batch(2), KVPairs(5), Feat(4));
  dt::tensor<std::int64_t, Batch> const plain{2, 4};
  dt::lengths<KVPairs, Batch> const typed{2, 4};

  nn::dot_product_attention<Queries, KVPairs, Feat, double> dot;
  CHECK(dt::equal(dot(q, k, v, typed), dot(q, k, v, plain)));
  nn::additive_attention<Queries, KVPairs, Feat, Feat, Hidden, double> add(Feat(4), Feat(4), Hidden(6), 0.0, gen);
  CHECK(dt::equal(add(q, k, v, typed), add(q, k, v, plain)));
  nn::multi_head_attention<Queries, KVPairs, Hidden, Feat, Feat, Feat, double> mha(Feat(4), Feat(4), Feat(4), Hidden(4),
                                                                                   2, 0.0, false, gen);
  CHECK(dt::equal(mha(q, k, v, typed), mha(q, k, v, plain)));
  CHECK(dt::equal(mha.forward_d2l(q, k, v, typed), mha.forward_d2l(q, k, v, plain)));

  // d2l's MaskedSoftmaxCELoss with the targets' lengths along their steps.
  auto const pred = dt::randn<double>(gen, Batch(2), Steps(4), Vocab(5));
  dt::tensor<std::int64_t, Batch, Steps> const label{{1, 2, 3, 4}, {0, 1, 2, 3}};
  dt::lengths<Steps, Batch> const label_lens{3, 1};
  CHECK(dt::equal(nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, label_lens),
                  nn::masked_softmax_ce_loss<Steps, Vocab>(pred, label, label_lens.values())));
}

TEST_CASE("transformer encoder: lengths of its steps reach the self-attention's keys", "[ops][lengths][nn]") {
  dt::generator gen(5);
  nn::transformer_encoder<Batch, Steps, Vocab, Hidden, FFN, double> encoder(Vocab(7), Hidden(4), FFN(6), 2, 1, 0.0,
                                                                            false, gen);
  encoder.eval();
  dt::tensor<std::int64_t, Batch, Steps> const X{{1, 2, 3, 4}, {5, 6, 0, 0}};  // 0 pads
  dt::tensor<std::int64_t, Batch> const plain{4, 2};
  auto const typed = dt::valid_lengths<Steps>(dt::ne(X, std::int64_t{0}));
  REQUIRE(dt::equal(typed.values(), plain));
  auto const masked = encoder(X, typed);
  CHECK(dt::equal(masked, encoder(X, plain)));
  CHECK(dt::equal(encoder(X, std::optional(typed)), encoder(X, plain)));
  // The lengths mask: without them the second sequence's padding is attended to.
  CHECK_FALSE(dt::equal(masked, encoder(X, std::nullopt)));
}
