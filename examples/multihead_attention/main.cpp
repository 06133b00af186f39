// d2l, "Multi-Head Attention": the chapter's shape test, the module's two
// forms side by side, and the attention weights of every head.
//
// Run as `example_multihead_attention [output folder]` (default: the current
// folder). It writes multihead_attention_weights.png, the weights of every
// head for random inputs, and exits non-zero when a check fails:
//   - the output of the shape test is [Batch=2, Queries=4, Hidden=100]
//     (d2l: torch.Size([2, 4, 100])); the dims are checked by the compiler,
//     the extents here; its values are W_o(W_v(ones)), since all inputs are
//     ones;
//   - the named form (heads a dim of their own) and d2l's form
//     (transpose_qkv / transpose_output, heads merged into the batch) give
//     the same output and the same attention weights;
//   - every head's weights are 0 past the valid length and sum to 1.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
#include <dimtensor/viz.hpp>

namespace dt = dimtensor;
using dt::nn::BatchHeads;
using dt::nn::Heads;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace {

int failures = 0;

void fail(std::string const& what) {
  std::cerr << "multihead_attention: " << what << '\n';
  ++failures;
}

void check_close(std::string const& what, double err, double tolerance) {
  std::cout << what << ": largest difference " << err << '\n';
  if (!(err <= tolerance)) fail(what + " differ by " + std::to_string(err));
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path const out_dir = argc > 1 ? argv[1] : ".";
  std::filesystem::create_directories(out_dir);
  dt::manual_seed(0);

  // num_hiddens, num_heads = 100, 5
  // attention = MultiHeadAttention(num_hiddens, num_hiddens, num_hiddens, num_hiddens, num_heads, 0.5)
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(100), Hidden(100), Hidden(100),
                                                                   Hidden(100), Heads(5), 0.5);
  attention.eval();

  // batch_size, num_queries, num_kvpairs, valid_lens = 2, 4, 6, torch.tensor([3, 2])
  dt::tensor<std::int64_t, Batch> const valid_lens{3, 2};
  auto const X = dt::ones<float>(Batch(2), Queries(4), Hidden(100));
  auto const Y = dt::ones<float>(Batch(2), KVPairs(6), Hidden(100));

  // attention(X, Y, Y, valid_lens).shape
  auto const out = attention(X, Y, Y, valid_lens);
  static_assert(std::is_same_v<decltype(out), dt::tensor<float, Batch, Queries, Hidden> const>);
  std::cout << "attention(X, Y, Y, valid_lens).shape: (" << out.extent<Batch>() << ", " << out.extent<Queries>()
            << ", " << out.extent<Hidden>() << "), dims=[Batch=" << out.extent<Batch>()
            << ", Queries=" << out.extent<Queries>() << ", Hidden=" << out.extent<Hidden>() << "]\n";
  if (out.extent<Batch>() != 2 || out.extent<Queries>() != 4 || out.extent<Hidden>() != 100) {
    fail("the output's shape is not (2, 4, 100)");
  }

  // Every value row is W_v(1, …, 1) and the weights of a row sum to 1, so
  // every output row is W_o(W_v(1, …, 1)), whatever the weights.
  dt::tensor<float, Batch, Queries, Hidden> const expected = attention.W_o(attention.W_v(X));
  check_close("output on ones vs W_o(W_v(ones))", dt::max_abs_diff(out, expected), 1e-5);

  // d2l's own forward pass: transpose_qkv, valid_lens repeated per head,
  // DotProductAttention over BatchHeads, transpose_output.
  dt::tensor<float, Batch, Queries, Hidden> const out_d2l = attention.forward_d2l(X, Y, Y, valid_lens);
  check_close("named form vs forward_d2l on ones", dt::max_abs_diff(out, out_d2l), 1e-6);

  // Random inputs: the heads now attend differently.
  auto const X_random = dt::normal<float>(0, 1, Batch(2), Queries(4), Hidden(100));
  auto const Y_random = dt::normal<float>(0, 1, Batch(2), KVPairs(6), Hidden(100));

  dt::tensor<float, Batch, Queries, Hidden> const named = attention(X_random, Y_random, Y_random, valid_lens);
  // The named form keeps one weight per (batch, query, head, key).
  dt::tensor<float, Batch, Heads, Queries, KVPairs> const per_head = dt::permute<Batch, Heads, Queries, KVPairs>(
      attention.attention.attention_weights<Batch, Queries, Heads, KVPairs>());

  dt::tensor<float, Batch, Queries, Hidden> const d2l_form =
      attention.forward_d2l(X_random, Y_random, Y_random, valid_lens);
  check_close("named form vs forward_d2l on random inputs", dt::max_abs_diff(named, d2l_form), 1e-5);
  // d2l's form keeps them with batch and heads merged (entry b * heads + h).
  auto const merged = attention.attention.attention_weights<BatchHeads, Queries, KVPairs>();
  check_close("their attention weights",
              dt::max_abs_diff(per_head, dt::split<BatchHeads, Batch, Heads>(merged, Batch(2))), 1e-6);

  // Element access reads host memory: to<cpu> copies the tensors there from
  // the default backend (the GPU in example_multihead_attention_cuda; on the
  // CPU it returns the tensor itself).
  auto const per_head_host = dt::to<dt::cpu>(per_head);
  auto const valid_lens_host = dt::to<dt::cpu>(valid_lens);
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t h = 0; h < attention.num_heads(); ++h) {
      for (dt::index_t q = 0; q < 4; ++q) {
        double row_sum = 0;
        for (dt::index_t k = 0; k < 6; ++k) {
          float const w = per_head_host(Batch(b), Heads(h), Queries(q), KVPairs(k));
          row_sum += w;
          if (k >= valid_lens_host(Batch(b)) && w != 0.0f) fail("a weight past the valid length is not 0");
        }
        if (std::abs(row_sum - 1.0) > 1e-6) fail("a head's weights do not sum to 1");
      }
    }
  }
  std::cout << "head 1 of batch entry 0 (rows: queries, columns: keys):\n"
            << dt::slice<Heads>(dt::slice<Batch>(per_head, 0, 1), 0, 1) << '\n';

  // One heatmap per (batch entry, head): rows of the grid are Batch, columns
  // Heads, as d2l.show_heatmaps lays out a [rows, cols, queries, keys] tensor.
  dt::viz::heatmap_options options;
  options.xlabel = "Keys";
  options.ylabel = "Queries";
  for (dt::index_t h = 0; h < attention.num_heads(); ++h) options.titles.push_back("Head " + std::to_string(h + 1));
  auto const file = out_dir / "multihead_attention_weights.png";
  dt::viz::show_heatmaps(per_head, file, options);
  std::cout << "wrote " << file.string() << '\n';

  if (failures != 0) {
    std::cerr << "multihead_attention: " << failures << " check(s) failed\n";
    return 1;
  }
  std::cout << "all checks passed\n";
  return 0;
}
