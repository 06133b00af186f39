// The attention modules' forward pass against d2l's PyTorch code written in
// libtorch (the same operations in the same order: masked_softmax through
// sequence_mask with -1e6, bmm, nn.Linear without bias), on the same inputs
// and weights, eval mode:
//   dot_product     queries [16, 512, 64], keys/values [16, 512, 64], 1-D valid_lens
//   additive        queries [4, 64, 32], keys [4, 64, 48], values [4, 64, 32], hidden 128
//   multi_head      X = Y [16, 128, 512], 8 heads, 1-D valid_lens;
//                   dimtensor: named form and d2l form (transpose_qkv)
// Forward passes run without recording (autograd::no_grad, torch::NoGradGuard).
// Training step (forward and backward, gradients of every weight and input):
//   multi_head_train  queries X [16, 512, 512], keys = values Y [16, 512, 512],
//                     8 heads of 64, 1-D valid_lens; backward of sum(out * G)
// The ratios at the end are libtorch time / dimtensor time (ratio_reporter.hpp).

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>

#include "d2l_libtorch.hpp"
#include "ratio_reporter.hpp"

namespace {

namespace dt = dimtensor;

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

using lens_t = dt::tensor<std::int64_t, Batch>;

lens_t random_lens(dt::generator& gen, dt::index_t batch, dt::index_t max_len) {
  return dt::randint<std::int64_t>(gen, 1, max_len + 1, Batch(batch));
}

#if DIMTENSOR_HAVE_LIBTORCH
using dimtensor_bench::dot_product_attention;
using dimtensor_bench::masked_softmax;
using dimtensor_bench::to_torch;
using dimtensor_bench::transpose_output;
using dimtensor_bench::transpose_qkv;
#endif

// ---------------------------------------------------------------------------
// Scaled dot-product attention.
struct dot_inputs {
  static constexpr dt::index_t batch = 16, queries = 512, kv = 512, d = 64;
  dt::generator gen{11};
  dt::tensor<float, Batch, Queries, Hidden> q = dt::randn<float>(gen, Batch(batch), Queries(queries), Hidden(d));
  dt::tensor<float, Batch, KVPairs, Hidden> k = dt::randn<float>(gen, Batch(batch), KVPairs(kv), Hidden(d));
  dt::tensor<float, Batch, KVPairs, ValueFeat> v = dt::randn<float>(gen, Batch(batch), KVPairs(kv), ValueFeat(d));
  lens_t lens = random_lens(gen, batch, kv);
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention{0.0};
#if DIMTENSOR_HAVE_LIBTORCH
  torch::Tensor tq = to_torch(q), tk = to_torch(k), tv = to_torch(v), tlens = to_torch(lens);
#endif
  static dot_inputs& get() {
    static dot_inputs in;
    return in;
  }
};

void dimtensor_dot_product(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = dot_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention(in.q, in.k, in.v, in.lens);
    benchmark::DoNotOptimize(r.data());
  }
}

// ---------------------------------------------------------------------------
// Additive attention.
struct additive_inputs {
  static constexpr dt::index_t batch = 4, queries = 64, kv = 64, qf = 32, kf = 48, vf = 32, hidden = 128;
  dt::generator gen{12};
  dt::tensor<float, Batch, Queries, QueryFeat> q = dt::randn<float>(gen, Batch(batch), Queries(queries), QueryFeat(qf));
  dt::tensor<float, Batch, KVPairs, KeyFeat> k = dt::randn<float>(gen, Batch(batch), KVPairs(kv), KeyFeat(kf));
  dt::tensor<float, Batch, KVPairs, ValueFeat> v = dt::randn<float>(gen, Batch(batch), KVPairs(kv), ValueFeat(vf));
  lens_t lens = random_lens(gen, batch, kv);
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden> attention{KeyFeat(kf), QueryFeat(qf),
                                                                                      Hidden(hidden), 0.0, gen};
#if DIMTENSOR_HAVE_LIBTORCH
  torch::Tensor tq = to_torch(q), tk = to_torch(k), tv = to_torch(v), tlens = to_torch(lens);
  torch::Tensor w_q = to_torch(attention.W_q.weight), w_k = to_torch(attention.W_k.weight),
                w_v = to_torch(attention.w_v.weight);

  // d2l's AdditiveAttention.forward.
  torch::Tensor forward() const {
    auto const queries = torch::linear(tq, w_q);
    auto const keys = torch::linear(tk, w_k);
    auto const features = torch::tanh(queries.unsqueeze(2) + keys.unsqueeze(1));
    auto const scores = torch::linear(features, w_v).squeeze(-1);
    return torch::bmm(masked_softmax(scores, tlens), tv);
  }
#endif
  static additive_inputs& get() {
    static additive_inputs in;
    return in;
  }
};

void dimtensor_additive(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = additive_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention(in.q, in.k, in.v, in.lens);
    benchmark::DoNotOptimize(r.data());
  }
}

// ---------------------------------------------------------------------------
// Multi-head attention.
struct multi_head_inputs {
  static constexpr dt::index_t batch = 16, length = 128, hidden = 512, heads = 8;
  dt::generator gen{13};
  dt::tensor<float, Batch, Queries, Hidden> x = dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden));
  dt::tensor<float, Batch, KVPairs, Hidden> y = dt::randn<float>(gen, Batch(batch), KVPairs(length), Hidden(hidden));
  lens_t lens = random_lens(gen, batch, length);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention{
      Hidden(hidden), Hidden(hidden), Hidden(hidden), Hidden(hidden), dt::nn::Heads(heads), 0.0, false, gen};
#if DIMTENSOR_HAVE_LIBTORCH
  torch::Tensor tx = to_torch(x), ty = to_torch(y), tlens = to_torch(lens);
  torch::Tensor w_q = to_torch(attention.W_q.weight), w_k = to_torch(attention.W_k.weight),
                w_v = to_torch(attention.W_v.weight), w_o = to_torch(attention.W_o.weight);

  // d2l's MultiHeadAttention.forward.
  torch::Tensor forward() const {
    auto const queries = transpose_qkv(torch::linear(tx, w_q), heads);
    auto const keys = transpose_qkv(torch::linear(ty, w_k), heads);
    auto const values = transpose_qkv(torch::linear(ty, w_v), heads);
    auto const valid_lens = torch::repeat_interleave(tlens, heads, 0);
    auto const output = dot_product_attention(queries, keys, values, valid_lens);
    return torch::linear(transpose_output(output, heads), w_o);
  }
#endif
  static multi_head_inputs& get() {
    static multi_head_inputs in;
    return in;
  }
};

void dimtensor_multi_head(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = multi_head_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention(in.x, in.y, in.y, in.lens);
    benchmark::DoNotOptimize(r.data());
  }
}

void dimtensor_multi_head_d2l_form(benchmark::State& state) {
  dt::autograd::no_grad const no_grad;
  auto& in = multi_head_inputs::get();
  for (auto _ : state) {
    auto const r = in.attention.forward_d2l(in.x, in.y, in.y, in.lens);
    benchmark::DoNotOptimize(r.data());
  }
}

// ---------------------------------------------------------------------------
// Multi-head attention, one training step: forward and backward.
struct multi_head_train_inputs {
  static constexpr dt::index_t batch = 16, length = 512, hidden = 512, heads = 8;
  dt::generator gen{17};
  dt::tensor<float, Batch, Queries, Hidden> x = dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden));
  dt::tensor<float, Batch, KVPairs, Hidden> y = dt::randn<float>(gen, Batch(batch), KVPairs(length), Hidden(hidden));
  dt::tensor<float, Batch, Queries, Hidden> g = dt::randn<float>(gen, Batch(batch), Queries(length), Hidden(hidden));
  lens_t lens = random_lens(gen, batch, length);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention{
      Hidden(hidden), Hidden(hidden), Hidden(hidden), Hidden(hidden), dt::nn::Heads(heads), 0.0, false, gen};
#if DIMTENSOR_HAVE_LIBTORCH
  torch::Tensor tx = to_torch(x).requires_grad_(), ty = to_torch(y).requires_grad_(), tg = to_torch(g),
                tlens = to_torch(lens);
  torch::Tensor w_q = to_torch(attention.W_q.weight).requires_grad_(),
                w_k = to_torch(attention.W_k.weight).requires_grad_(),
                w_v = to_torch(attention.W_v.weight).requires_grad_(),
                w_o = to_torch(attention.W_o.weight).requires_grad_();

  // d2l's MultiHeadAttention.forward, then backward of sum(out * G).
  void step() {
    for (auto* t : {&tx, &ty, &w_q, &w_k, &w_v, &w_o}) t->mutable_grad() = torch::Tensor();
    auto const queries = transpose_qkv(torch::linear(tx, w_q), heads);
    auto const keys = transpose_qkv(torch::linear(ty, w_k), heads);
    auto const values = transpose_qkv(torch::linear(ty, w_v), heads);
    auto const valid_lens = torch::repeat_interleave(tlens, heads, 0);
    auto const output = dot_product_attention(queries, keys, values, valid_lens);
    torch::linear(transpose_output(output, heads), w_o).backward(tg);
  }
#endif
  multi_head_train_inputs() {
    x.requires_grad_();
    y.requires_grad_();
  }
  template <class Forward>
  void step(Forward forward) {
    x.zero_grad();
    y.zero_grad();
    attention.for_each_parameter([](auto const&, auto& p) { p.zero_grad(); });
    auto const out = forward(*this);
    out.backward(g);
  }
  static multi_head_train_inputs& get() {
    static multi_head_train_inputs in;
    return in;
  }
};

void dimtensor_multi_head_train(benchmark::State& state) {
  auto& in = multi_head_train_inputs::get();
  for (auto _ : state) {
    in.step([](auto& i) { return dt::eval(i.attention(i.x, i.y, i.y, i.lens)); });
    benchmark::DoNotOptimize(in.x.grad().data());
  }
}

void dimtensor_multi_head_train_d2l_form(benchmark::State& state) {
  auto& in = multi_head_train_inputs::get();
  for (auto _ : state) {
    in.step([](auto& i) { return dt::eval(i.attention.forward_d2l(i.x, i.y, i.y, i.lens)); });
    benchmark::DoNotOptimize(in.x.grad().data());
  }
}

#if DIMTENSOR_HAVE_LIBTORCH
void libtorch_multi_head_train(benchmark::State& state) {
  auto& in = multi_head_train_inputs::get();
  for (auto _ : state) {
    in.step();
    benchmark::DoNotOptimize(in.tx.grad().data_ptr());
  }
}
#endif

#if DIMTENSOR_HAVE_LIBTORCH
void libtorch_dot_product(benchmark::State& state) {
  auto& in = dot_inputs::get();
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    auto const r = dot_product_attention(in.tq, in.tk, in.tv, in.tlens);
    benchmark::DoNotOptimize(r.data_ptr());
  }
}

void libtorch_additive(benchmark::State& state) {
  auto& in = additive_inputs::get();
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    auto const r = in.forward();
    benchmark::DoNotOptimize(r.data_ptr());
  }
}

void libtorch_multi_head(benchmark::State& state) {
  auto& in = multi_head_inputs::get();
  torch::NoGradGuard no_grad;
  for (auto _ : state) {
    auto const r = in.forward();
    benchmark::DoNotOptimize(r.data_ptr());
  }
}
#endif

template <class Tensor>
double largest_difference([[maybe_unused]] Tensor const& ours, [[maybe_unused]] void const* theirs) {
  double worst = 0;
  auto const c = dt::eval(ours).contiguous();
  auto const* t = static_cast<float const*>(theirs);
  for (dt::index_t i = 0; i < c.size(); ++i) worst = std::fmax(worst, std::fabs(c.data()[i] - t[i]));
  return worst;
}

// The modules must compute d2l's numbers, or the timing means nothing.
bool results_agree() {
  auto& dot = dot_inputs::get();
  auto& additive = additive_inputs::get();
  auto& multi = multi_head_inputs::get();
  auto const r_dot = dot.attention(dot.q, dot.k, dot.v, dot.lens);
  auto const r_add = additive.attention(additive.q, additive.k, additive.v, additive.lens);
  auto const r_named = multi.attention(multi.x, multi.y, multi.y, multi.lens);
  auto const r_d2l = multi.attention.forward_d2l(multi.x, multi.y, multi.y, multi.lens);
  bool ok = dimtensor_bench::agrees("attention_bench: named vs d2l form", dt::max_abs_diff(r_named, r_d2l), 1e-5);
  auto& train = multi_head_train_inputs::get();
  train.step([](auto& i) { return dt::eval(i.attention(i.x, i.y, i.y, i.lens)); });
  auto const grad_x = train.x.grad().clone();
  auto const grad_w_q = train.attention.W_q.weight.grad().clone();
  train.step([](auto& i) { return dt::eval(i.attention.forward_d2l(i.x, i.y, i.y, i.lens)); });
  ok = dimtensor_bench::agrees("attention_bench: train, named vs d2l form: grad x",
                               dt::max_abs_diff(grad_x, train.x.grad()), 1e-5) &&
       dimtensor_bench::agrees("attention_bench: train, named vs d2l form: grad W_q",
                               dt::max_abs_diff(grad_w_q, train.attention.W_q.weight.grad()), 1e-4) &&
       ok;
#if DIMTENSOR_HAVE_LIBTORCH
  torch::NoGradGuard no_grad;
  auto const t_dot = dot_product_attention(dot.tq, dot.tk, dot.tv, dot.tlens).contiguous();
  auto const t_add = additive.forward().contiguous();
  auto const t_multi = multi.forward().contiguous();
  {
    torch::AutoGradMode const grad_on(true);
    train.step();
  }
  auto const t_grad_x = train.tx.grad().contiguous();
  auto const t_grad_w_q = train.w_q.grad().contiguous();
  ok = dimtensor_bench::agrees("attention_bench: train: grad x", largest_difference(grad_x, t_grad_x.data_ptr()), 1e-4) &&
       dimtensor_bench::agrees("attention_bench: train: grad W_q",
                               largest_difference(grad_w_q, t_grad_w_q.data_ptr()), 1e-3) &&
       ok;
  ok = dimtensor_bench::agrees("attention_bench: dot_product", largest_difference(r_dot, t_dot.data_ptr()), 1e-4) &&
       dimtensor_bench::agrees("attention_bench: additive", largest_difference(r_add, t_add.data_ptr()), 1e-4) &&
       dimtensor_bench::agrees("attention_bench: multi_head", largest_difference(r_named, t_multi.data_ptr()), 1e-4) &&
       ok;
#endif
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  dimtensor_bench::register_timed("dimtensor/dot_product", dimtensor_dot_product);
  dimtensor_bench::register_timed("dimtensor/additive", dimtensor_additive);
  dimtensor_bench::register_timed("dimtensor/multi_head/named", dimtensor_multi_head);
  dimtensor_bench::register_timed("dimtensor/multi_head/d2l_form", dimtensor_multi_head_d2l_form);
  dimtensor_bench::register_timed("dimtensor/multi_head_train/named", dimtensor_multi_head_train);
  dimtensor_bench::register_timed("dimtensor/multi_head_train/d2l_form", dimtensor_multi_head_train_d2l_form);
#if DIMTENSOR_HAVE_LIBTORCH
  dimtensor_bench::register_timed("libtorch/dot_product", libtorch_dot_product);
  dimtensor_bench::register_timed("libtorch/additive", libtorch_additive);
  dimtensor_bench::register_timed("libtorch/multi_head", libtorch_multi_head);
  dimtensor_bench::register_timed("libtorch/multi_head_train", libtorch_multi_head_train);
#endif
  return dimtensor_bench::run_main(argc, argv, results_agree);
}
