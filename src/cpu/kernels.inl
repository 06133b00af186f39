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
#include <dimtensor/kernel/reduce_identity.hpp>

// None of the kernel headers may have come in above: its code would be the
// baseline's under the level's name.
#if defined(DIMTENSOR_BACKENDS_CPU_ATTENTION_HPP) || defined(DIMTENSOR_BACKENDS_CPU_REDUCE_HPP) || \
    defined(DIMTENSOR_BACKENDS_CPU_SIMD_HPP) || defined(DIMTENSOR_BACKENDS_CPU_SOFTMAX_HPP)
#error "src/cpu/kernels.inl: a CPU kernel header was included before the level's target pragma"
#endif

#if defined(DIMTENSOR_CPU_ISA_PUSH)
DIMTENSOR_CPU_ISA_PUSH
#endif

#include <dimtensor/backends/cpu/attention.hpp>
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
