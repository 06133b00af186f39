// Gradient parity of the attention modules with d2l's own PyTorch code
// (tests/parity/goldens_attention_grad.py, torch 1.13, eval mode): for the
// inputs and weights of data/attention/<case>/, the gradients of
// sum(output * G) with respect to queries, keys, values and every parameter
// must match torch's autograd within 1e-5.  The goldens are
// data/attention_grad/<case>/G.npy and grads_<lens>.npy (all gradients
// flattened and concatenated: queries, keys, values, then the parameters in
// state_dict order, which is the modules' for_each_parameter order).
// Multi-head attention is checked in both forms, the named one and d2l's.
// Run with -s to see the largest difference of each comparison.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/nn/parameters.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace dt = dimtensor;
namespace nn = dimtensor::nn;

namespace attention_grad_parity {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Flat);

using lens1_t = dt::tensor<std::int64_t, Batch>;
using lens2_t = dt::tensor<std::int64_t, Batch, Queries>;
using flat_t = dt::tensor<float, Flat>;

using parity_support::data_dir;
using parity_support::load;
using parity_support::tolerance;

/// Appends the elements of @p t to @p out in C order (PyTorch's flatten).
template <class Tensor>
void append(std::vector<float>& out, Tensor const& t) {
  auto const c = t.contiguous();
  out.insert(out.end(), c.data(), c.data() + c.size());
}

/// @brief Runs @p forward (a call of @p module on queries, keys, values and
/// the valid_lens named @p lens: "1d", "2d" or "none") on the inputs of
/// data/attention/<name>/, back-propagates G and compares every gradient
/// with grads_<lens>.npy.  Q, K, V: the input tensor types.
template <class Q, class K, class V, class Module, class Forward>
void check_case(std::string const& name, Module& module, Forward const& forward, std::string const& lens) {
  auto const dir = data_dir("attention", name);
  auto const golden_dir = data_dir("attention_grad", name);
  INFO("case " << name << ", valid_lens " << lens);
  auto q = load<Q>(dir, "queries");
  auto k = load<K>(dir, "keys");
  auto v = load<V>(dir, "values");
  q.requires_grad_();
  k.requires_grad_();
  v.requires_grad_();
  nn::zero_grad(module);
  auto const finish = [&](auto const& out) {
    using out_t = std::remove_cvref_t<decltype(out)>;
    out.backward(load<out_t>(golden_dir, "G"));
    std::vector<float> got;
    append(got, q.grad());
    append(got, k.grad());
    append(got, v.grad());
    std::vector<std::string> keys;
    module.for_each_parameter([&](std::string const& key, auto const& parameter) {
      keys.push_back(key);
      append(got, parameter.grad());
    });
    auto const want = load<flat_t>(golden_dir, "grads_" + lens);
    REQUIRE(static_cast<dt::index_t>(got.size()) == want.size());
    double diff = 0;
    std::size_t worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      double const d = std::abs(double(got[i]) - double(want.data()[i]));
      if (d > diff) {
        diff = d;
        worst = i;
      }
    }
    std::string parameters;
    for (auto const& key : keys) parameters += " " + key;
    INFO("gradients of queries, keys, values," << parameters << ": max |dimtensor - d2l| = " << diff
                                               << " at flat index " << worst);
    CHECK(diff <= tolerance);
  };
  if (lens == "1d") {
    finish(forward(q, k, v, load<lens1_t>(dir, "valid_lens_1d")));
  } else if (lens == "2d") {
    finish(forward(q, k, v, load<lens2_t>(dir, "valid_lens_2d")));
  } else {
    finish(forward(q, k, v));
  }
}

using additive_t = nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden>;
using additive_q_t = dt::tensor<float, Batch, Queries, QueryFeat>;
using additive_k_t = dt::tensor<float, Batch, KVPairs, KeyFeat>;
using values_t = dt::tensor<float, Batch, KVPairs, ValueFeat>;

TEST_CASE("additive attention: gradients match d2l's", "[parity][attention][autograd]") {
  std::string const name = "additive_random";
  additive_t attention(KeyFeat(6), QueryFeat(5), Hidden(9), 0.2);
  attention.eval();
  nn::load_parameters(attention, data_dir("attention", name));
  auto const forward = [&](auto const&... a) { return attention(a...); };
  auto const lens = GENERATE(as<std::string>{}, "1d", "2d", "none");
  check_case<additive_q_t, additive_k_t, values_t>(name, attention, forward, lens);
}

TEST_CASE("dot-product attention: gradients match d2l's", "[parity][attention][autograd]") {
  nn::dot_product_attention<Queries, KVPairs, Feat> attention(0.5);
  attention.eval();
  auto const forward = [&](auto const&... a) { return attention(a...); };
  auto const lens = GENERATE(as<std::string>{}, "1d", "2d");
  check_case<dt::tensor<float, Batch, Queries, Feat>, dt::tensor<float, Batch, KVPairs, Feat>, values_t>(
      "dot_product_random", attention, forward, lens);
}

using mha_t = nn::multi_head_attention<Queries, KVPairs, Hidden, QueryFeat, KeyFeat, ValueFeat>;
using mha_q_t = dt::tensor<float, Batch, Queries, QueryFeat>;
using mha_k_t = dt::tensor<float, Batch, KVPairs, KeyFeat>;

TEST_CASE("multi-head attention: gradients match d2l's, in both forms", "[parity][attention][autograd]") {
  struct mha_case {
    std::string name;
    dt::index_t key_size, query_size, value_size;
    bool bias;
    std::vector<std::string> lens;
  };
  auto const c = GENERATE(values<mha_case>({{"mha_bias", 12, 12, 12, true, {"1d", "2d"}},
                                            {"mha_sizes", 7, 5, 4, false, {"2d", "none"}}}));
  mha_t attention(KeyFeat(c.key_size), QueryFeat(c.query_size), ValueFeat(c.value_size), Hidden(12), nn::Heads(3),
                  0.5, c.bias);
  attention.eval();
  nn::load_parameters(attention, data_dir("attention", c.name));
  for (auto const& lens : c.lens) {
    SECTION("named form, valid_lens " + lens) {
      auto const forward = [&](auto const&... a) { return attention(a...); };
      check_case<mha_q_t, mha_k_t, values_t>(c.name, attention, forward, lens);
    }
    SECTION("d2l's form, valid_lens " + lens) {
      auto const forward = [&](auto const&... a) { return attention.forward_d2l(a...); };
      check_case<mha_q_t, mha_k_t, values_t>(c.name, attention, forward, lens);
    }
  }
}

}  // namespace attention_grad_parity
