#pragma once
/// @file
/// @brief The engine of reverse-mode differentiation: per-tensor state, the
/// recorded nodes, grad mode, and the backward pass.
///
/// Every operation on tensors that require gradients records one node: a
/// closure that, given the gradient of its result, hands gradients to its
/// operands.  The recorded graph is owned by the tensors (a tensor's state
/// holds its node, a node holds its operands' states), so it lives exactly
/// as long as the results that need it and is freed with them; there is no
/// global tape to clear.  `backward()` orders the nodes reachable from the
/// result (a depth-first post-order, which is the recording order restricted
/// to what matters) and runs them in reverse.
///
/// This header knows no tensor type: a gradient is a dense, row-major
/// buffer of the backend's storage in the owner's extents, kept type-erased
/// (the storage, its first element and a tag of the storage type); the
/// tensor reads it back as a tensor of its own type (`grad()`).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace dimtensor::autograd {

class node;

/// @brief The autograd state of one tensor.  Shared by the copies of a
/// tensor handle (they are the same tensor), not by its views (a view is the
/// result of an operation, with a node of its own).
struct tensor_state {
  /// Whether gradients flow to (leaf) or through (result) this tensor.
  bool requires_grad = false;
  /// Whether a result keeps its gradient after backward (`retain_grad()`).
  bool retains_grad = false;
  /// The operation that made this tensor; null for a leaf.
  std::shared_ptr<node> grad_fn;
  /// The gradient's storage (`Backend::storage<T>`), or null: a dense,
  /// row-major buffer of the owner's extents.
  std::shared_ptr<void> grad;
  /// The gradient's first element (of type T, in the backend's memory).
  void* grad_data = nullptr;
  /// Identifies the storage type in `grad` (a guard for the typed readers).
  void const* grad_type = nullptr;
  /// Whether this leaf is a parameter kept equal on the ranks of a
  /// data-parallel group (set by `dist::broadcast_parameters`): a backward
  /// pass that reaches it leaves its gradient partial.
  bool replicated = false;
  /// @brief Whether the gradient is this rank's share only (a replicated
  /// leaf's, after a backward pass), until `dist::all_reduce_gradients`
  /// combines the ranks' shares.  The optimizers refuse a partial gradient.
  bool grad_partial = false;

  /// Drops the gradient.
  void clear_grad() noexcept {
    grad.reset();
    grad_data = nullptr;
    grad_type = nullptr;
    grad_partial = false;
  }

  /// Releases the node, and the graph behind it, without recursion: a
  /// chain of any length is freed in a loop (detail::release).
  ~tensor_state();
};

/// @brief One recorded operation.
class node {
 public:
  /// A node named after the operation that recorded it.
  explicit node(std::string_view name) noexcept : name_(name) {}
  node(node const&) = delete;
  node& operator=(node const&) = delete;
  virtual ~node() = default;

  /// Hands the gradient of @p out (its `grad`) to the operands.
  virtual void backward(tensor_state const& out) = 0;

  /// The operation's name ("softmax", "contract", …).
  std::string_view name() const noexcept { return name_; }

  /// The states of the operands that require gradients.
  std::vector<std::shared_ptr<tensor_state>> inputs;

 private:
  std::string_view name_;
};

/// A node whose backward is the closure @p F, called with the result's
/// state (whose `grad` holds the result's gradient).
template <class F>
class rule_node final : public node {
 public:
  /// Keeps the closure.
  rule_node(std::string_view name, F f) : node(name), f_(std::move(f)) {}
  /// Calls the closure.
  void backward(tensor_state const& out) override { f_(out); }

 private:
  F f_;
};

namespace detail {
/// @brief Drops @p n, and every node that only it kept alive, in a loop.
///
/// A node holds its operands' states, and a state holds the node that made
/// it, so dropping the last result of a long chain would otherwise recurse
/// once per node (~tensor_state → ~node → ~tensor_state …) and overflow the
/// stack.  The outermost release on a thread keeps a list; a state
/// destroyed while it runs hands its node to that list instead of dropping
/// it, and the loop drops them one at a time.
inline void release(std::shared_ptr<node> n) noexcept {
  thread_local std::vector<std::shared_ptr<node>>* pending = nullptr;
  if (pending != nullptr) {
    pending->push_back(std::move(n));
    return;
  }
  std::vector<std::shared_ptr<node>> list;
  list.push_back(std::move(n));
  pending = &list;
  while (!list.empty()) {
    std::shared_ptr<node> last = std::move(list.back());
    list.pop_back();
    last.reset();  // may push the nodes of the states it held
  }
  pending = nullptr;
}
}  // namespace detail

inline tensor_state::~tensor_state() {
  if (grad_fn) detail::release(std::move(grad_fn));
}

/// A unique address per type: what `tensor_state::grad_type` holds (the
/// tag of the gradient's storage type).
template <class T>
inline constexpr char type_tag = 0;

namespace detail {
inline bool& grad_mode_flag() noexcept {
  thread_local bool on = true;
  return on;
}
}  // namespace detail

/// Whether operations record nodes on this thread (true unless inside `no_grad`).
inline bool is_grad_enabled() noexcept { return detail::grad_mode_flag(); }

/// @brief Turns recording off for its lifetime on this thread (PyTorch's
/// `torch.no_grad()`): evaluation, optimizer steps, loading weights.
class no_grad {
 public:
  no_grad() noexcept : previous_(detail::grad_mode_flag()) { detail::grad_mode_flag() = false; }
  no_grad(no_grad const&) = delete;
  no_grad& operator=(no_grad const&) = delete;
  ~no_grad() { detail::grad_mode_flag() = previous_; }

 private:
  bool previous_;
};

/// @brief Turns recording back on for its lifetime (inside a `no_grad`).
class enable_grad {
 public:
  enable_grad() noexcept : previous_(detail::grad_mode_flag()) { detail::grad_mode_flag() = true; }
  enable_grad(enable_grad const&) = delete;
  enable_grad& operator=(enable_grad const&) = delete;
  ~enable_grad() { detail::grad_mode_flag() = previous_; }

 private:
  bool previous_;
};

/// @brief What a backward pass tells a listener installed on its thread
/// (`install_backward_listener`): the states it will visit, each node once
/// its backward has run (whether or not it had a gradient to hand on), and
/// its end.  Data parallelism listens to start reducing a bucket of
/// gradients as soon as no node left can add to them (dist::data_parallel).
class backward_listener {
 public:
  backward_listener() = default;
  backward_listener(backward_listener const&) = delete;
  backward_listener& operator=(backward_listener const&) = delete;
  virtual ~backward_listener() = default;
  /// The pass will visit @p order (every state, each after those it depends on).
  virtual void begin(std::vector<tensor_state*> const& order) = 0;
  /// The node @p n has handed its gradients on.
  virtual void node_done(node const& n) = 0;
  /// The pass has ended (the gradients of replicated leaves are marked partial).
  virtual void end() = 0;
};

namespace detail {
inline backward_listener*& listener_slot() noexcept {
  thread_local backward_listener* listener = nullptr;
  return listener;
}
}  // namespace detail

/// @brief Makes @p l (or nobody, for null) the listener of this thread's
/// backward passes; returns the one it replaces.
inline backward_listener* install_backward_listener(backward_listener* l) noexcept {
  backward_listener* const previous = detail::listener_slot();
  detail::listener_slot() = l;
  return previous;
}

namespace detail {

/// @brief A set of states by address: open addressing, linear probing,
/// at most half full.  What topological_order needs and no more, so that
/// the engine does not make every file parse `<unordered_set>`.
class state_set {
 public:
  state_set() : slots_(64, nullptr) {}

  /// Adds @p s (not null); whether it was absent.
  bool insert(tensor_state* s) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    return place(slots_, s);
  }

 private:
  static std::size_t hash(tensor_state* s) noexcept {
    // Fibonacci hashing of the address; the low bits are alignment.
    return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(s) >> 4) * 0x9e3779b97f4a7c15ULL);
  }

  bool place(std::vector<tensor_state*>& slots, tensor_state* s) {
    std::size_t const mask = slots.size() - 1;
    for (std::size_t i = hash(s) & mask;; i = (i + 1) & mask) {
      if (slots[i] == s) return false;
      if (slots[i] == nullptr) {
        slots[i] = s;
        ++size_;
        return true;
      }
    }
  }

  void grow() {
    std::vector<tensor_state*> bigger(2 * slots_.size(), nullptr);
    size_ = 0;
    for (tensor_state* s : slots_) {
      if (s != nullptr) place(bigger, s);
    }
    slots_.swap(bigger);
  }

  std::vector<tensor_state*> slots_;
  std::size_t size_ = 0;
};

/// The states reachable from @p root, each after every state it depends on
/// (depth-first post-order).
inline std::vector<tensor_state*> topological_order(tensor_state* root) {
  std::vector<tensor_state*> order;
  state_set seen;
  seen.insert(root);
  std::vector<std::pair<tensor_state*, std::size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    tensor_state* const s = stack.back().first;
    std::size_t const i = stack.back().second;
    if (s->grad_fn && i < s->grad_fn->inputs.size()) {
      ++stack.back().second;
      tensor_state* const next = s->grad_fn->inputs[i].get();
      if (seen.insert(next)) stack.emplace_back(next, 0);
    } else {
      order.push_back(s);
      stack.pop_back();
    }
  }
  return order;
}

/// @brief The backward pass from @p root: @p seed stores the root's
/// gradient, then every node reachable from it runs, results first.
/// Leaves accumulate (their gradients add up over passes, as PyTorch's do);
/// results hold their gradient only during the pass, or, with
/// `retain_grad()`, the last pass's.
template <class Seed>
void run_backward(tensor_state* root, Seed&& seed) {
  std::vector<tensor_state*> const order = topological_order(root);
  for (tensor_state* s : order) {
    if (s->grad_fn) s->clear_grad();
  }
  no_grad const guard;  // the rules' own operations are not recorded
  backward_listener* const listener = listener_slot();
  if (listener != nullptr) listener->begin(order);
  seed();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    tensor_state* const s = *it;
    if (!s->grad_fn) continue;
    if (s->grad) s->grad_fn->backward(*s);
    if (listener != nullptr) listener->node_done(*s->grad_fn);
    if (!s->retains_grad) s->clear_grad();
  }
  for (tensor_state* s : order) {
    if (s->replicated && s->grad) s->grad_partial = true;
  }
  if (listener != nullptr) listener->end();
}

}  // namespace detail
}  // namespace dimtensor::autograd
