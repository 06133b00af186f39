// One instruction-set level of the CPU kernels (dimtensor/backends/cpu/dispatch.hpp),
// included by src/cpu/kernels_<level>.cpp after it defines
//   DIMTENSOR_CPU_ISA_NAMESPACE   the level's namespace (isa_baseline, isa_avx2, isa_avx512),
//   DIMTENSOR_SIMD_LANES          the floats of one register (4, 8, 16),
//   DIMTENSOR_CPU_ISA_LEVEL       the isa_level enumerator,
// and, for a level above the baseline, DIMTENSOR_CPU_ISA_PUSH and
// DIMTENSOR_CPU_ISA_POP: the pragmas that compile what lies between them
// for the level's instruction set.
//
// Everything that is not a kernel of the level is included first, outside
// the pragmas (and the autograd interpreter's header after the kernel
// headers), so that it is compiled for the baseline: the standard
// library's and the shared headers' inline functions, which the linker
// may pick from any object, never hold wider instructions (the test
// runtime.isa_objects checks it).  The kernel headers, included between
// the pragmas, put all their code in the level's namespace (reduce.hpp's
// public backend_* functions are templates that no level instantiates).

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/backends/cpu/allocator.hpp>
#include <dimtensor/backends/cpu/blas.hpp>
#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>
#include <dimtensor/backends/cpu/storage.hpp>
#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/kernel/blas_layout.hpp>
#include <dimtensor/kernel/math.hpp>
#include <dimtensor/kernel/philox.hpp>
#include <dimtensor/kernel/program.hpp>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif
#include <dimtensor/kernel/reduce_identity.hpp>

// None of the kernel headers may have come in above: its code would be the
// baseline's under the level's name.
#if defined(DIMTENSOR_BACKENDS_CPU_ATTENTION_HPP) || defined(DIMTENSOR_BACKENDS_CPU_REDUCE_HPP) ||  \
    defined(DIMTENSOR_BACKENDS_CPU_SIMD_HPP) || defined(DIMTENSOR_BACKENDS_CPU_SOFTMAX_HPP) || \
    defined(DIMTENSOR_BACKENDS_CPU_LAYER_NORM_HPP)
#error "src/cpu/kernels.inl: a CPU kernel header was included before the level's target pragma"
#endif

#if defined(DIMTENSOR_CPU_ISA_PUSH)
DIMTENSOR_CPU_ISA_PUSH
#endif

#include <dimtensor/backends/cpu/attention.hpp>
#include <dimtensor/backends/cpu/layer_norm.hpp>
#include <dimtensor/backends/cpu/reduce.hpp>
#include <dimtensor/backends/cpu/simd.hpp>
#include <dimtensor/backends/cpu/softmax.hpp>

#if defined(DIMTENSOR_CPU_ISA_POP)
DIMTENSOR_CPU_ISA_POP
#endif

// The autograd interpreter's function objects, for its loops below: after
// the kernel headers (it includes the whole CPU backend, softmax.hpp and
// reduce.hpp among them, which must first be included under the pragmas).
#include <dimtensor/autograd/program.hpp>

#if defined(DIMTENSOR_CPU_ISA_PUSH)
DIMTENSOR_CPU_ISA_PUSH
#endif

namespace dimtensor::backends::cpu {
inline namespace DIMTENSOR_CPU_ISA_NAMESPACE {
namespace level {

// The table's entries: the kernels with backend_*'s arguments.
template <class T>
void softmax(T const* in, T* out, index_t outer, index_t n, index_t inner) {
  softmax_rows<false, void>(in, out, outer, n, inner, nullptr, 1, T(0));
}
template <class T>
void log_softmax(T const* in, T* out, index_t outer, index_t n, index_t inner) {
  softmax_rows<true, void>(in, out, outer, n, inner, nullptr, 1, T(0));
}
template <class T, class L>
void masked_softmax(T const* in, T* out, index_t outer, index_t n, index_t inner, L const* lengths, index_t repeat,
                    T masked_value) {
  softmax_rows<false, L>(in, out, outer, n, inner, lengths, repeat, masked_value);
}
template <class T>
void softmax_backward(T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner) {
  softmax_backward_rows<false, void>(y, g, dx, outer, n, inner, nullptr, 1);
}
template <class T>
void log_softmax_backward(T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner) {
  softmax_backward_rows<true, void>(y, g, dx, outer, n, inner, nullptr, 1);
}
template <class T, class L>
void masked_softmax_backward(T const* y, T const* g, T* dx, index_t outer, index_t n, index_t inner, L const* lengths,
                             index_t repeat) {
  softmax_backward_rows<false, L>(y, g, dx, outer, n, inner, lengths, repeat);
}

/// One pass of a function object over dense operands of n elements.
template <class T>
struct dense_pass {
  T* out;
  index_t n;
  template <class F, class... P>
  void operator()(F f, P const*... ps) const {
    parallel_for(n, 1, [o = out, f, ps...](index_t begin, index_t end) {
      DIMTENSOR_SIMD
      for (index_t i = begin; i < end; ++i) o[i] = f(ps[i]...);
    });
  }
};

template <class T>
void elementwise_step(T* out, index_t n, int op, T const* a, T const* b, T const* c) {
  autograd::detail::step_value_pass<T>(dense_pass<T>{out, n}, static_cast<autograd::op_code>(op), a, b, c);
}
template <class T>
void elementwise_derivative(T* out, index_t n, int op, int which, T const* g, T const* a, T const* b) {
  autograd::detail::step_derivative_pass<T>(dense_pass<T>{out, n},
                                            {static_cast<autograd::op_code>(op), which}, g, a, b);
}

/// One pass of a function object over a block of n dense elements (one
/// thread): writes them, or with @p Add adds them to the elements there.
template <class T, bool Add = false>
struct block_pass {
  T* out;
  index_t n;
  template <class F, class... P>
  void operator()(F f, P const*... ps) const {
    T* const o = out;
    if constexpr (Add) {
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) o[i] += f(ps[i]...);
    } else {
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) o[i] = f(ps[i]...);
    }
  }
};

/// @brief block_pass with each operand x read as x k + a (its factor and
/// addend): the steps of a program that multiply by a scalar or add one,
/// folded into the steps that read them (kernel::program_pass::factors).
template <class T, bool Add = false>
struct scaled_block_pass {
  T* out;
  index_t n;
  std::array<T, 3> factors;
  std::array<T, 3> addends;
  template <class F, class... P>
  void operator()(F f, P const*... ps) const {
    run(f, std::index_sequence_for<P...>{}, ps...);
  }

 private:
  template <class F, std::size_t... I, class... P>
  void run(F f, std::index_sequence<I...>, P const*... ps) const {
    T* const o = out;
    T const k[] = {factors[I]...};
    T const a[] = {addends[I]...};
    if constexpr (Add) {
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) o[i] += f((ps[i] * k[I] + a[I])...);
    } else {
      DIMTENSOR_SIMD
      for (index_t i = 0; i < n; ++i) o[i] = f((ps[i] * k[I] + a[I])...);
    }
  }
};

/// The factors and addends of a step's operands
/// (kernel::program_pass::factors), and whether one operand has either.
template <class T>
struct program_scale {
  std::array<T, 3> k{T(1), T(1), T(1)};
  std::array<T, 3> a{T(-0.0), T(-0.0), T(-0.0)};
  bool any = false;
};

/// Every step's program_scale, worked out once per pass.
template <class T>
std::vector<program_scale<T>> program_scales(kernel::program_pass<T> const& p) {
  std::vector<program_scale<T>> out(p.count);
  if (p.factors == nullptr) return out;
  for (std::size_t s = 0; s < out.size(); ++s) {
    program_scale<T>& c = out[s];
    for (std::size_t i = 0; i < 3; ++i) {
      c.k[i] = p.factors[3 * s + i];
      c.a[i] = p.addends[3 * s + i];
      // an addend of +0 is one too: x + 0 is not x where x is -0
      c.any = c.any || c.k[i] != T(1) || !(c.a[i] == T(0) && std::signbit(c.a[i]));
    }
  }
  return out;
}

/// @brief Elements per block of a program's pass that keeps @p slots
/// buffers of one block each: as many as keep them in half of L1 (the
/// other half for the blocks of the tensors it streams through), from 64
/// to 512.  Past L1 each step's pass waits on L2 (a GELU's backward with a
/// buffer per step, 20 of them: 512 floats measured 10% slower than 256).
template <class T>
index_t program_block(std::size_t slots) {
  static constexpr std::size_t budget = std::size_t{16} << 10;
  index_t block = 512;
  while (block > 64 && slots * static_cast<std::size_t>(block) * sizeof(T) > budget) block /= 2;
  return block;
}

/// The blocks of a program's pass a thread takes at a time: the threads
/// take the next chunk as they finish their last (so a thread slowed by
/// another process on its core holds up no other), eight chunks per
/// thread, each long enough (16 blocks at least: 1,024 to 8,192 elements)
/// that the prefetchers follow its streams.
inline index_t program_chunk(index_t blocks) {
  index_t const pieces = 8 * static_cast<index_t>(get_num_threads());
  return std::max<index_t>(16, (blocks + pieces - 1) / pieces);
}

/// No buffer: the step's values are read in place, or not kept.
inline constexpr std::uint32_t no_slot = ~std::uint32_t{0};

/// @brief Which buffer of one block each step of a program's pass keeps
/// (only those it needs, so that more elements fit a block in L1).
struct program_slots {
  /// Per step: its values' buffer (a step the rules read, or a scalar leaf;
  /// not a leaf read in place, nor the forward pass's result).
  std::vector<std::uint32_t> value;
  /// Per step: its gradient's buffer (a step that gradients are written
  /// to; not a leaf whose gradients go straight to its output buffer, nor
  /// one a gradient passes to).
  std::vector<std::uint32_t> grad;
  /// Per output buffer: whether its leaves' gradients are written straight
  /// to it.  Only where that sums them as the leaves' own buffers would
  /// (kept when it is not), which the other backends' interpreter follows:
  /// the last leaf's gradients first, then each other leaf's one gradient
  /// from the last leaf to the first (or the first two the other way
  /// round, one gradient each: the same sum to the bit).
  std::vector<unsigned char> direct;
  /// The number of buffers.
  std::uint32_t count = 0;
};

/// Whether the gradients sent to step @p s of @p p go straight to its
/// output buffer.
template <class T>
bool program_direct(kernel::program_pass<T> const& p, program_slots const& slots, std::uint32_t s) {
  kernel::program_op const& op = p.ops[s];
  return op.code == static_cast<std::uint8_t>(autograd::op_code::leaf) && op.output >= 0 &&
         slots.direct[static_cast<std::size_t>(op.output)] != 0;
}

/// The buffers of a forward (@p backward false) or backward pass of @p p.
template <class T>
program_slots program_slots_of(kernel::program_pass<T> const& p, bool backward) {
  std::uint32_t const m = p.count;
  program_slots slots;
  slots.value.assign(m, no_slot);
  slots.grad.assign(m, no_slot);
  for (std::uint32_t s = 0; s < m; ++s) {
    kernel::program_op const& op = p.ops[s];
    bool const leaf = op.code == static_cast<std::uint8_t>(autograd::op_code::leaf);
    bool const in_place = leaf && p.inputs[s] != nullptr;
    bool const result = !backward && s + 1 == m;
    if (op.value && !in_place && !result) slots.value[s] = slots.count++;
  }
  if (!backward) return slots;
  auto const leaf = [&p](std::uint32_t s) {
    return p.ops[s].code == static_cast<std::uint8_t>(autograd::op_code::leaf);
  };
  // Per output: its leaves from the last, and the leaves its gradients are
  // sent to, in the order the pass sends them.
  std::int32_t outputs = 0;
  for (std::uint32_t s = 0; s < m; ++s) outputs = std::max(outputs, p.ops[s].output + 1);
  std::vector<std::vector<std::uint32_t>> leaves(static_cast<std::size_t>(outputs));
  std::vector<std::vector<std::uint32_t>> sends(static_cast<std::size_t>(outputs));
  slots.direct.assign(static_cast<std::size_t>(outputs), 1);
  for (std::uint32_t s = m; s-- > 0;) {
    kernel::program_op const& op = p.ops[s];
    if (!op.reached) continue;
    if (leaf(s)) {
      if (op.output >= 0) leaves[static_cast<std::size_t>(op.output)].push_back(s);
      continue;
    }
    for (int i = 0; i < op.arity; ++i) {
      kernel::gradient_send const send = op.send[static_cast<std::size_t>(i)];
      std::uint32_t const arg = op.args[static_cast<std::size_t>(i)];
      if (send == kernel::gradient_send::none || !leaf(arg) || p.ops[arg].output < 0) continue;
      auto const o = static_cast<std::size_t>(p.ops[arg].output);
      if (send == kernel::gradient_send::alias) slots.direct[o] = 0;  // the leaf's own pass writes it
      sends[o].push_back(arg);
    }
  }
  for (std::size_t o = 0; o < sends.size(); ++o) {
    std::vector<std::uint32_t> const& l = leaves[o];
    std::vector<std::uint32_t> const& sent = sends[o];
    std::size_t k = 0;
    while (k < sent.size() && !l.empty() && sent[k] == l[0]) ++k;
    bool in_order = k > 0 && sent.size() - k == l.size() - 1 &&
                    std::equal(sent.begin() + static_cast<std::ptrdiff_t>(k), sent.end(), l.begin() + 1);
    if (!in_order && l.size() >= 2 && sent.size() == l.size()) {
      // the first two swapped, one gradient each: a + b is b + a, to the bit
      in_order = sent[0] == l[1] && sent[1] == l[0] && std::equal(sent.begin() + 2, sent.end(), l.begin() + 2);
    }
    if (!in_order) slots.direct[o] = 0;
  }
  for (std::uint32_t s = m; s-- > 0;) {
    kernel::program_op const& op = p.ops[s];
    if (!op.reached || leaf(s)) continue;
    for (int i = 0; i < op.arity; ++i) {
      kernel::gradient_send const send = op.send[static_cast<std::size_t>(i)];
      if (send != kernel::gradient_send::set && send != kernel::gradient_send::add) continue;
      std::uint32_t const arg = op.args[static_cast<std::size_t>(i)];
      if (slots.grad[arg] == no_slot && !program_direct(p, slots, arg)) slots.grad[arg] = slots.count++;
    }
  }
  return slots;
}

/// Fills the buffers (of @p block elements each, from @p buffers) of a
/// program's scalar leaves whose values are computed: once per thread, for
/// every block.
template <class T>
void program_fill_scalars(kernel::program_pass<T> const& p, program_slots const& slots, T* buffers,
                          index_t block) {
  for (std::uint32_t s = 0; s < p.count; ++s) {
    kernel::program_op const& op = p.ops[s];
    if (op.value && op.code == static_cast<std::uint8_t>(autograd::op_code::leaf) && p.inputs[s] == nullptr) {
      T* const slot = buffers + static_cast<std::size_t>(slots.value[s]) * static_cast<std::size_t>(block);
      std::fill(slot, slot + block, p.scalars[s]);
    }
  }
}

/// The values of a program's steps that are computed (`program_op::value`)
/// for the block of @p n elements from element @p i0: a leaf's are read in
/// place (a scalar's buffer was filled by program_fill_scalars), the others
/// go to their buffer (of @p block elements each, from @p buffers); @p vp
/// gets each step's.  With @p last, the last step's values go there.
template <class T>
void program_block_values(kernel::program_pass<T> const& p, program_slots const& slots,
                          program_scale<T> const* scales, T* buffers, index_t block, index_t i0, index_t n,
                          T const** vp, T* last = nullptr) {
  std::uint32_t const m = p.count;
  for (std::uint32_t s = 0; s < m; ++s) {
    kernel::program_op const& op = p.ops[s];
    if (!op.value) continue;
    bool const to_last = last != nullptr && s + 1 == m;
    T* const slot = to_last ? last
                            : slots.value[s] == no_slot
                                ? nullptr
                                : buffers + static_cast<std::size_t>(slots.value[s]) * static_cast<std::size_t>(block);
    if (op.code == static_cast<std::uint8_t>(autograd::op_code::leaf)) {
      if (p.inputs[s] != nullptr) {
        T const* const in = p.inputs[s] + i0;
        vp[s] = in;
        if (to_last) {
          for (index_t i = 0; i < n; ++i) slot[i] = in[i];
        }
      } else {
        if (to_last) std::fill(slot, slot + n, p.scalars[s]);
        vp[s] = slot;
      }
      continue;
    }
    T const* const a = vp[op.args[0]];
    T const* const bb = op.arity > 1 ? vp[op.args[1]] : a;
    T const* const c = op.arity > 2 ? vp[op.args[2]] : a;
    auto const code = static_cast<autograd::op_code>(op.code);
    if (program_scale<T> const& sc = scales[s]; sc.any) {
      autograd::detail::step_value_pass<T>(scaled_block_pass<T>{slot, n, sc.k, sc.a}, code, a, bb, c);
    } else {
      autograd::detail::step_value_pass<T>(block_pass<T>{slot, n}, code, a, bb, c);
    }
    vp[s] = slot;
  }
}

/// @brief A recorded program's forward pass: the last step's values into
/// `p.result`, block by block, every step's values in buffers of one block
/// that stay in cache (so the functions run at this level's vector width
/// whatever the instruction set the caller was compiled for).
template <class T>
void program_forward(kernel::program_pass<T> const& p) {
  std::uint32_t const m = p.count;
  program_slots const slots = program_slots_of(p, false);
  std::vector<program_scale<T>> const scales = program_scales(p);
  index_t const block = program_block<T>(slots.count);
  index_t const blocks = (p.size + block - 1) / block;
  // A thread's buffers (64-byte aligned, the caching allocator's: the
  // passes' loads split no cache line) and the steps' values.
  struct state {
    detail::scratch<T> buffers;
    std::vector<T const*> vp;
    state(kernel::program_pass<T> const& p, program_slots const& slots, index_t block)
        : buffers(static_cast<index_t>(slots.count) * block), vp(p.count, nullptr) {
      program_fill_scalars(p, slots, buffers.data(), block);
    }
  };
  index_t const chunk_blocks = program_chunk(blocks);
  parallel_for_dynamic(
      (blocks + chunk_blocks - 1) / chunk_blocks, chunk_blocks * block * static_cast<index_t>(m) / 4 + 1,
      [&p, &slots, block] { return state(p, slots, block); },
      [&p, &slots, &scales, block, blocks, chunk_blocks](state& st, index_t chunk) {
        index_t const last = std::min(blocks, (chunk + 1) * chunk_blocks);
        for (index_t b = chunk * chunk_blocks; b < last; ++b) {
          index_t const i0 = b * block;
          program_block_values(p, slots, scales.data(), st.buffers.data(), block, i0, std::min(block, p.size - i0),
                               st.vp.data(), p.result + i0);
        }
      });
}

/// @brief A recorded program's backward pass (kernel/program.hpp), block
/// by block: per block of `block` elements, the values the rules read, then
/// the steps' gradients from the result's to the leaves', in buffers of one
/// block that stay in cache; each leaf's gradient goes straight to its
/// output buffer (set by the first of the block's writes there, added to
/// by the others).
template <class T>
void program_backward(kernel::program_pass<T> const& p) {
  std::uint32_t const m = p.count;
  program_slots const slots = program_slots_of(p, true);
  index_t const block = program_block<T>(slots.count);
  auto const stride = static_cast<std::size_t>(block);
  std::vector<program_scale<T>> const scales = program_scales(p);
  index_t const blocks = (p.size + block - 1) / block;
  std::int32_t outputs = 0;
  for (std::uint32_t s = 0; s < m; ++s) outputs = std::max(outputs, p.ops[s].output + 1);
  // A thread's buffers (64-byte aligned), the steps' values and gradients,
  // and per output whether the block's part of it is written.
  struct state {
    detail::scratch<T> scratch;
    std::vector<T const*> vp;
    std::vector<T const*> gp;
    std::vector<unsigned char> written;
    state(kernel::program_pass<T> const& p, program_slots const& slots, index_t block, std::int32_t outputs)
        : scratch(static_cast<index_t>(slots.count) * block),
          vp(p.count, nullptr),
          gp(p.count, nullptr),
          written(static_cast<std::size_t>(outputs)) {
      program_fill_scalars(p, slots, scratch.data(), block);
    }
  };
  auto const make = [&p, &slots, block, outputs] { return state(p, slots, block, outputs); };
  index_t const chunk_blocks = program_chunk(blocks);
  parallel_for_dynamic((blocks + chunk_blocks - 1) / chunk_blocks,
                       chunk_blocks * block * static_cast<index_t>(m) / 4 + 1, make,
                       [&p, &slots, &scales, m, block, stride, blocks, chunk_blocks](state& st, index_t chunk) {
    T* const buffers = st.scratch.data();
    std::vector<T const*>& vp = st.vp;
    std::vector<T const*>& gp = st.gp;
    std::vector<unsigned char>& written = st.written;
    index_t const first = chunk * chunk_blocks;
    index_t const last = std::min(blocks, first + chunk_blocks);
    for (index_t b = first; b < last; ++b) {
      index_t const i0 = b * block;
      index_t const n = std::min(block, p.size - i0);
      program_block_values(p, slots, scales.data(), buffers, block, i0, n, vp.data());
      std::fill(written.begin(), written.end(), static_cast<unsigned char>(0));
      gp[m - 1] = p.grad + i0;
      for (std::uint32_t s = m; s-- > 0;) {
        kernel::program_op const& op = p.ops[s];
        if (!op.reached) continue;
        T const* const g = gp[s];
        if (op.code == static_cast<std::uint8_t>(autograd::op_code::leaf)) {
          if (op.output < 0) continue;
          T* const o = p.outputs[op.output] + i0;
          if (g == o) continue;  // its gradients were written there
          unsigned char& w = written[static_cast<std::size_t>(op.output)];
          if (w != 0) {
            DIMTENSOR_SIMD
            for (index_t i = 0; i < n; ++i) o[i] += g[i];
          } else {
            std::copy(g, g + n, o);
            w = 1;
          }
          continue;
        }
        auto const code = static_cast<autograd::op_code>(op.code);
        std::array<T, 3> const& k = scales[s].k;
        std::array<T, 3> const& add = scales[s].a;
        bool const scaled = scales[s].any;
        for (int i = 0; i < op.arity; ++i) {
          kernel::gradient_send const send = op.send[static_cast<std::size_t>(i)];
          if (send == kernel::gradient_send::none) continue;
          std::uint32_t const arg = op.args[static_cast<std::size_t>(i)];
          if (send == kernel::gradient_send::alias) {
            gp[arg] = g;
            continue;
          }
          // A leaf's gradient goes straight to its output buffer where
          // program_slots_of allows it; the block's first write there sets,
          // the others add.
          kernel::program_op const& to = p.ops[arg];
          bool const direct = program_direct(p, slots, arg);
          T* const dst = direct ? p.outputs[to.output] + i0 : buffers + slots.grad[arg] * stride;
          bool const adds =
              direct ? written[static_cast<std::size_t>(to.output)] != 0 : send == kernel::gradient_send::add;
          if (direct) written[static_cast<std::size_t>(to.output)] = 1;
          call::reads const r = autograd::gradient_reads(code, i);
          // A folded factor c of operand i: the operand reads are c x, and
          // its gradient is c times the rule's (each rule is linear in g,
          // so g is multiplied as it is read).
          T const gk = k[static_cast<std::size_t>(i)];
          if (r == call::reads::passes && gk == T(1)) {
            if (adds) {
              DIMTENSOR_SIMD
              for (index_t e = 0; e < n; ++e) dst[e] += g[e];
            } else {
              std::copy(g, g + n, dst);
            }
          } else if (r == call::reads::passes) {
            if (adds) {
              DIMTENSOR_SIMD
              for (index_t e = 0; e < n; ++e) dst[e] += g[e] * gk;
            } else {
              DIMTENSOR_SIMD
              for (index_t e = 0; e < n; ++e) dst[e] = g[e] * gk;
            }
          } else {
            bool const reads_a = r == call::reads::a || r == call::reads::both;
            bool const reads_b = r == call::reads::b || r == call::reads::both;
            T const* const a = reads_a ? vp[op.args[0]] : r == call::reads::result ? vp[s] : g;
            T const* const bv = reads_b ? vp[op.args[1]] : g;
            if (scaled) {
              std::array<T, 3> const gk3{gk, reads_a ? k[0] : T(1), reads_b ? k[1] : T(1)};
              std::array<T, 3> const ga3{T(-0.0), reads_a ? add[0] : T(-0.0), reads_b ? add[1] : T(-0.0)};
              if (adds) {
                autograd::detail::step_derivative_pass<T>(scaled_block_pass<T, true>{dst, n, gk3, ga3}, {code, i},
                                                          g, a, bv);
              } else {
                autograd::detail::step_derivative_pass<T>(scaled_block_pass<T>{dst, n, gk3, ga3}, {code, i}, g, a,
                                                          bv);
              }
            } else if (adds) {
              autograd::detail::step_derivative_pass<T>(block_pass<T, true>{dst, n}, {code, i}, g, a, bv);
            } else {
              autograd::detail::step_derivative_pass<T>(block_pass<T>{dst, n}, {code, i}, g, a, bv);
            }
          }
          gp[arg] = dst;
        }
      }
    }
  });
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && DIMTENSOR_SIMD_LANES >= 8
/// The high halves of the eight 32-bit products a m (AVX2: two 64-bit
/// multiplies, even and odd lanes).
inline __m256i mul_high(__m256i a, __m256i m) {
  __m256i const even = _mm256_srli_epi64(_mm256_mul_epu32(a, m), 32);
  __m256i const odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  return _mm256_blend_epi32(even, odd, 0xAA);
}

/// Dropout of 32 floats from element 4 g on: eight Philox instances
/// (counters g … g + 7) side by side, kernel::philox4x32's rounds.
inline void dropout_block(float const* in, float* out, std::uint64_t g, std::uint32_t k0, std::uint32_t k1,
                          __m256i thr, bool all, __m256 scale) {
  __m256i const m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  __m256i const m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(g))),
                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  // the high word of the counter: g + l carries into it only past 2^32 groups
  __m256i c1 = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(g >> 32)));
  if (static_cast<std::uint32_t>(g) > 0xFFFFFFF8u) {
    alignas(32) std::uint32_t hi[8];
    for (std::uint32_t l = 0; l < 8; ++l) hi[l] = static_cast<std::uint32_t>((g + l) >> 32);
    c1 = _mm256_load_si256(reinterpret_cast<__m256i const*>(hi));
  }
  __m256i c2 = _mm256_setzero_si256();
  __m256i c3 = _mm256_setzero_si256();
  for (int round = 0; round < 10; ++round) {
    __m256i const kv0 = _mm256_set1_epi32(static_cast<int>(k0));
    __m256i const kv1 = _mm256_set1_epi32(static_cast<int>(k1));
    __m256i const hi0 = mul_high(c0, m0);
    __m256i const lo0 = _mm256_mullo_epi32(c0, m0);
    __m256i const hi1 = mul_high(c2, m1);
    __m256i const lo1 = _mm256_mullo_epi32(c2, m1);
    c0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), kv0);
    c2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), kv1);
    c1 = lo1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  // words by instance: [w0 w1 w2 w3] of instance l are elements 4 l … 4 l + 3
  __m256i const a = _mm256_unpacklo_epi32(c0, c1);
  __m256i const b = _mm256_unpacklo_epi32(c2, c3);
  __m256i const a2 = _mm256_unpackhi_epi32(c0, c1);
  __m256i const b2 = _mm256_unpackhi_epi32(c2, c3);
  __m256i const i04 = _mm256_unpacklo_epi64(a, b);
  __m256i const i15 = _mm256_unpackhi_epi64(a, b);
  __m256i const i26 = _mm256_unpacklo_epi64(a2, b2);
  __m256i const i37 = _mm256_unpackhi_epi64(a2, b2);
  __m256i const words[4] = {_mm256_permute2x128_si256(i04, i15, 0x20), _mm256_permute2x128_si256(i26, i37, 0x20),
                            _mm256_permute2x128_si256(i04, i15, 0x31), _mm256_permute2x128_si256(i26, i37, 0x31)};
  __m256i const bias = _mm256_set1_epi32(static_cast<int>(0x80000000u));
  for (int v = 0; v < 4; ++v) {
    // w < threshold, unsigned: signed after flipping the top bit
    __m256i const keep = all ? _mm256_set1_epi32(-1)
                             : _mm256_cmpgt_epi32(thr, _mm256_xor_si256(words[v], bias));
    __m256 const m = _mm256_and_ps(_mm256_castsi256_ps(keep), scale);
    _mm256_storeu_ps(out + 8 * v, _mm256_mul_ps(_mm256_loadu_ps(in + 8 * v), m));
  }
}
#endif

/// Dropout's mask applied to n elements (kernel/philox.hpp), threads
/// splitting the elements at multiples of 32; on AVX2 eight Philox
/// instances at once.
template <class T>
void dropout(T const* in, T* out, index_t n, std::uint64_t key, std::uint64_t threshold, T scale) {
  parallel_for((n + 31) / 32, 256, [=](index_t first, index_t last) {
    index_t const begin = 32 * first;
    index_t const end = std::min(n, 32 * last);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && DIMTENSOR_SIMD_LANES >= 8
    if constexpr (std::is_same_v<T, float>) {
      bool const all = threshold >= (std::uint64_t{1} << 32);
      __m256i const thr = _mm256_set1_epi32(static_cast<int>(static_cast<std::uint32_t>(threshold) ^ 0x80000000u));
      __m256 const s = _mm256_set1_ps(scale);
      index_t i = begin;
      for (; i + 32 <= end; i += 32) {
        dropout_block(in + i, out + i, static_cast<std::uint64_t>(i) / 4, static_cast<std::uint32_t>(key),
                      static_cast<std::uint32_t>(key >> 32), thr, all, s);
      }
      kernel::dropout_range(in, out, i, end, key, threshold, scale);
      return;
    }
#endif
    kernel::dropout_range(in, out, begin, end, key, threshold, scale);
  });
}

template <class T>
inline constexpr level_kernels<T> table{
    &sum_rows<T, T>,
    &mean_rows<T>,
    &max_rows<T>,
    &min_rows<T>,
    &softmax<T>,
    &log_softmax<T>,
    &masked_softmax<T, std::int32_t>,
    &masked_softmax<T, std::int64_t>,
    &softmax_backward<T>,
    &log_softmax_backward<T>,
    &masked_softmax_backward<T, std::int32_t>,
    &masked_softmax_backward<T, std::int64_t>,
    &elementwise_step<T>,
    &elementwise_derivative<T>,
    &program_backward<T>,
    &program_forward<T>,
    &layer_norm_rows<T>,
    &layer_norm_backward_rows<T>,
    &dropout<T>,
    &attention_forward<T>,
    &attention_backward<T>,
    &additive_scores_forward<T>,
    &additive_scores_backward<T>,
};

}  // namespace level
}  // namespace DIMTENSOR_CPU_ISA_NAMESPACE
}  // namespace dimtensor::backends::cpu

#if defined(DIMTENSOR_CPU_ISA_POP)
DIMTENSOR_CPU_ISA_POP
#endif

namespace dimtensor::backends::cpu {

template <>
level_kernels<float> const& kernels_of<isa_level::DIMTENSOR_CPU_ISA_LEVEL, float>() noexcept {
  return DIMTENSOR_CPU_ISA_NAMESPACE::level::table<float>;
}

template <>
level_kernels<double> const& kernels_of<isa_level::DIMTENSOR_CPU_ISA_LEVEL, double>() noexcept {
  return DIMTENSOR_CPU_ISA_NAMESPACE::level::table<double>;
}

}  // namespace dimtensor::backends::cpu
