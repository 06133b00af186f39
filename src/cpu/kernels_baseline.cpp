// The CPU kernels for the baseline instruction set (x86-64: SSE2), the
// level every CPU runs (src/cpu/kernels.inl).
#define DIMTENSOR_CPU_ISA_NAMESPACE isa_baseline
#define DIMTENSOR_SIMD_LANES 4
#define DIMTENSOR_CPU_ISA_LEVEL baseline
#include "kernels.inl"
