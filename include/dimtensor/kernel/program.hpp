#pragma once
/// @file
/// @brief A recorded elementwise program's passes as data for a kernel: its
/// steps in recording order (operands before the steps that read them),
/// what each step's gradient sends to its operands, and the dense buffers
/// it reads and writes.
///
/// The autograd interpreter (autograd/program.hpp) works the plan out once
/// per pass; the CPU runtime's kernel (src/cpu/kernels.inl) then runs
/// the whole pass block by block: per block of elements, the values the
/// rules read, then every step's gradient from the result's back to the
/// leaves, so each tensor is read and written once, whatever the number of
/// steps.  The forward pass of an expression of costly functions runs the
/// same way (tensor/expression.hpp: evaluate_in_runtime), at the vector
/// width of the CPU it runs on.

#include <array>
#include <cstdint>

#include <dimtensor/config.hpp>

namespace dimtensor::kernel {

/// What a step's gradient does for one of its operands.
enum class gradient_send : std::uint8_t {
  none,   ///< nothing (no gradient flows there, or a `where`'s condition)
  alias,  ///< the operand's gradient is the step's (it passes, and nothing else adds to it)
  set,    ///< writes the operand's gradient (the first of several, or a rule's)
  add     ///< adds to the operand's gradient (an earlier step wrote it)
};

/// One step of a program's backward pass.
struct program_op {
  /// The step's autograd::op_code (0: a leaf).
  std::uint8_t code = 0;
  /// The number of operands.
  std::uint8_t arity = 0;
  /// Whether the step's value is computed (a rule reads it, or a step whose value is).
  bool value = false;
  /// Whether a gradient reaches the step.
  bool reached = false;
  /// The operands' steps (earlier ones).
  std::array<std::uint32_t, 3> args{};
  /// What the step's gradient does per operand.
  std::array<gradient_send, 3> send{};
  /// For a leaf that gradients reach: the output buffer it writes, else -1.
  std::int32_t output = -1;
  /// For such a leaf: whether it adds to the buffer (an earlier leaf wrote it).
  bool output_adds = false;
};

/// @brief One pass of a program over `size` elements (all buffers dense,
/// at the result's extents): backward from `grad` into `outputs`, or
/// forward into `result`.
template <class T>
struct program_pass {
  /// Elements of the result.
  index_t size = 0;
  /// The result's gradient.
  T const* grad = nullptr;
  /// The steps, `count` of them; the last is the result.
  program_op const* ops = nullptr;
  /// The number of steps.
  std::uint32_t count = 0;
  /// Per step: a leaf's values when the pass reads them (null: the scalar).
  T const* const* inputs = nullptr;
  /// Per step: a scalar leaf's value.
  T const* scalars = nullptr;
  /// Per step, three per step: each operand's factor k and addend a: the
  /// pass reads the operand's values x as x k + a, and multiplies the
  /// gradient it sends that operand by k (1 and -0: none; steps x * c and
  /// x + c folded into their readers, autograd/program.hpp); null: none
  /// anywhere.
  T const* factors = nullptr;
  /// The addends, as `factors` (null with it).
  T const* addends = nullptr;
  /// The gradient buffers the leaves write.
  T* const* outputs = nullptr;
  /// For a forward pass: where the result's values go.
  T* result = nullptr;
};

}  // namespace dimtensor::kernel
