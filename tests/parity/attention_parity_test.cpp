// Parity of the attention modules with d2l's own PyTorch code
// (tests/parity/make_goldens.py, torch 1.13, eval mode): each case folder
// data/attention/<case>/ holds the inputs, d2l's outputs and attention
// weights, and the module's state_dict twice, as <key>.npy files and as
// weights.safetensors.  Every case loads the parameters both ways (two
// SECTIONs) and compares within 1e-5; run with -s to see the largest
// difference of each comparison.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/parameters.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace attention_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);
DIMTENSOR_DIM(Scalar);

using lens1_t = dt::tensor<std::int64_t, Batch>;
using lens2_t = dt::tensor<std::int64_t, Batch, Queries>;
using weights_t = dt::tensor<float, Batch, Queries, KVPairs>;

using parity_support::check_close;
using parity_support::load;
using parity_support::load_both_ways;

/// The golden folder data/attention/<name>.
std::filesystem::path case_dir(std::string const& name) { return parity_support::data_dir("attention", name); }

// ---------------------------------------------------------------------------
// Additive attention
// ---------------------------------------------------------------------------

using additive_t = nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden>;
using additive_q_t = dt::tensor<float, Batch, Queries, QueryFeat>;
using additive_k_t = dt::tensor<float, Batch, KVPairs, KeyFeat>;
using values_t = dt::tensor<float, Batch, KVPairs, ValueFeat>;
using output_t = dt::tensor<float, Batch, Queries, ValueFeat>;

TEST_CASE("additive attention matches d2l: the chapter's toy", "[parity][attention][additive]") {
  auto const dir = case_dir("additive_toy");
  additive_t attention(KeyFeat(2), QueryFeat(20), Hidden(8), 0.1);
  attention.eval();
  load_both_ways(attention, dir);
  auto const queries = load<additive_q_t>(dir, "queries");
  auto const keys = load<additive_k_t>(dir, "keys");
  auto const values = load<values_t>(dir, "values");
  auto const out = attention(queries, keys, values, load<lens1_t>(dir, "valid_lens_1d"));
  check_close("additive_toy output", out, load<output_t>(dir, "output_1d"));
  check_close("additive_toy attention_weights", attention.attention_weights<Batch, Queries, KVPairs>(),
              load<weights_t>(dir, "attention_weights_1d"));
  // The book's numbers: keys all equal, so the mean of the first 2 and 6 values.
  CHECK(out(Batch(0), Queries(0), ValueFeat(0)) == Approx(2.0).margin(1e-5));
  CHECK(out(Batch(1), Queries(0), ValueFeat(3)) == Approx(13.0).margin(1e-5));
}

TEST_CASE("additive attention matches d2l: random, query and key sizes differ", "[parity][attention][additive]") {
  auto const dir = case_dir("additive_random");
  additive_t attention(KeyFeat(6), QueryFeat(5), Hidden(9), 0.2);
  attention.eval();
  auto const queries = load<additive_q_t>(dir, "queries");
  auto const keys = load<additive_k_t>(dir, "keys");
  auto const values = load<values_t>(dir, "values");
  auto const lens1 = load<lens1_t>(dir, "valid_lens_1d");
  // With its own initial weights the module gives other numbers: the loaded weights matter.
  CHECK(dt::max_abs_diff(attention(queries, keys, values, lens1), load<output_t>(dir, "output_1d")) > 1e-2);

  load_both_ways(attention, dir);
  check_close("additive_random 1-D valid_lens output", attention(queries, keys, values, lens1),
              load<output_t>(dir, "output_1d"));
  check_close("additive_random 1-D valid_lens attention_weights",
              attention.attention_weights<Batch, Queries, KVPairs>(), load<weights_t>(dir, "attention_weights_1d"));
  check_close("additive_random 2-D valid_lens output",
              attention(queries, keys, values, load<lens2_t>(dir, "valid_lens_2d")), load<output_t>(dir, "output_2d"));
  check_close("additive_random 2-D valid_lens attention_weights",
              attention.attention_weights<Batch, Queries, KVPairs>(), load<weights_t>(dir, "attention_weights_2d"));
  check_close("additive_random no valid_lens output", attention(queries, keys, values),
              load<output_t>(dir, "output_none"));
  check_close("additive_random no valid_lens attention_weights",
              attention.attention_weights<Batch, Queries, KVPairs>(), load<weights_t>(dir, "attention_weights_none"));
  check_close("additive_random valid_lens=None output", attention(queries, keys, values, std::nullopt),
              load<output_t>(dir, "output_none"));
}

// ---------------------------------------------------------------------------
// Scaled dot-product attention
// ---------------------------------------------------------------------------

using dot_t = nn::dot_product_attention<Queries, KVPairs, Feat>;
using dot_q_t = dt::tensor<float, Batch, Queries, Feat>;
using dot_k_t = dt::tensor<float, Batch, KVPairs, Feat>;

TEST_CASE("dot-product attention matches d2l: the chapter's toy", "[parity][attention][dot_product]") {
  auto const dir = case_dir("dot_product_toy");
  dot_t attention(0.5);
  attention.eval();
  load_both_ways(attention, dir);  // no parameters: an empty folder and an empty state_dict load
  auto const out = attention(load<dot_q_t>(dir, "queries"), load<dot_k_t>(dir, "keys"), load<values_t>(dir, "values"),
                             load<lens1_t>(dir, "valid_lens_1d"));
  check_close("dot_product_toy output", out, load<output_t>(dir, "output_1d"));
  check_close("dot_product_toy attention_weights", attention.attention_weights<Batch, Queries, KVPairs>(),
              load<weights_t>(dir, "attention_weights_1d"));
  CHECK(out(Batch(0), Queries(0), ValueFeat(0)) == Approx(2.0).margin(1e-5));
  CHECK(out(Batch(1), Queries(0), ValueFeat(3)) == Approx(13.0).margin(1e-5));
}

TEST_CASE("dot-product attention matches d2l: random, lengths 0 to 7", "[parity][attention][dot_product]") {
  auto const dir = case_dir("dot_product_random");
  dot_t attention(0.5);
  attention.eval();
  auto const queries = load<dot_q_t>(dir, "queries");
  auto const keys = load<dot_k_t>(dir, "keys");
  auto const values = load<values_t>(dir, "values");
  check_close("dot_product_random 1-D valid_lens output",
              attention(queries, keys, values, load<lens1_t>(dir, "valid_lens_1d")), load<output_t>(dir, "output_1d"));
  check_close("dot_product_random 1-D valid_lens attention_weights",
              attention.attention_weights<Batch, Queries, KVPairs>(), load<weights_t>(dir, "attention_weights_1d"));
  check_close("dot_product_random 2-D valid_lens output",
              attention(queries, keys, values, load<lens2_t>(dir, "valid_lens_2d")), load<output_t>(dir, "output_2d"));
  check_close("dot_product_random 2-D valid_lens attention_weights",
              attention.attention_weights<Batch, Queries, KVPairs>(), load<weights_t>(dir, "attention_weights_2d"));
  check_close("dot_product_random no valid_lens output", attention(queries, keys, values),
              load<output_t>(dir, "output_none"));
  check_close("dot_product_random no valid_lens attention_weights",
              attention.attention_weights<Batch, Queries, KVPairs>(), load<weights_t>(dir, "attention_weights_none"));
  check_close("dot_product_random valid_lens=optional{} output",
              attention(queries, keys, values, std::optional<lens2_t>{}), load<output_t>(dir, "output_none"));
}

// ---------------------------------------------------------------------------
// Multi-head attention
// ---------------------------------------------------------------------------

using heads_weights_t = dt::tensor<float, Batch, Queries, nn::Heads, KVPairs>;
using merged_weights_t = dt::tensor<float, nn::BatchHeads, Queries, KVPairs>;
using mha_out_t = dt::tensor<float, Batch, Queries, Hidden>;

/// The named form's weights [Batch, Queries, Heads, KVPairs] in d2l's
/// layout [BatchHeads, Queries, KVPairs], entry b·heads + h.
template <class W>
auto as_d2l_weights(W const& named) {
  return dt::eval(dt::merge<Batch, nn::Heads, nn::BatchHeads>(dt::permute<Batch, nn::Heads, Queries, KVPairs>(named)));
}

/// Both forms of @p attention against d2l's output and weights for one
/// valid_lens choice (@p lens... empty for none), and against each other.
template <class Net, class Q, class K, class V, class... L>
void check_mha(std::string const& what, std::filesystem::path const& dir, std::string const& suffix, Net& attention,
               Q const& queries, K const& keys, V const& values, L const&... lens) {
  auto const want_out = load<mha_out_t>(dir, "output_" + suffix);
  auto const want_weights = load<merged_weights_t>(dir, "attention_weights_" + suffix);

  auto const named = dt::eval(attention(queries, keys, values, lens...));
  auto const named_weights = attention.attention.template attention_weights<Batch, Queries, nn::Heads, KVPairs>();
  check_close(what + " named output", named, want_out);
  check_close(what + " named attention_weights", as_d2l_weights(named_weights), want_weights);

  auto const d2l = dt::eval(attention.forward_d2l(queries, keys, values, lens...));
  auto const d2l_weights = attention.attention.template attention_weights<nn::BatchHeads, Queries, KVPairs>();
  check_close(what + " forward_d2l output", d2l, want_out);
  check_close(what + " forward_d2l attention_weights", d2l_weights, want_weights);

  check_close(what + " named vs forward_d2l output", named, d2l, 1e-6);
  check_close(what + " named vs forward_d2l attention_weights", as_d2l_weights(named_weights), d2l_weights, 1e-6);
}

template <class Net, class Q, class K, class V>
void check_mha_case(std::string const& name, Net& attention) {
  auto const dir = case_dir(name);
  attention.eval();
  auto const queries = load<Q>(dir, "queries");
  auto const keys = load<K>(dir, "keys");
  auto const values = load<V>(dir, "values");
  auto const lens1 = load<lens1_t>(dir, "valid_lens_1d");
  CHECK(dt::max_abs_diff(attention(queries, keys, values, lens1), load<mha_out_t>(dir, "output_1d")) > 1e-2);

  load_both_ways(attention, dir);
  check_mha(name + " 1-D valid_lens", dir, "1d", attention, queries, keys, values, lens1);
  check_mha(name + " 2-D valid_lens", dir, "2d", attention, queries, keys, values, load<lens2_t>(dir, "valid_lens_2d"));
  check_mha(name + " no valid_lens", dir, "none", attention, queries, keys, values);
  check_mha(name + " valid_lens=None", dir, "none", attention, queries, keys, values, std::nullopt);
}

TEST_CASE("multi-head attention matches d2l: 12 hiddens, 3 heads, no bias", "[parity][attention][multi_head]") {
  nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(12), Hidden(12), Hidden(12), Hidden(12),
                                                               nn::Heads(3), 0.5);
  CHECK(nn::parameter_names(attention) ==
        std::vector<std::string>{"W_q.weight", "W_k.weight", "W_v.weight", "W_o.weight"});
  using x_t = dt::tensor<float, Batch, Queries, Hidden>;
  using y_t = dt::tensor<float, Batch, KVPairs, Hidden>;
  check_mha_case<decltype(attention), x_t, y_t, y_t>("mha", attention);
}

TEST_CASE("multi-head attention matches d2l: with bias", "[parity][attention][multi_head]") {
  nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(12), Hidden(12), Hidden(12),
                                                               Hidden::fixed<12>{}, nn::Heads::fixed<3>{}, 0.5, true);
  CHECK(nn::parameter_count(attention) == 4 * (12 * 12 + 12));
  using x_t = dt::tensor<float, Batch, Queries, Hidden>;
  using y_t = dt::tensor<float, Batch, KVPairs, Hidden>;
  check_mha_case<decltype(attention), x_t, y_t, y_t>("mha_bias", attention);
}

TEST_CASE("multi-head attention matches d2l: query, key and value sizes 5, 7, 4", "[parity][attention][multi_head]") {
  nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat> attention(
      KeyFeat(7), QueryFeat(5), ValueFeat(4), Hidden(12), nn::Heads(3), 0.5);
  using q_t = dt::tensor<float, Batch, Queries, QueryFeat>;
  using k_t = dt::tensor<float, Batch, KVPairs, KeyFeat>;
  using v_t = dt::tensor<float, Batch, KVPairs, ValueFeat>;
  check_mha_case<decltype(attention), q_t, k_t, v_t>("mha_sizes", attention);
}

TEST_CASE("transpose_qkv and transpose_output match d2l's", "[parity][attention][multi_head]") {
  auto const dir = case_dir("mha");
  auto const queries = load<dt::tensor<float, Batch, Queries, Hidden>>(dir, "queries");
  auto const split = dt::eval(nn::transpose_qkv<Batch, Hidden>(queries, nn::Heads(3)));
  check_close("transpose_qkv", split,
              load<dt::tensor<float, nn::BatchHeads, Queries, nn::HeadFeat>>(dir, "transpose_qkv_queries"), 0.0);
  check_close("transpose_output", nn::transpose_output<Batch, Hidden>(split, 3),
              load<dt::tensor<float, Batch, Queries, Hidden>>(dir, "transpose_output_queries"), 0.0);
}

TEST_CASE("multi-head attention: the named form and d2l's agree on random inputs",
          "[parity][attention][multi_head]") {
  dt::generator gen(2024);
  nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat> attention(
      KeyFeat(6), QueryFeat(8), ValueFeat(7), Hidden(16), nn::Heads(4), 0.0, true, gen);
  attention.eval();
  auto const queries = dt::randn<float>(gen, Batch(3), Queries(5), QueryFeat(8));
  auto const keys = dt::randn<float>(gen, Batch(3), KVPairs(9), KeyFeat(6));
  auto const values = dt::randn<float>(gen, Batch(3), KVPairs(9), ValueFeat(7)) * 3.0f;
  auto const lens1 = dt::randint<std::int64_t>(gen, 0, 10, Batch(3));
  auto const lens2 = dt::randint<std::int64_t>(gen, 0, 10, Batch(3), Queries(5));

  auto const agree = [&](std::string const& what, auto const&... lens) {
    auto const named = dt::eval(attention(queries, keys, values, lens...));
    auto const named_weights =
        as_d2l_weights(attention.attention.attention_weights<Batch, Queries, nn::Heads, KVPairs>());
    auto const d2l = dt::eval(attention.forward_d2l(queries, keys, values, lens...));
    auto const& d2l_weights = attention.attention.attention_weights<nn::BatchHeads, Queries, KVPairs>();
    check_close(what + ": named vs forward_d2l output", named, d2l, 1e-6);
    check_close(what + ": named vs forward_d2l attention_weights", named_weights, d2l_weights, 1e-6);
  };
  agree("1-D valid_lens", lens1);
  agree("2-D valid_lens", lens2);
  agree("no valid_lens");
}

TEST_CASE("load_parameters refuses d2l weights of another multi-head attention", "[parity][attention][multi_head]") {
  using mha_t = nn::multi_head_attention<Queries, KVPairs, Hidden>;
  SECTION("a module with bias, from a folder without W_q.bias.npy: nothing changes") {
    mha_t attention(Hidden(12), Hidden(12), Hidden(12), Hidden(12), nn::Heads(3), 0.5, true);
    auto const before = attention.W_q.weight.clone();
    REQUIRE_THROWS_AS(nn::load_parameters(attention, case_dir("mha")), dt::io_error);
    REQUIRE_THROWS_WITH(nn::load_parameters(attention, case_dir("mha")), Catch::Contains("W_q.bias"));
    CHECK(dt::equal(attention.W_q.weight, before));  // W_q.weight did load, and was not kept
  }
  SECTION("a module without bias, from a safetensors file with biases") {
    mha_t attention(Hidden(12), Hidden(12), Hidden(12), Hidden(12), nn::Heads(3), 0.5);
    auto const file = case_dir("mha_bias") / "weights.safetensors";
    REQUIRE_THROWS_AS(nn::load_parameters(attention, file), dt::io_error);
    REQUIRE_THROWS_WITH(nn::load_parameters(attention, file),
                        Catch::Contains("has tensors the module does not") && Catch::Contains("W_q.bias"));
  }
  SECTION("feature sizes 5, 7, 4 into a module of 12") {
    mha_t attention(Hidden(12), Hidden(12), Hidden(12), Hidden(12), nn::Heads(3), 0.5);
    auto const folder = case_dir("mha_sizes");
    REQUIRE_THROWS_AS(nn::load_parameters(attention, folder), dt::io_error);
    REQUIRE_THROWS_WITH(nn::load_parameters(attention, folder),
                        Catch::Contains("W_q.weight") && Catch::Contains("has shape [Hidden=12, Hidden'=5]") &&
                            Catch::Contains("the module's is [Hidden=12, Hidden'=12]"));
    REQUIRE_THROWS_WITH(nn::load_parameters(attention, folder / "weights.safetensors"),
                        Catch::Contains("W_q.weight") && Catch::Contains("has shape [Hidden=12, Hidden'=5]"));
  }
}

// ---------------------------------------------------------------------------
// Nadaraya–Watson
// ---------------------------------------------------------------------------

TEST_CASE("Nadaraya-Watson pooling matches d2l", "[parity][attention][nadaraya_watson]") {
  auto const dir = case_dir("nadaraya_watson");
  auto const x_train = load<dt::tensor<float, Train>>(dir, "x_train");
  auto const y_train = load<dt::tensor<float, Train>>(dir, "y_train");
  auto const x_test = load<dt::tensor<float, Test>>(dir, "x_test");
  using nw_weights_t = dt::tensor<float, Test, Train>;
  using y_hat_t = dt::tensor<float, Test>;

  SECTION("x_test is torch.arange(0, 5, 0.1), to within one float ulp") {
    // dimtensor rounds start + i * step, computed in double, once; torch's
    // vectorized float kernel adds steps in float and lands one ulp off at
    // 6 of the 50 points (0.90000004 for 0.9, ...).  The tests below use
    // d2l's x_test itself.
    check_close("arange(0, 5, 0.1)", dt::arange<float, Test>(0, 5, 0.1), x_test, 4.8e-7);
  }
  SECTION("non-parametric: softmax(-(X_repeat - x_train)**2 / 2) and matmul") {
    check_close("nadaraya_watson attention_weights", nn::nadaraya_watson_weights<Train>(x_test, x_train),
                load<nw_weights_t>(dir, "attention_weights"));
    check_close("nadaraya_watson y_hat", nn::nadaraya_watson<Train>(x_test, x_train, y_train),
                load<y_hat_t>(dir, "y_hat"));
  }
  SECTION("parametric (NWKernelRegression, w trained by d2l)") {
    double const w = load<dt::tensor<float, Scalar>>(dir, "w").data()[0];
    auto const want_weights = load<nw_weights_t>(dir, "attention_weights_w");
    auto const want_y = load<y_hat_t>(dir, "y_hat_w");
    check_close("nadaraya_watson w attention_weights", nn::nadaraya_watson_weights<Train>(x_test, x_train, w),
                want_weights);
    check_close("nadaraya_watson w y_hat", nn::nadaraya_watson<Train>(x_test, x_train, y_train, w), want_y);
    // d2l's shapes: keys and values x_train.repeat((n_test, 1)), one row per query.
    auto const rows = dt::zeros<float>(Test(x_test.extent<Test>()), Train(x_train.extent<Train>()));
    auto const keys = dt::eval(rows + x_train);
    auto const values = dt::eval(rows + y_train);
    check_close("nadaraya_watson w [Test, Train] keys attention_weights",
                nn::nadaraya_watson_weights<Train>(x_test, keys, w), want_weights);
    check_close("nadaraya_watson w [Test, Train] keys y_hat", nn::nadaraya_watson<Train>(x_test, keys, values, w),
                want_y);
  }
}

}  // namespace attention_parity
