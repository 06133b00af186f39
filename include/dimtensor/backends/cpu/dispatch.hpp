#pragma once
/// @file
/// @brief The CPU backend's hot kernels for the machine they run on:
/// dimtensor::runtime carries them for three instruction sets (the x86-64
/// baseline, AVX2 with FMA, AVX-512) and picks one set once, at the first
/// call, by what the CPU reports, as ATen's CPU capability and OpenBLAS's
/// DYNAMIC_ARCH do.
///
/// What is compiled per level: the reductions along a dim (sum, mean, max,
/// min), the autograd interpreter's elementwise loops (with exp, tanh and
/// sigmoid), the fused attention kernels (forward and
/// backward, and additive attention's scores), the softmax family
/// (softmax, log_softmax and the masked softmax, forward and backward) and
/// their vector exponential, for float and double.  Each level is one
/// file of src/cpu/ that compiles the kernel headers (backends/cpu/simd.hpp,
/// softmax.hpp, attention.hpp) under `#pragma GCC target` in a namespace of
/// its own (`DIMTENSOR_CPU_ISA_NAMESPACE`: isa_baseline, isa_avx2,
/// isa_avx512), so that no function compiled for a wider set can stand in
/// for a baseline one at link time (the test runtime.isa_objects checks the
/// objects).  A program built with no flags at all gets the widest level
/// its CPU runs; one built with -march=native gets the same kernels.
///
/// The level can be forced, for tests and comparisons, with the
/// environment variable `DIMTENSOR_CPU_ISA` = baseline, avx2 or avx512 (a
/// level the CPU lacks, or another word, is a value_error at the first
/// kernel call).  `isa_active()` says which level runs.

#include <cstdint>
#include <string_view>
#include <type_traits>

#include <dimtensor/config.hpp>
#include <dimtensor/kernel/attention.hpp>
#include <dimtensor/kernel/program.hpp>

namespace dimtensor::backends::cpu {

/// The instruction sets dimtensor::runtime carries kernels for.
enum class isa_level : int {
  /// x86-64's baseline (SSE2); on other architectures, the compiler's default.
  baseline = 0,
  /// AVX2 with FMA (Intel since Haswell, AMD since Zen).
  avx2 = 1,
  /// AVX-512 F, BW, DQ and VL (Intel since Skylake-SP, AMD since Zen 4).
  avx512 = 2,
};

/// "baseline", "avx2" or "avx512".
std::string_view isa_name(isa_level level) noexcept;

/// The widest level this CPU (and its operating system) runs.
isa_level isa_supported() noexcept;

/// The level whose kernels run: `DIMTENSOR_CPU_ISA` when set, else
/// isa_supported(); decided once.
/// @throws value_error when `DIMTENSOR_CPU_ISA` names no level, or one
/// that this CPU does not run.
isa_level isa_active();

/// @brief One level's kernels for element type T (float or double): the
/// sums, means, maxima and minima along a dim (backends/cpu/reduce.hpp), the
/// softmax family over a row-major [outer, n, inner] along the middle dim
/// (backends/cpu/softmax.hpp), the autograd interpreter's loops (a step's
/// value and an operand's gradient over dense buffers of n elements, the
/// step's autograd::op_code as an int; autograd/program.hpp), a whole
/// program's forward and backward passes (kernel/program.hpp), layer normalization
/// (backends/cpu/layer_norm.hpp), dropout (kernel/philox.hpp) and the fused
/// attention kernels
/// (backends/cpu/attention.hpp), with those headers' arguments.
template <class T>
struct level_kernels {
  /// backend_sum along the middle dim of [outer, n, inner].
  void (*sum)(T const*, T*, index_t, index_t, index_t);
  /// backend_mean.
  void (*mean)(T const*, T*, index_t, index_t, index_t);
  /// backend_max.
  void (*max)(T const*, T*, index_t, index_t, index_t);
  /// backend_min.
  void (*min)(T const*, T*, index_t, index_t, index_t);
  /// backend_softmax.
  void (*softmax)(T const*, T*, index_t, index_t, index_t);
  /// backend_log_softmax.
  void (*log_softmax)(T const*, T*, index_t, index_t, index_t);
  /// backend_masked_softmax with int32 lengths.
  void (*masked_softmax_i32)(T const*, T*, index_t, index_t, index_t, std::int32_t const*, index_t, T);
  /// backend_masked_softmax with int64 lengths.
  void (*masked_softmax_i64)(T const*, T*, index_t, index_t, index_t, std::int64_t const*, index_t, T);
  /// backend_softmax_backward.
  void (*softmax_backward)(T const*, T const*, T*, index_t, index_t, index_t);
  /// backend_log_softmax_backward.
  void (*log_softmax_backward)(T const*, T const*, T*, index_t, index_t, index_t);
  /// backend_masked_softmax_backward with int32 lengths.
  void (*masked_softmax_backward_i32)(T const*, T const*, T*, index_t, index_t, index_t, std::int32_t const*, index_t);
  /// backend_masked_softmax_backward with int64 lengths.
  void (*masked_softmax_backward_i64)(T const*, T const*, T*, index_t, index_t, index_t, std::int64_t const*, index_t);
  /// A step's value: (out, n, op code, a, b, c).
  void (*elementwise_step)(T*, index_t, int, T const*, T const*, T const*);
  /// An operand's gradient: (out, n, op code, operand, g, a, b).
  void (*elementwise_derivative)(T*, index_t, int, int, T const*, T const*, T const*);
  /// A recorded program's whole backward pass, block by block (kernel/program.hpp).
  void (*program_backward)(kernel::program_pass<T> const&);
  /// Its forward pass: the result's values into `result` (kernel/program.hpp).
  void (*program_forward)(kernel::program_pass<T> const&);
  /// Layer normalization over the last dim of [rows, n]: (x, w, b, y, mean, rstd, rows, n, eps).
  void (*layer_norm)(T const*, T const*, T const*, T*, T*, T*, index_t, index_t, T);
  /// Its backward pass: (x, w, mean, rstd, g, dx, dw, db, rows, n); dx, dw and db may be null.
  void (*layer_norm_backward)(T const*, T const*, T const*, T const*, T const*, T*, T*, T*, index_t, index_t);
  /// Dropout's mask applied (kernel/philox.hpp): (in, out, n, key, threshold, scale).
  void (*dropout)(T const*, T*, index_t, std::uint64_t, std::uint64_t, T);
  /// Fused scaled dot-product attention, forward.
  void (*attention_forward)(kernel::attention_problem<T> const&, kernel::attention_operand<T> const&, T*, T*);
  /// Its backward pass.
  void (*attention_backward)(kernel::attention_problem<T> const&, T const*, T const*,
                             kernel::attention_operand<T const> const&, kernel::attention_operand<T> const&,
                             kernel::attention_operand<T> const&, kernel::attention_operand<T> const&);
  /// Additive attention's scores, forward.
  void (*additive_scores_forward)(kernel::additive_problem<T> const&, T*);
  /// Their backward pass.
  void (*additive_scores_backward)(kernel::additive_problem<T> const&, T const*, kernel::attention_operand<T> const&,
                                   kernel::attention_operand<T> const&, T*);
};

/// The element types the runtime carries level kernels for.
template <class T>
inline constexpr bool has_level_kernels = std::is_same_v<T, float> || std::is_same_v<T, double>;

/// The kernels of @p Level (defined in src/cpu/kernels_LEVEL.cpp, LEVEL its name).
/// @pre this CPU runs @p level.
template <isa_level Level, class T>
level_kernels<T> const& kernels_of() noexcept;

/// The kernels of isa_active() (T float or double).
/// @throws value_error as isa_active().
template <class T>
level_kernels<T> const& kernels();

}  // namespace dimtensor::backends::cpu
