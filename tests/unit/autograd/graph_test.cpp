// Tests of autograd/graph.hpp: how the recorded graph is freed.  A chain of
// results used to be freed by recursion (~tensor_state → ~node →
// ~tensor_state …), which overflowed the stack at about 100,000 nodes in a
// release build and 5,000 under ASan at -O0.
#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/dimtensor.hpp>

namespace dt = dimtensor;
namespace ag = dimtensor::autograd;

namespace {
DIMTENSOR_DIM(Feat);

// The state's destructor counts itself, so the test sees the whole chain go.
std::size_t destroyed = 0;
struct counted_state final : ag::tensor_state {
  counted_state() = default;
  counted_state(counted_state const&) = delete;
  counted_state& operator=(counted_state const&) = delete;
  ~counted_state() { ++destroyed; }
};

// A node that keeps its operand alive, as every recorded rule does.
struct keep_alive {
  void operator()(ag::tensor_state const&) const {}
};
using chain_node = ag::rule_node<keep_alive>;
}  // namespace

TEST_CASE("graph: a chain of 10 million recorded nodes is freed without recursion", "[autograd][graph]") {
  constexpr std::size_t length = 10'000'000;
  destroyed = 0;
  std::shared_ptr<ag::tensor_state> last = std::make_shared<counted_state>();
  for (std::size_t i = 0; i < length; ++i) {
    auto next = std::make_shared<counted_state>();
    next->requires_grad = true;
    next->grad_fn = std::make_shared<chain_node>("chain", keep_alive{});
    next->grad_fn->inputs.push_back(std::move(last));
    last = std::move(next);
  }
  CHECK(destroyed == 0);
  last.reset();  // the whole chain goes here, in a loop
  CHECK(destroyed == length + 1);
}

TEST_CASE("graph: a tree freed from its root releases every node once", "[autograd][graph]") {
  // Each node holds two operands that hold chains of their own: the loop
  // must drop nodes handed to it while it runs, and each exactly once.
  destroyed = 0;
  auto chain = [](std::size_t length) {
    std::shared_ptr<ag::tensor_state> s = std::make_shared<counted_state>();
    for (std::size_t i = 0; i < length; ++i) {
      auto next = std::make_shared<counted_state>();
      next->grad_fn = std::make_shared<chain_node>("chain", keep_alive{});
      next->grad_fn->inputs.push_back(std::move(s));
      s = std::move(next);
    }
    return s;
  };
  auto root = std::make_shared<counted_state>();
  root->grad_fn = std::make_shared<chain_node>("join", keep_alive{});
  root->grad_fn->inputs.push_back(chain(300'000));
  root->grad_fn->inputs.push_back(chain(200'000));
  auto const shared = chain(100'000);
  root->grad_fn->inputs.push_back(shared);  // also held outside: must survive the root
  root.reset();
  CHECK(destroyed == 300'001 + 200'001 + 1);
  REQUIRE(shared);
  CHECK(shared->grad_fn->inputs.size() == 1);
}

TEST_CASE("graph: a running total over 200k steps is freed with it", "[autograd][graph]") {
  // What a training loop does when it keeps `total = total + loss`.
  dt::tensor<double, Feat> w{0.5, -0.25};
  w.requires_grad_();
  {
    dt::tensor<double> total = dt::sum(w * 0.0);
    for (int step = 0; step < 200'000; ++step) total = total + dt::sum(w);
    total.backward();
  }  // the last handle to the chain goes here
  CHECK(w.grad().data()[0] == 200'000.0);
  CHECK(w.grad().data()[1] == 200'000.0);
  CHECK(w.is_leaf());
}

TEST_CASE("graph: the visited set of the backward order keeps each state once, through growth",
          "[autograd][graph]") {
  std::vector<ag::tensor_state> states(5000);
  ag::detail::state_set seen;
  std::size_t added = 0;
  for (auto& s : states) added += seen.insert(&s) ? 1 : 0;
  CHECK(added == states.size());
  std::size_t again = 0;
  for (auto& s : states) again += seen.insert(&s) ? 1 : 0;
  CHECK(again == 0);
}

TEST_CASE("graph: backward reaches a state shared by many paths once", "[autograd][graph]") {
  // x feeds 300 products whose sum is the result: x's gradient is the sum
  // of the 300 factors, each counted once.
  auto x = dt::full<double>(3.0, Feat(1)).requires_grad_();
  auto total = dt::zeros<double>(Feat(1));
  double expected = 0;
  for (int i = 1; i <= 300; ++i) {
    total = total + x * static_cast<double>(i);
    expected += i;
  }
  dt::sum(total).backward();
  CHECK(x.grad()(Feat(0)) == expected);
}
