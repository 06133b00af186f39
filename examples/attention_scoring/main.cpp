// d2l, "Attention Scoring Functions": masked softmax, additive attention and
// scaled dot-product attention, with the chapter's toy inputs.
//
// Run as `example_attention_scoring [output folder]` (default: the current
// folder). It prints what the chapter prints, writes the two heatmaps of
// attention weights, and exits non-zero when a number is wrong:
//   - masked softmax: masked entries exactly 0, every row summing to 1;
//   - both toys: [[[2, 3, 4, 5]]] and [[[10, 11, 12, 13]]]. The keys are all
//     equal, so every valid key gets the same weight whatever the layers'
//     weights and the queries: the output is the mean of the first 2 (batch
//     entry 0) or 6 (entry 1) value rows.
// The random draws come from dimtensor's seeded generator, not PyTorch's, so
// the masked softmax weights differ from the book's (their pattern does not).
// The tensors live on the default backend (the GPU in
// example_attention_scoring_cuda); the checks read elements on the host,
// from copies made with dimtensor::to<dimtensor::cpu> (on the CPU, the
// tensor itself).
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/viz.hpp>

namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Flat);
DIMTENSOR_DIM(BatchQueries);

namespace {

using weights_t = dt::tensor<float, Batch, Queries, KVPairs>;
using output_t = dt::tensor<float, Batch, Queries, ValueFeat>;

int failures = 0;

void fail(std::string const& what) {
  std::cerr << "attention_scoring: " << what << '\n';
  ++failures;
}

// Entries past a row's valid length must be exactly 0 (d2l fills them with
// -1e6 before the softmax, and exp of that underflows), and every row must
// sum to 1. valid_len(b, q) reads the lengths on the host.
template <class Lens>
void check_masked(std::string const& name, weights_t const& weights, Lens const& valid_len) {
  auto const w = dt::to<dt::cpu>(weights);  // element access reads host memory
  for (dt::index_t b = 0; b < w.extent<Batch>(); ++b) {
    for (dt::index_t q = 0; q < w.extent<Queries>(); ++q) {
      std::int64_t const len = valid_len(b, q);
      double row_sum = 0;
      for (dt::index_t k = 0; k < w.extent<KVPairs>(); ++k) {
        float const v = w(Batch(b), Queries(q), KVPairs(k));
        row_sum += v;
        if (k >= len && v != 0.0f) {
          fail(name + ": entry (" + std::to_string(b) + ", " + std::to_string(q) + ", " + std::to_string(k) +
               ") is past the valid length " + std::to_string(len) + " but is " + std::to_string(v));
        }
        if (k < len && !(v > 0.0f)) fail(name + ": a valid entry is not positive");
      }
      if (std::abs(row_sum - 1.0) > 1e-6) {
        fail(name + ": row (" + std::to_string(b) + ", " + std::to_string(q) + ") sums to " +
             std::to_string(row_sum));
      }
    }
  }
}

// The mean of the first 2 value rows for batch entry 0 and of the first 6 for
// entry 1: {2, 3, 4, 5} and {10, 11, 12, 13}. Entry 0 must be exact (weights
// 1/2, sums of halves of small integers). Entry 1 weighs by 1/6, which float
// rounds; the sum is exact here, but another summation order may land one
// unit in the last place away, so it gets 2 of them (about 2e-6 at 13).
void check_toy(std::string const& name, output_t const& out) {
  output_t const expected{{{2, 3, 4, 5}}, {{10, 11, 12, 13}}};
  double const err = dt::max_abs_diff(out, expected);
  std::cout << name << ": largest difference from [[[2, 3, 4, 5]]], [[[10, 11, 12, 13]]]: " << err << "\n\n";
  auto const got = dt::to<dt::cpu>(out);
  auto const wanted = dt::to<dt::cpu>(expected);
  for (dt::index_t v = 0; v < 4; ++v) {
    float const first = got(Batch(0), Queries(0), ValueFeat(v));
    float const second = got(Batch(1), Queries(0), ValueFeat(v));
    float const want = wanted(Batch(1), Queries(0), ValueFeat(v));
    if (first != wanted(Batch(0), Queries(0), ValueFeat(v))) {
      fail(name + ": batch entry 0 is not exactly [2, 3, 4, 5] (value " + std::to_string(v) + " is " +
           std::to_string(first) + ")");
    }
    if (std::abs(second - want) > 2 * (std::nextafter(want, 100.0f) - want)) {
      fail(name + ": batch entry 1 is not [10, 11, 12, 13] (value " + std::to_string(v) + " is " +
           std::to_string(second) + ")");
    }
  }
}

// d2l.show_heatmaps(attention.attention_weights.reshape((1, 1, 2, 10)),
//                   xlabel='Keys', ylabel='Queries')
// The reshape puts the two batch entries' single queries in one matrix of 2
// rows; merge says so by name.
void save_heatmap(weights_t const& weights, std::filesystem::path const& out_dir, std::string const& stem) {
  auto const rows = dt::merge<Batch, Queries, BatchQueries>(weights);  // [BatchQueries=2, KVPairs=10]
  dt::viz::heatmap_options options;
  options.xlabel = "Keys";
  options.ylabel = "Queries";
  for (char const* extension : {".png", ".svg"}) {
    auto const file = out_dir / (stem + extension);
    dt::viz::show_heatmap(rows, file, options);
    std::cout << "wrote " << file.string() << '\n';
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path const out_dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out_dir);
  dt::manual_seed(0);

  // masked_softmax(torch.rand(2, 2, 4), torch.tensor([2, 3]))
  dt::tensor<std::int64_t, Batch> const per_row{2, 3};
  weights_t const w1 = dt::masked_softmax<KVPairs>(dt::rand<float>(Batch(2), Queries(2), KVPairs(4)), per_row);
  std::cout << "masked_softmax(rand(2, 2, 4), [2, 3]) =\n" << w1 << "\n\n";
  auto const per_row_host = dt::to<dt::cpu>(per_row);
  check_masked("masked_softmax with [2, 3]", w1,
               [&](dt::index_t b, dt::index_t) { return per_row_host(Batch(b)); });

  // masked_softmax(torch.rand(2, 2, 4), d2l.tensor([[1, 3], [2, 4]]))
  dt::tensor<std::int64_t, Batch, Queries> const per_query{{1, 3}, {2, 4}};
  weights_t const w2 = dt::masked_softmax<KVPairs>(dt::rand<float>(Batch(2), Queries(2), KVPairs(4)), per_query);
  std::cout << "masked_softmax(rand(2, 2, 4), [[1, 3], [2, 4]]) =\n" << w2 << "\n\n";
  auto const per_query_host = dt::to<dt::cpu>(per_query);
  check_masked("masked_softmax with [[1, 3], [2, 4]]", w2,
               [&](dt::index_t b, dt::index_t q) { return per_query_host(Batch(b), Queries(q)); });

  // keys = d2l.ones((2, 10, 2)); values = torch.arange(40).reshape(1, 10, 4).repeat(2, 1, 1)
  auto const keys = dt::ones<float>(Batch(2), KVPairs(10), KeyFeat(2));
  dt::tensor<float, Batch, KVPairs, ValueFeat> const values =
      dt::zeros<float>(Batch(2), KVPairs(10), ValueFeat(4)) +
      dt::split<Flat, KVPairs, ValueFeat>(dt::arange<float>(Flat(40)), KVPairs(10));
  dt::tensor<std::int64_t, Batch> const valid_lens{2, 6};
  auto const valid_lens_host = dt::to<dt::cpu>(valid_lens);

  // Additive attention: queries of 20 features, keys of 2, 8 hidden units.
  auto const queries = dt::normal<float>(0, 1, Batch(2), Queries(1), QueryFeat(20));
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden> additive(KeyFeat(2), QueryFeat(20),
                                                                                    Hidden(8), 0.1);
  additive.eval();
  output_t const additive_out = additive(queries, keys, values, valid_lens);
  std::cout << "AdditiveAttention(queries, keys, values, valid_lens) =\n" << additive_out << '\n';
  check_toy("additive attention", additive_out);
  weights_t const additive_weights = additive.attention_weights<Batch, Queries, KVPairs>();
  check_masked("additive attention weights", additive_weights,
               [&](dt::index_t b, dt::index_t) { return valid_lens_host(Batch(b)); });
  save_heatmap(additive_weights, out_dir, "additive_attention_weights");

  // Scaled dot-product attention: queries and keys share their 2 features.
  auto const dot_queries = dt::normal<float>(0, 1, Batch(2), Queries(1), KeyFeat(2));
  dt::nn::dot_product_attention<Queries, KVPairs, KeyFeat> dot_product(0.5);
  dot_product.eval();
  output_t const dot_out = dot_product(dot_queries, keys, values, valid_lens);
  std::cout << "DotProductAttention(queries, keys, values, valid_lens) =\n" << dot_out << '\n';
  check_toy("dot-product attention", dot_out);
  weights_t const dot_weights = dot_product.attention_weights<Batch, Queries, KVPairs>();
  check_masked("dot-product attention weights", dot_weights,
               [&](dt::index_t b, dt::index_t) { return valid_lens_host(Batch(b)); });
  save_heatmap(dot_weights, out_dir, "dot_product_attention_weights");

  if (failures != 0) {
    std::cerr << "attention_scoring: " << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "all checks passed\n";
  return 0;
}
