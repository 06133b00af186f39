// The thread-safety contract of modules (docs/reliability.md, "Threads"):
// several threads may run one shared module in eval mode at once, with or
// without recording, and each reads back the attention weights of its own
// last call.  Every call used to store its weights in one std::any of the
// module, and two threads running one additive_attention raced on it
// (TSan: 5 reports; ASan: double free with 4 threads; release: SIGSEGV).
//
// Also built alone under ThreadSanitizer (tests/tsan, without OpenMP).
#include <catch2/catch.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>

namespace dt = dimtensor;

namespace {
DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(QueryFeat);
DIMTENSOR_DIM(KeyFeat);
DIMTENSOR_DIM(ValueFeat);
DIMTENSOR_DIM(Hidden);

using dt::index_t;
constexpr int thread_count = 2;
constexpr int calls_per_thread = 40;

// Whether two tensors hold the same elements, bit for bit (the same module
// on the same input computes the same numbers on any thread).
template <class A, class B>
bool same_elements(A const& a, B const& b) {
  if (a.extents() != b.extents()) return false;
  auto const ac = a.contiguous();
  auto const bc = b.contiguous();
  for (index_t i = 0; i < ac.size(); ++i) {
    if (ac.data()[i] != bc.data()[i]) return false;
  }
  return true;
}

// Runs body(thread index) on thread_count threads at once; the count of
// threads whose body returned false.
template <class Body>
int failures_of(Body body) {
  std::atomic<int> failed{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < thread_count) std::this_thread::yield();  // start together
      if (!body(t)) failed.fetch_add(1);
    });
  }
  for (auto& th : threads) th.join();
  return failed.load();
}
}  // namespace

TEST_CASE("threads: one additive_attention shared by threads, each with its own weights", "[nn][threads]") {
  dt::generator gen(3);
  dt::nn::additive_attention<Queries, KVPairs, QueryFeat, KeyFeat, Hidden> attention(KeyFeat(5), QueryFeat(4),
                                                                                     Hidden(8), 0.1, gen);
  attention.eval();
  // Thread t asks t + 1 queries, so its weights have a shape of their own.
  struct input {
    dt::tensor<float, Batch, Queries, QueryFeat> queries;
    dt::tensor<float, Batch, KVPairs, KeyFeat> keys;
    dt::tensor<float, Batch, KVPairs, ValueFeat> values;
    dt::tensor<std::int64_t, Batch> valid_lens;
  };
  std::vector<input> inputs;
  std::vector<dt::tensor<float, Batch, Queries, ValueFeat>> expected;
  std::vector<dt::tensor<float, Batch, Queries, KVPairs>> expected_weights;
  for (int t = 0; t < thread_count; ++t) {
    inputs.push_back({dt::randn<float>(gen, Batch(2), Queries(t + 1), QueryFeat(4)),
                      dt::randn<float>(gen, Batch(2), KVPairs(6), KeyFeat(5)),
                      dt::randn<float>(gen, Batch(2), KVPairs(6), ValueFeat(3)), dt::tensor<std::int64_t, Batch>{2, 5}});
    auto const& in = inputs.back();
    expected.push_back(attention(in.queries, in.keys, in.values, in.valid_lens));
    expected_weights.push_back(attention.attention_weights<Batch, Queries, KVPairs>());
  }

  SECTION("under no_grad") {
    int const failed = failures_of([&](int t) {
      dt::autograd::no_grad const guard;
      auto const& in = inputs[static_cast<std::size_t>(t)];
      for (int call = 0; call < calls_per_thread; ++call) {
        auto const out = attention(in.queries, in.keys, in.values, in.valid_lens);
        auto const weights = attention.attention_weights<Batch, Queries, KVPairs>();
        if (!same_elements(out, expected[static_cast<std::size_t>(t)])) return false;
        if (!same_elements(weights, expected_weights[static_cast<std::size_t>(t)])) return false;
      }
      return true;
    });
    CHECK(failed == 0);
  }
  SECTION("recording, then each thread's backward after the others are done") {
    // Forward passes may record at once; backward passes that reach shared
    // parameters run one at a time.
    std::vector<dt::tensor<float>> losses(thread_count);
    int const failed = failures_of([&](int t) {
      auto const& in = inputs[static_cast<std::size_t>(t)];
      auto const out = attention(in.queries, in.keys, in.values, in.valid_lens);
      losses[static_cast<std::size_t>(t)] = dt::sum(out);
      return same_elements(out, expected[static_cast<std::size_t>(t)]);
    });
    CHECK(failed == 0);
    dt::nn::zero_grad(attention);
    for (auto const& loss : losses) loss.backward();
    // The gradients add up over the threads' losses: compare with one thread doing both.
    auto const together = attention.W_q.weight.grad().clone();
    dt::nn::zero_grad(attention);
    for (auto const& in : inputs) dt::sum(attention(in.queries, in.keys, in.values, in.valid_lens)).backward();
    auto const alone = attention.W_q.weight.grad();
    for (index_t i = 0; i < alone.size(); ++i) CHECK(together.data()[i] == Approx(alone.data()[i]).margin(1e-6));
  }
}

TEST_CASE("threads: one multi_head_attention shared by threads, both forms", "[nn][threads]") {
  dt::generator gen(8);
  dt::nn::multi_head_attention<Queries, KVPairs, Hidden> attention(Hidden(8), Hidden(8), Hidden(8), Hidden(8),
                                                                   dt::nn::Heads(2), 0.2, false, gen);
  attention.eval();
  auto const X = dt::randn<float>(gen, Batch(2), Queries(3), Hidden(8));
  auto const Y = dt::randn<float>(gen, Batch(2), KVPairs(5), Hidden(8));
  dt::tensor<std::int64_t, Batch> const valid_lens{3, 4};
  auto const named = attention(X, Y, Y, valid_lens);
  auto const d2l = attention.forward_d2l(X, Y, Y, valid_lens);
  int const failed = failures_of([&](int t) {
    dt::autograd::no_grad const guard;
    for (int call = 0; call < calls_per_thread; ++call) {
      // Thread 0 runs the named form, thread 1 d2l's: their weights differ in dims.
      if (t % 2 == 0) {
        if (!same_elements(attention(X, Y, Y, valid_lens), named)) return false;
        if (attention.attention.attention_weights<Batch, Queries, dt::nn::Heads, KVPairs>().extents() !=
            std::array<index_t, 4>{2, 3, 2, 5}) {
          return false;
        }
      } else {
        if (!same_elements(attention.forward_d2l(X, Y, Y, valid_lens), d2l)) return false;
        if (attention.attention.attention_weights<dt::nn::BatchHeads, Queries, KVPairs>().extents() !=
            std::array<index_t, 3>{4, 3, 5}) {
          return false;
        }
      }
    }
    return true;
  });
  CHECK(failed == 0);
}

TEST_CASE("threads: a thread that has not called the module has no weights", "[nn][threads]") {
  dt::nn::dot_product_attention<Queries, KVPairs, Hidden> attention;
  auto const q = dt::ones<float>(Batch(1), Queries(2), Hidden(4));
  auto const k = dt::ones<float>(Batch(1), KVPairs(3), Hidden(4));
  (void)attention(q, k, k);
  CHECK(attention.attention_weights<Batch, Queries, KVPairs>().extents() == std::array<index_t, 3>{1, 2, 3});
  std::string message;
  std::thread other([&] {
    try {
      (void)attention.attention_weights<Batch, Queries, KVPairs>();
    } catch (dt::value_error const& e) {
      message = e.what();
    }
  });
  other.join();
  CHECK(message == "dot_product_attention: no attention weights yet; they are kept by each call of the module, "
                   "per thread");
  // A copy of the module keeps the weights of the calls made on the original.
  auto const copy = attention;
  CHECK(copy.attention_weights<Batch, Queries, KVPairs>().extents() == std::array<index_t, 3>{1, 2, 3});
}
