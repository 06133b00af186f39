#pragma once
/// @file
/// @brief Gradients as dense buffers, and lazy elementwise expressions
/// recorded as data: a small program of function codes and operand slots,
/// run backward by one interpreter per backend and element type.
///
/// Nothing here knows a dims list or an expression type.  The typed code
/// that records (autograd/propagate.hpp) flattens an expression tree into a
/// `program_node<B, T>`: its leaves (tensors, scalars, and operands of
/// another element type, read through a conversion) bound to the result's
/// extents, padded to `kernel::max_rank`, and one step per function.  The
/// backward pass walks the tree from the result, depth first and operand by
/// operand (the order in which the gradients reach the leaves, hence how
/// they add up, is the tree's), computes each operand's gradient with the
/// function's local derivative over dense buffers of the result's extents,
/// and sums a leaf's gradient over the positions it was broadcast over.
/// Values of inner steps are computed when a rule needs them, once.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <dimtensor/autograd/graph.hpp>
#include <dimtensor/backends/backend.hpp>
#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/kernel/call.hpp>
#include <dimtensor/kernel/evaluator.hpp>
#include <dimtensor/kernel/layout.hpp>
#include <dimtensor/kernel/math.hpp>
#include <dimtensor/kernel/program.hpp>

namespace dimtensor::autograd {

/// Throws `value_error`: recording @p what of rank @p rank, above
/// kernel::max_rank, is not supported (evaluating it without gradients is).
[[noreturn]] inline void throw_rank_not_recorded(std::string_view what, std::size_t rank) {
  throw value_error("backward: gradients through " + std::string(what) + " of rank " + std::to_string(rank) +
                    " are not supported (at most " + std::to_string(kernel::max_rank) +
                    " dims; the same without gradients works)");
}

/// Throws `value_error`: a gradient reached an elementwise function without one.
[[noreturn]] inline void throw_no_rule() {
  throw value_error(
      "backward: a floating-point value passed through an elementwise function without a gradient "
      "(a comparison or a cast to an integer type) on its way to a tensor that requires grad");
}

/// Extents or strides padded to `kernel::max_rank` (leading extents 1):
/// kernel::padded_extents, the run-time layout's (kernel/layout.hpp).
using kernel::padded_extents;
/// Per padded position, whether a leaf was broadcast over it.
using broadcast_mask = std::array<bool, kernel::max_rank>;

/// @brief The code of a step: a leaf, a cast to the result's own type
/// (`identity`: the gradient passes), a function without a gradient
/// (`no_rule`), or a function of `call::recorded_functions`, whose code is
/// `first_function` plus its place in that list.
enum class op_code : std::uint8_t {
  leaf,           ///< a leaf (tensor or scalar), no function
  identity,       ///< a cast to the result's element type
  no_rule,        ///< a function without a gradient
  first_function  ///< the first of call::recorded_functions
};

namespace detail {

/// The number of functions a recorded program knows.
inline constexpr std::size_t function_count = boost::mp11::mp_size<call::recorded_functions>::value;
static_assert(static_cast<std::size_t>(op_code::first_function) + function_count <= 256,
              "op_code holds the codes of the recorded functions in one byte");

/// The code of the function @p I of `call::recorded_functions`.
template <std::size_t I>
inline constexpr op_code function_code = static_cast<op_code>(static_cast<std::size_t>(op_code::first_function) + I);

/// The number of operands of a function object of `call::recorded_functions`.
template <class F>
inline constexpr int arity_of = std::is_invocable_v<F, double>           ? 1
                                : std::is_invocable_v<F, double, double> ? 2
                                                                         : 3;

/// The function F's value from the operands a, b, c (a `where`'s condition,
/// in a, is tested against 0).
template <class F, class T>
DIMTENSOR_HOST_DEVICE T apply_function(T a, T b, T c) {
  if constexpr (arity_of<F> == 1)
    return F{}(a);
  else if constexpr (arity_of<F> == 2)
    return F{}(a, b);
  else
    return F{}(a, b, c);
}

/// The gradient of F's operand @p which.
template <class F, class T>
DIMTENSOR_HOST_DEVICE T apply_gradient(int which, T g, T a, T b) {
  if (which == 0) return F::template gradient<0>(g, a, b);
  if constexpr (arity_of<F> >= 2) {
    if (which == 1) return F::template gradient<1>(g, a, b);
  }
  if constexpr (arity_of<F> >= 3) return F::template gradient<2>(g, a, b);
  return g;
}

template <class T, std::size_t... I>
DIMTENSOR_HOST_DEVICE T value_by_code(std::index_sequence<I...>, op_code op, T a, T b, T c) {
  T r = a;
  (void)((op == function_code<I> &&
          (r = apply_function<boost::mp11::mp_at_c<call::recorded_functions, I>>(a, b, c), true)) ||
         ...);
  return r;
}

template <class T, std::size_t... I>
DIMTENSOR_HOST_DEVICE T gradient_by_code(std::index_sequence<I...>, op_code op, int which, T g, T a, T b) {
  T r = g;
  (void)((op == function_code<I> &&
          (r = apply_gradient<boost::mp11::mp_at_c<call::recorded_functions, I>>(which, g, a, b), true)) ||
         ...);
  return r;
}

}  // namespace detail

/// The code of a function object (`no_rule` for those without a gradient).
template <class Op>
inline constexpr op_code code_of =
    boost::mp11::mp_find<call::recorded_functions, Op>::value < detail::function_count
        ? detail::function_code<boost::mp11::mp_find<call::recorded_functions, Op>::value>
        : op_code::no_rule;
/// @cond
template <class To>
inline constexpr op_code code_of<call::cast<To>> = op_code::identity;
/// @endcond

/// @brief What the gradient of operand @p which of a step of code @p op
/// reads (`call::reads`); a leaf's, a cast's or a function's without a
/// gradient: `passes`.
inline call::reads gradient_reads(op_code op, int which) {
  std::size_t const i = static_cast<std::size_t>(op) - static_cast<std::size_t>(op_code::first_function);
  if (op < op_code::first_function || i >= detail::function_count) return call::reads::passes;
  return boost::mp11::mp_with_index<detail::function_count>(
      i, [&](auto I) { return boost::mp11::mp_at_c<call::recorded_functions, I>::gradient_reads(which); });
}

namespace detail {

/// The value of one step from its operands' values (a `where`'s condition
/// is read as nonzero); a cast to the result's type is its operand.
template <class T>
struct step_value {
  op_code op;
  DIMTENSOR_HOST_DEVICE T operator()(T a, T b, T c) const {
    return value_by_code(std::make_index_sequence<function_count>{}, op, a, b, c);
  }
};

/// The gradient of operand @p which of one step, from the result's
/// gradient g and the operands' values a and b (a `where`'s condition in a).
template <class T>
struct step_derivative {
  op_code op;
  int which;
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a, T b) const {
    return gradient_by_code(std::make_index_sequence<function_count>{}, op, which, g, a, b);
  }
};

/// Reads @p p as a contiguous rank-1 operand.
template <class T>
DIMTENSOR_HOST_DEVICE dimtensor::detail::strided_evaluator<T, 1> dense(T const* p) {
  return {p, p, {1}, true};
}

/// @brief The value of one step by a loop of its own function: calls
/// `pass(f, a…)` with the function object f of @p op and the operands it
/// reads (dense, at the result's extents). The CPU's interpreter
/// (program_node, and the runtime's level kernels,
/// backends/cpu/dispatch.hpp) runs it: a loop that vectorizes per step.
template <class T, class Pass>
void step_value_pass(Pass const& pass, op_code op, T const* a, T const* b, T const* c) {
  std::size_t const i = static_cast<std::size_t>(op) - static_cast<std::size_t>(op_code::first_function);
  if (op < op_code::first_function || i >= function_count) return pass(step_value<T>{op}, a, b, c);
  boost::mp11::mp_with_index<function_count>(i, [&](auto I) {
    using F = boost::mp11::mp_at_c<call::recorded_functions, I>;
    if constexpr (arity_of<F> == 1)
      pass(F{}, a);
    else if constexpr (arity_of<F> == 2)
      pass(F{}, a, b);
    else
      pass(F{}, a, b, c);
  });
}

/// The gradient of F's operand Which as a function object.
template <class F, int Which>
struct gradient_fn {
  /// Applies the rule to one element.
  template <class T>
  DIMTENSOR_HOST_DEVICE T operator()(T g, T a, T b) const {
    return F::template gradient<Which>(g, a, b);
  }
};

/// @brief The gradient of operand `f.which` of a step by a loop of its own
/// rule (as step_value_pass): from the result's gradient g and the
/// operands' values a and b (those the rule does not read may be g).
template <class T, class Pass>
void step_derivative_pass(Pass const& pass, step_derivative<T> f, T const* g, T const* a, T const* b) {
  std::size_t const i = static_cast<std::size_t>(f.op) - static_cast<std::size_t>(op_code::first_function);
  if (f.op < op_code::first_function || i >= function_count) return pass(f, g, a, b);
  boost::mp11::mp_with_index<function_count>(i, [&](auto I) {
    using F = boost::mp11::mp_at_c<call::recorded_functions, I>;
    if (f.which == 0) return pass(gradient_fn<F, 0>{}, g, a, b);
    if constexpr (arity_of<F> >= 2) {
      if (f.which == 1) return pass(gradient_fn<F, 1>{}, g, a, b);
    }
    if constexpr (arity_of<F> >= 3) return pass(gradient_fn<F, 2>{}, g, a, b);
  });
}

/// The storage type of a gradient or a buffer of the interpreter.
template <class B, class T>
using storage_of = typename B::template storage<T>;

}  // namespace detail

/// @brief Adds the dense buffer @p v of @p n elements into the gradient of
/// @p s (which it makes, a copy, when there is none).
template <class B, class T>
void add_gradient(tensor_state& s, T const* v, index_t n) {
  using storage_t = detail::storage_of<B, T>;
  if (!s.grad) {
    auto out = std::make_shared<storage_t>(n);
    backend_copy(B{}, out->data(), v, n);
    s.grad_data = out->data();
    s.grad_type = &type_tag<storage_t>;
    s.grad = std::move(out);
  } else {
    // The gradient is dense and its own: each element reads itself only.
    T* const acc = static_cast<T*>(s.grad_data);
    using ev = dimtensor::detail::strided_evaluator<T, 1>;
    backend_assign(
        B{}, acc, std::array<index_t, 1>{n},
        dimtensor::detail::map_evaluator<call::plus, ev, ev>{call::plus{}, {detail::dense<T>(acc), detail::dense(v)}});
  }
}

/// @brief Adds the fresh buffer @p buffer of @p n elements, which nothing
/// else reads, into the gradient of @p s: when there is none, the buffer
/// becomes the gradient (no copy).
template <class B, class T>
void add_gradient(tensor_state& s, std::shared_ptr<detail::storage_of<B, T>> buffer, index_t n) {
  if (!s.grad) {
    s.grad_data = buffer->data();
    s.grad_type = &type_tag<detail::storage_of<B, T>>;
    s.grad = std::move(buffer);
  } else {
    add_gradient<B, T>(s, static_cast<T const*>(buffer->data()), n);
  }
}

/// @brief Sums the dense buffer @p g of padded extents @p ext over the
/// positions @p broadcast (each run of consecutive positions in one pass)
/// and sets their extents to 1; returns the sum's storage (null when there
/// was nothing to sum) and its first element (@p g then).
template <class B, class T>
std::pair<std::shared_ptr<detail::storage_of<B, T>>, T const*> sum_broadcast(T const* g, padded_extents& ext,
                                                                              broadcast_mask const& broadcast) {
  using storage_t = detail::storage_of<B, T>;
  std::shared_ptr<storage_t> current;
  T const* in = g;
  constexpr std::size_t r = kernel::max_rank;
  for (std::size_t p = 0; p < r;) {
    if (!broadcast[p]) {
      ++p;
      continue;
    }
    std::size_t q = p;
    index_t outer = 1, n = 1, inner = 1;
    while (q < r && broadcast[q]) n *= ext[q++];
    for (std::size_t d = 0; d < p; ++d) outer *= ext[d];
    for (std::size_t d = q; d < r; ++d) inner *= ext[d];
    auto next = std::make_shared<storage_t>(outer * inner);
    backend_sum(B{}, in, next->data(), outer, n, inner);
    for (std::size_t d = p; d < q; ++d) ext[d] = 1;
    current = std::move(next);
    in = current->data();
    p = q;
  }
  return {std::move(current), in};
}

/// @brief Adds the dense gradient @p g of padded extents @p ext into the
/// gradient of @p s, summed over the positions @p broadcast.
template <class B, class T>
void accumulate_gradient(tensor_state& s, T const* g, padded_extents ext, broadcast_mask const& broadcast) {
  auto summed = sum_broadcast<B, T>(g, ext, broadcast);
  index_t const n = dimtensor::detail::element_count(ext);
  if (summed.first) {
    add_gradient<B, T>(s, std::move(summed.first), n);  // a fresh sum: it becomes the gradient
  } else {
    add_gradient<B, T>(s, summed.second, n);  // g may be read again: copied
  }
}

/// @brief One leaf of a program: a tensor (of the result's element type or
/// another, read through a conversion) bound to the result's extents, or a
/// scalar.
template <class T>
struct program_leaf {
  /// Keeps the elements alive.
  std::shared_ptr<void const> keep;
  /// The first element (of the leaf's own element type).
  void const* data = nullptr;
  /// Strides over the result's padded extents (0 where broadcast).
  padded_extents strides{};
  /// Whether element i of the result reads element i of the leaf.
  bool flat = false;
  /// Whether the leaf is a scalar (`value`), not elements.
  bool scalar = false;
  /// The scalar's value.
  T value{};
  /// The leaf's autograd state, when gradients flow to it.
  std::shared_ptr<tensor_state> state;
  /// The positions of the result the leaf was broadcast over.
  broadcast_mask broadcast{};
  /// Writes the leaf's values, as T, at the result's extents.
  void (*read)(program_leaf const&, padded_extents const&, T*) = nullptr;
  /// Adds a gradient at the result's extents into the leaf's.
  void (*accumulate)(program_leaf const&, padded_extents const&, T const*) = nullptr;
};

/// One step of a program: a leaf, or a function of earlier steps.
struct program_step {
  /// The function (`op_code::leaf` for a leaf).
  op_code op = op_code::leaf;
  /// The number of operands.
  std::uint8_t arity = 0;
  /// The operands' steps.
  std::array<std::uint32_t, 3> args{};
  /// The leaf's index, for a leaf.
  std::uint32_t leaf = 0;
  /// Whether a gradient flows through this step to some leaf.
  bool needs_grad = false;
};

namespace detail {

/// Reads a leaf of element type U as T at the result's extents.
template <class B, class T, class U>
void read_leaf(program_leaf<T> const& l, padded_extents const& ext, T* out) {
  U const* const data = static_cast<U const*>(l.data);
  dimtensor::detail::strided_evaluator<U, kernel::max_rank> const ev{data, data, l.strides, l.flat};
  if constexpr (std::is_same_v<T, U>) {
    backend_assign(B{}, out, ext, ev);
  } else {
    using map_t =
        dimtensor::detail::map_evaluator<call::cast<T>, dimtensor::detail::strided_evaluator<U, kernel::max_rank>>;
    backend_assign(B{}, out, ext, map_t{call::cast<T>{}, {ev}});
  }
}

/// Hands a gradient at the result's extents to a leaf of element type U
/// (converted first when U is not T).
template <class B, class T, class U>
void accumulate_leaf(program_leaf<T> const& l, padded_extents const& ext, T const* g) {
  if constexpr (std::is_same_v<T, U>) {
    accumulate_gradient<B, T>(*l.state, g, ext, l.broadcast);
  } else {
    index_t const n = dimtensor::detail::element_count(ext);
    auto converted = std::make_shared<storage_of<B, U>>(n);
    using map_t = dimtensor::detail::map_evaluator<call::cast<U>, dimtensor::detail::strided_evaluator<T, 1>>;
    backend_assign(B{}, converted->data(), std::array<index_t, 1>{n}, map_t{call::cast<U>{}, {dense(g)}});
    accumulate_gradient<B, U>(*l.state, static_cast<U const*>(converted->data()), ext, l.broadcast);
  }
}

}  // namespace detail

/// @brief The node of an evaluated elementwise expression (or a copy): the
/// expression as a program, run backward by an interpreter per backend and
/// element type.
template <class B, class T>
class program_node final : public node {
 public:
  /// An empty program named @p name, for a result of padded extents @p ext.
  program_node(std::string_view name, padded_extents const& ext)
      : node(name), ext_(ext), size_(dimtensor::detail::element_count(ext)) {}

  /// Adds a leaf; returns its step.
  std::uint32_t add_leaf(program_leaf<T> l);

  /// Adds a function of earlier steps; returns its step.
  std::uint32_t add_step(op_code op, std::uint8_t arity, std::array<std::uint32_t, 3> const& args);

  /// @brief Writes the program's values to @p out (dense, at the result's
  /// extents) by the runtime's kernel; false, writing nothing, where that
  /// does not apply (another backend or element type, or a leaf that is not
  /// dense at the result's extents).
  bool forward(T* out) const;

  /// Runs the program backward from the result's gradient.
  void backward(tensor_state const& out) override {
    if constexpr (level_loops) {
      if (steps_.size() > 1) return backward_in_blocks(static_cast<T const*>(out.grad_data));
    }
    std::vector<value_slot> values(steps_.size());
    propagate(static_cast<std::uint32_t>(steps_.size() - 1), static_cast<T const*>(out.grad_data), values);
  }

 private:
  using storage_t = detail::storage_of<B, T>;
  struct value_slot {
    std::shared_ptr<storage_t> owned;
    T const* data = nullptr;
  };

  std::shared_ptr<storage_t> buffer() const { return std::make_shared<storage_t>(size_); }

  // One pass of @p f over the dense operands @p ps into @p out (size_ elements).
  template <class F, class... P>
  void map(T* out, F f, P const*... ps) const {
    backend_assign(B{}, out, std::array<index_t, 1>{size_},
                   dimtensor::detail::map_evaluator<F, decltype(detail::dense(ps))...>{f, {detail::dense(ps)...}});
  }

  // Whether each step runs a loop of its own function. On the CPU it does:
  // the operation is chosen once per step and the loop vectorizes (a
  // profile of the Transformer's training put 12% of its time in the loops
  // that switch per element, below; with a loop per operation, an epoch of
  // the Bahdanau model on one thread took 94 ms instead of 119). Other
  // backends keep one kernel for every operation. For float and double the
  // loops are the runtime's, compiled for the CPU's instruction set
  // (backends/cpu/dispatch.hpp).
  static constexpr bool loop_per_operation = std::is_same_v<B, cpu>;
  static constexpr bool level_loops = loop_per_operation && backends::cpu::has_level_kernels<T>;

  // The value of one step from its operands' values.
  void compute_value(T* out, op_code op, T const* a, T const* b, T const* c) const {
    if constexpr (level_loops) {
      backends::cpu::kernels<T>().elementwise_step(out, size_, static_cast<int>(op), a, b, c);
    } else if constexpr (loop_per_operation) {
      detail::step_value_pass<T>([&](auto f, auto const*... ps) { map(out, f, ps...); }, op, a, b, c);
    } else {
      map(out, detail::step_value<T>{op}, a, b, c);
    }
  }

  // The gradient of operand @p which of a step: from the result's gradient
  // g and the operands' values a and b.
  void apply_derivative(T* out, detail::step_derivative<T> f, T const* g, T const* a, T const* b) const {
    if constexpr (level_loops) {
      backends::cpu::kernels<T>().elementwise_derivative(out, size_, static_cast<int>(f.op), f.which, g, a, b);
    } else if constexpr (loop_per_operation) {
      detail::step_derivative_pass<T>([&](auto h, auto const*... ps) { map(out, h, ps...); }, f, g, a, b);
    } else {
      map(out, f, g, a, b);
    }
  }

  // The value of step s at the result's extents, computed once.
  T const* value(std::uint32_t s, std::vector<value_slot>& values) const {
    value_slot& slot = values[s];
    if (slot.data != nullptr) return slot.data;
    program_step const& st = steps_[s];
    if (st.op == op_code::leaf) {
      program_leaf<T> const& l = leaves_[st.leaf];
      if (l.scalar) {
        slot.owned = buffer();
        backend_fill(B{}, slot.owned->data(), size_, l.value);
      } else if (l.flat && l.read == &detail::read_leaf<B, T, T>) {
        slot.data = static_cast<T const*>(l.data);  // already dense at the result's extents
        return slot.data;
      } else {
        slot.owned = buffer();
        l.read(l, ext_, slot.owned->data());
      }
    } else {
      T const* a = value(st.args[0], values);
      T const* b = st.arity > 1 ? value(st.args[1], values) : a;
      T const* c = st.arity > 2 ? value(st.args[2], values) : a;
      slot.owned = buffer();
      compute_value(slot.owned->data(), st.op, a, b, c);
    }
    slot.data = slot.owned->data();
    return slot.data;
  }

  // The whole backward pass by the runtime's kernel (kernel/program.hpp):
  // block by block, each leaf's gradient written once.
  void backward_in_blocks(T const* g) const;

  // The runtime's passes fold the steps that multiply by a scalar or add
  // one into the steps that read them: a step x * c, c * x, x + c, c + x
  // or x - c (c a scalar leaf; x not such a step itself, nor a scalar; not
  // the result) is not run, and a step reading it reads x and multiplies
  // by c or adds c as it loads (its gradient to x, times c).  The values
  // are those of the steps run (x - c is x + -c), but for the rounding of
  // a multiply and an add that the compiler fuses.  A user's GELU,
  // x * 0.5 * (erf(x * 0.7071…) + 1), runs 2 steps instead of 5 forward.
  // Per step: its operands after folding, each one's factor (1: none) and
  // addend (-0: none; x * 1 + -0 is x, -0 and NaN included).
  struct folded_steps {
    std::vector<std::array<std::uint32_t, 3>> args;
    std::vector<std::array<T, 3>> factors;
    std::vector<std::array<T, 3>> addends;
  };
  folded_steps fold_scalar_operands() const;

  // Hands the gradient g of step s to its operands, depth first.
  void propagate(std::uint32_t s, T const* g, std::vector<value_slot>& values) const {
    program_step const& st = steps_[s];
    if (st.op == op_code::leaf) {
      program_leaf<T> const& l = leaves_[st.leaf];
      if (l.state) l.accumulate(l, ext_, g);
      return;
    }
    if (st.op == op_code::no_rule) {
      throw_no_rule();
    }
    for (std::uint8_t i = 0; i < st.arity; ++i) {
      std::uint32_t const arg = st.args[i];
      if (!steps_[arg].needs_grad) continue;
      if (st.op == code_of<call::where> && i == 0) continue;  // the condition
      // Only the operand values the rule reads are computed.
      call::reads const r = gradient_reads(st.op, i);
      if (r == call::reads::passes) {
        propagate(arg, g, values);
        continue;
      }
      T const* a = r == call::reads::a || r == call::reads::both ? value(st.args[0], values)
                   : r == call::reads::result                       ? value(s, values)
                                                                    : g;
      T const* b = r == call::reads::b || r == call::reads::both ? value(st.args[1], values) : g;
      auto grad = buffer();
      apply_derivative(grad->data(), {st.op, i}, g, a, b);
      propagate(arg, grad->data(), values);
    }
  }

  padded_extents ext_;
  index_t size_;
  std::vector<program_step> steps_;
  std::vector<program_leaf<T>> leaves_;
};

// Out of the class body, so not inline: the recording code of every
// expression calls them, and where this file's end declares the instance
// they are compiled once, in the library.
template <class B, class T>
std::uint32_t program_node<B, T>::add_leaf(program_leaf<T> l) {
  program_step s;
  s.leaf = static_cast<std::uint32_t>(leaves_.size());
  s.needs_grad = l.state != nullptr;
  if (l.state) inputs.push_back(l.state);
  leaves_.push_back(std::move(l));
  steps_.push_back(s);
  return static_cast<std::uint32_t>(steps_.size() - 1);
}

template <class B, class T>
void program_node<B, T>::backward_in_blocks(T const* g) const {
  if constexpr (!level_loops) {
    (void)g;  // other backends and types run propagate()
  } else {
    std::size_t const m = steps_.size();
    std::vector<kernel::program_op> ops(m);
    folded_steps const folded = fold_scalar_operands();
    // Which steps a gradient reaches, and how many gradients each receives,
    // from the result's back (operands come before the steps that read them).
    std::vector<std::uint32_t> receives(m, 0);
    ops[m - 1].reached = true;
    for (std::size_t s = m; s-- > 0;) {
      program_step const& st = steps_[s];
      kernel::program_op& op = ops[s];
      op.code = static_cast<std::uint8_t>(st.op);
      op.arity = st.arity;
      op.args = folded.args[s];
      if (!op.reached || st.op == op_code::leaf) continue;
      if (st.op == op_code::no_rule) {
        throw_no_rule();
      }
      for (std::uint8_t i = 0; i < st.arity; ++i) {
        std::uint32_t const arg = op.args[i];
        if (!steps_[arg].needs_grad || (st.op == code_of<call::where> && i == 0)) continue;
        ops[arg].reached = true;
        ++receives[arg];
        call::reads const r = gradient_reads(st.op, i);
        if (r == call::reads::a || r == call::reads::both) ops[op.args[0]].value = true;
        if (r == call::reads::result) op.value = true;
        if (r == call::reads::b || r == call::reads::both) ops[op.args[1]].value = true;
      }
    }
    // What each step sends, in the order the kernel runs them.
    std::vector<std::uint32_t> sent(m, 0);
    for (std::size_t s = m; s-- > 0;) {
      kernel::program_op& op = ops[s];
      if (op.value && steps_[s].op != op_code::leaf) {
        for (std::uint8_t i = 0; i < op.arity; ++i) ops[op.args[i]].value = true;
      }
      if (!op.reached || steps_[s].op == op_code::leaf) continue;
      for (std::uint8_t i = 0; i < op.arity; ++i) {
        std::uint32_t const arg = op.args[i];
        if (!steps_[arg].needs_grad || (steps_[s].op == code_of<call::where> && i == 0)) continue;
        // a folded factor is a rule of its own: g c
        bool const passes =
            gradient_reads(steps_[s].op, i) == call::reads::passes && folded.factors[s][i] == T(1);
        op.send[i] = passes && receives[arg] == 1 ? kernel::gradient_send::alias
                     : sent[arg] == 0             ? kernel::gradient_send::set
                                                  : kernel::gradient_send::add;
        ++sent[arg];
      }
    }
    // The leaves' values the rules read, and one gradient buffer per tensor
    // and reading of it (a tensor read twice alike, as x in x * erf(x), gets
    // one buffer, which its second leaf adds to).
    std::vector<T const*> inputs(m, nullptr);
    std::vector<T> scalars(m, T(0));
    std::vector<std::shared_ptr<storage_t>> keep;
    std::vector<std::shared_ptr<storage_t>> outputs;
    std::vector<T*> output_data;
    std::vector<std::size_t> first_leaf;  // per output buffer, the leaf that owns it
    for (std::size_t s = m; s-- > 0;) {
      program_step const& st = steps_[s];
      if (st.op != op_code::leaf) continue;
      program_leaf<T> const& l = leaves_[st.leaf];
      kernel::program_op& op = ops[s];
      if (op.value) {
        if (l.scalar) {
          scalars[s] = l.value;
        } else if (l.flat && l.read == &detail::read_leaf<B, T, T>) {
          inputs[s] = static_cast<T const*>(l.data);
        } else {
          keep.push_back(buffer());
          l.read(l, ext_, keep.back()->data());
          inputs[s] = keep.back()->data();
        }
      }
      if (!op.reached || !l.state) continue;
      std::size_t o = 0;
      while (o < first_leaf.size()) {
        program_leaf<T> const& f = leaves_[first_leaf[o]];
        if (f.state == l.state && f.accumulate == l.accumulate && f.strides == l.strides && f.flat == l.flat &&
            f.broadcast == l.broadcast)
          break;
        ++o;
      }
      op.output = static_cast<std::int32_t>(o);
      op.output_adds = o < first_leaf.size();
      if (!op.output_adds) {
        first_leaf.push_back(st.leaf);
        outputs.push_back(buffer());
        output_data.push_back(outputs.back()->data());
      }
    }
    kernel::program_pass<T> pass;
    pass.size = size_;
    pass.grad = g;
    pass.ops = ops.data();
    pass.count = static_cast<std::uint32_t>(m);
    pass.inputs = inputs.data();
    pass.scalars = scalars.data();
    pass.factors = folded.factors.front().data();
    pass.addends = folded.addends.front().data();
    pass.outputs = output_data.data();
    if (size_ > 0) backends::cpu::kernels<T>().program_backward(pass);
    keep.clear();
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      program_leaf<T> const& l = leaves_[first_leaf[o]];
      bool broadcast = false;
      for (bool b : l.broadcast) broadcast = broadcast || b;
      if (l.accumulate == &detail::accumulate_leaf<B, T, T> && !broadcast) {
        add_gradient<B, T>(*l.state, std::move(outputs[o]), size_);  // a fresh buffer: it becomes the gradient
      } else {
        l.accumulate(l, ext_, outputs[o]->data());
      }
    }

  }
}

template <class B, class T>
typename program_node<B, T>::folded_steps program_node<B, T>::fold_scalar_operands() const {
  std::size_t const m = steps_.size();
  folded_steps f;
  f.args.resize(m);
  f.factors.assign(m, {T(1), T(1), T(1)});
  f.addends.assign(m, {T(-0.0), T(-0.0), T(-0.0)});
  constexpr std::uint32_t none = ~std::uint32_t{0};
  std::vector<std::uint32_t> base(m, none);      // per folded step: x
  std::vector<T> factor(m, T(1)), addend(m, T(-0.0));  // and x's factor and addend
  auto const scalar = [this](std::uint32_t s) {
    return steps_[s].op == op_code::leaf && leaves_[steps_[s].leaf].scalar;
  };
  for (std::size_t s = 0; s < m; ++s) {
    program_step const& st = steps_[s];
    f.args[s] = st.args;
    if (st.op == op_code::leaf) continue;
    bool read_folded = false;
    for (std::uint8_t i = 0; i < st.arity; ++i) {
      std::uint32_t const arg = st.args[i];
      if (base[arg] == none) continue;
      f.args[s][i] = base[arg];
      f.factors[s][i] = factor[arg];
      f.addends[s][i] = addend[arg];
      read_folded = true;
    }
    bool const times = st.op == code_of<call::multiplies>;
    bool const sum = st.op == code_of<call::plus>;
    bool const difference = st.op == code_of<call::minus>;
    if (s + 1 == m || read_folded || !(times || sum || difference)) continue;
    for (std::uint8_t k = 0; k < 2; ++k) {
      std::uint32_t const c = st.args[k];
      std::uint32_t const x = st.args[1 - k];
      if (!scalar(c) || scalar(x) || (difference && k == 0)) continue;
      T const v = leaves_[steps_[c].leaf].value;
      base[s] = x;
      if (times) factor[s] = v;
      if (sum) addend[s] = v;
      if (difference) addend[s] = -v;
      break;
    }
  }
  return f;
}

template <class B, class T>
bool program_node<B, T>::forward(T* out) const {
  if constexpr (!level_loops) {
    (void)out;
    return false;
  } else {
    std::size_t const m = steps_.size();
    std::vector<kernel::program_op> ops(m);
    std::vector<T const*> inputs(m, nullptr);
    std::vector<T> scalars(m, T(0));
    folded_steps const folded = fold_scalar_operands();
    // the steps the result reads, after folding
    ops[m - 1].value = true;
    for (std::size_t s = m; s-- > 0;) {
      if (!ops[s].value || steps_[s].op == op_code::leaf) continue;
      for (std::uint8_t i = 0; i < steps_[s].arity; ++i) ops[folded.args[s][i]].value = true;
    }
    for (std::size_t s = 0; s < m; ++s) {
      program_step const& st = steps_[s];
      kernel::program_op& op = ops[s];
      op.code = static_cast<std::uint8_t>(st.op);
      op.arity = st.arity;
      op.args = folded.args[s];
      if (st.op == op_code::no_rule) return false;
      if (st.op != op_code::leaf || !op.value) continue;
      program_leaf<T> const& l = leaves_[st.leaf];
      if (l.scalar) {
        scalars[s] = l.value;
      } else if (l.flat && l.read == &detail::read_leaf<B, T, T>) {
        inputs[s] = static_cast<T const*>(l.data);
      } else {
        return false;
      }
    }
    kernel::program_pass<T> pass;
    pass.size = size_;
    pass.ops = ops.data();
    pass.count = static_cast<std::uint32_t>(m);
    pass.inputs = inputs.data();
    pass.scalars = scalars.data();
    pass.factors = folded.factors.front().data();
    pass.addends = folded.addends.front().data();
    pass.result = out;
    if (size_ > 0) backends::cpu::kernels<T>().program_forward(pass);
    return true;
  }
}

template <class B, class T>
std::uint32_t program_node<B, T>::add_step(op_code op, std::uint8_t arity, std::array<std::uint32_t, 3> const& args) {
  program_step s;
  s.op = op;
  s.arity = arity;
  s.args = args;
  for (std::uint8_t i = 0; i < arity; ++i) s.needs_grad = s.needs_grad || steps_[args[i]].needs_grad;
  steps_.push_back(s);
  return static_cast<std::uint32_t>(steps_.size() - 1);
}

/// @brief The node of a view (transpose, permute, unsqueeze, squeeze,
/// rename, slice, split, merge): the source's gradient is the result's,
/// written at `offset + Σ i_k strides[k]` of a dense buffer of the source's
/// @p source_size elements (zeros elsewhere), and added to the source's.
template <class B, class T>
class view_node final : public node {
 public:
  /// The view named @p name of @p source, a result of padded extents @p ext.
  view_node(std::string_view name, std::shared_ptr<tensor_state> source, index_t source_size, padded_extents const& ext,
            padded_extents const& strides, index_t offset)
      : node(name), size_(source_size), ext_(ext), strides_(strides), offset_(offset) {
    inputs.push_back(std::move(source));
  }

  /// Writes the result's gradient into the source's.
  void backward(tensor_state const& out) override {
    T const* const g = static_cast<T const*>(out.grad_data);
    padded_extents const dense = dimtensor::detail::row_major_strides(ext_);
    index_t const n = dimtensor::detail::element_count(ext_);
    bool in_order = offset_ == 0 && n == size_;
    for (std::size_t k = 0; k < kernel::max_rank; ++k) in_order = in_order && (ext_[k] == 1 || strides_[k] == dense[k]);
    if (in_order) {  // the source's elements in the result's order: the gradient as it is
      add_gradient<B, T>(*inputs.front(), g, size_);
      return;
    }
    auto dx = std::make_shared<detail::storage_of<B, T>>(size_);
    if (n < size_) backend_fill(B{}, dx->data(), size_, T(0));
    backend_strided_copy(B{}, dx->data() + offset_, strides_, g, dense, ext_);
    add_gradient<B, T>(*inputs.front(), std::move(dx), size_);
  }

 private:
  index_t size_;
  padded_extents ext_;
  padded_extents strides_;
  index_t offset_;
};

/// @brief The node of a view of @p source (see view_node), made once per
/// backend and element type: what every view's recording calls.
template <class B, class T>
std::shared_ptr<node> make_view_node(std::string_view name, std::shared_ptr<tensor_state> source, index_t source_size,
                                     padded_extents const& ext, padded_extents const& strides, index_t offset) {
  return std::make_shared<view_node<B, T>>(name, std::move(source), source_size, ext, strides, offset);
}

/// @brief The node of a copy (clone, contiguous, a conversion between
/// tensor types): the gradient, of @p n elements, goes to @p source as it is.
template <class B, class T>
std::shared_ptr<node> copy_node(std::string_view name, std::shared_ptr<tensor_state> source, index_t n) {
  padded_extents ext{};
  for (auto& e : ext) e = 1;
  ext[kernel::max_rank - 1] = n;
  auto out = std::make_shared<program_node<B, T>>(name, ext);
  program_leaf<T> l;
  l.state = std::move(source);
  l.read = &detail::read_leaf<B, T, T>;
  l.accumulate = &detail::accumulate_leaf<B, T, T>;
  out->add_leaf(std::move(l));
  return out;
}

}  // namespace dimtensor::autograd

/// @cond INTERNAL
// The gradient buffers, the interpreter's node and leaves, and the view and
// copy nodes, compiled once into dimtensor::runtime for the CPU's float and
// double (src/instances/autograd.cpp defines them): a file calls those copies
// (config.hpp, DIMTENSOR_EXTERN_INSTANCES).
#define DIMTENSOR_AUTOGRAD_INSTANCES(how, B, T)                                                                             \
  how void autograd::add_gradient<B, T>(autograd::tensor_state&, T const*, index_t);                                        \
  how void autograd::add_gradient<B, T>(autograd::tensor_state&, std::shared_ptr<B::storage<T>>, index_t);                  \
  how std::pair<std::shared_ptr<B::storage<T>>, T const*> autograd::sum_broadcast<B, T>(                                    \
      T const*, autograd::padded_extents&, autograd::broadcast_mask const&);                                                \
  how void autograd::accumulate_gradient<B, T>(autograd::tensor_state&, T const*, autograd::padded_extents,                 \
                                               autograd::broadcast_mask const&);                                            \
  how void autograd::detail::read_leaf<B, T, float>(autograd::program_leaf<T> const&, autograd::padded_extents const&,      \
                                                    T*);                                                                    \
  how void autograd::detail::read_leaf<B, T, double>(autograd::program_leaf<T> const&, autograd::padded_extents const&,     \
                                                     T*);                                                                   \
  how void autograd::detail::read_leaf<B, T, std::int32_t>(autograd::program_leaf<T> const&,                                \
                                                           autograd::padded_extents const&, T*);                            \
  how void autograd::detail::read_leaf<B, T, std::int64_t>(autograd::program_leaf<T> const&,                                \
                                                           autograd::padded_extents const&, T*);                            \
  how void autograd::detail::read_leaf<B, T, bool>(autograd::program_leaf<T> const&, autograd::padded_extents const&,       \
                                                   T*);                                                                     \
  how void autograd::detail::accumulate_leaf<B, T, float>(autograd::program_leaf<T> const&,                                 \
                                                          autograd::padded_extents const&, T const*);                       \
  how void autograd::detail::accumulate_leaf<B, T, double>(autograd::program_leaf<T> const&,                                \
                                                           autograd::padded_extents const&, T const*);                      \
  how std::shared_ptr<autograd::node> autograd::copy_node<B, T>(std::string_view, std::shared_ptr<autograd::tensor_state>,  \
                                                                index_t);                                                   \
  how class autograd::program_node<B, T>;                                                                                   \
  how class autograd::view_node<B, T>;                                                                                      \
  how std::shared_ptr<autograd::node> autograd::make_view_node<B, T>(std::string_view,                                      \
                                                                     std::shared_ptr<autograd::tensor_state>, index_t,      \
                                                                     autograd::padded_extents const&,                       \
                                                                     autograd::padded_extents const&, index_t);

namespace dimtensor {
DIMTENSOR_EXTERN_INSTANCES(DIMTENSOR_AUTOGRAD_INSTANCES)
}  // namespace dimtensor
/// @endcond
