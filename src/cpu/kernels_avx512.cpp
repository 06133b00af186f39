// The CPU kernels for AVX-512 (F, BW, DQ, VL) (src/cpu/kernels.inl), on x86-64 with GCC or
// Clang; elsewhere this level is the baseline's table, which
// isa_supported() never passes over, as it is in a build configured with
// DIMTENSOR_CPU_LEVELS=OFF (DIMTENSOR_CPU_BASELINE_ONLY).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(DIMTENSOR_CPU_BASELINE_ONLY)
#define DIMTENSOR_CPU_ISA_NAMESPACE isa_avx512
#define DIMTENSOR_SIMD_LANES 16
#define DIMTENSOR_CPU_ISA_LEVEL avx512
#if defined(__clang__)
#define DIMTENSOR_CPU_ISA_PUSH \
  _Pragma("clang attribute push(__attribute__((target(\"avx512f,avx512bw,avx512dq,avx512vl,avx2,fma\"))), apply_to = function)")
#define DIMTENSOR_CPU_ISA_POP _Pragma("clang attribute pop")
#else
#define DIMTENSOR_CPU_ISA_PUSH _Pragma("GCC push_options") _Pragma("GCC target(\"avx512f,avx512bw,avx512dq,avx512vl,avx2,fma\")")
#define DIMTENSOR_CPU_ISA_POP _Pragma("GCC pop_options")
#endif
#include "kernels.inl"
#else
#include <dimtensor/backends/cpu/dispatch.hpp>

namespace dimtensor::backends::cpu {

template <>
level_kernels<float> const& kernels_of<isa_level::avx512, float>() noexcept {
  return kernels_of<isa_level::baseline, float>();
}

template <>
level_kernels<double> const& kernels_of<isa_level::avx512, double>() noexcept {
  return kernels_of<isa_level::baseline, double>();
}

}  // namespace dimtensor::backends::cpu
#endif
