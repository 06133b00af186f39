// The CPU kernels' entries (softmax, reductions, products, gathers, copies), compiled once into dimtensor::runtime for the CPU's float and
// double; <dimtensor/backends/cpu.hpp> declares them (extern template).
#include <dimtensor/backends/cpu.hpp>

namespace dimtensor {
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_CPU_KERNEL_INSTANCES)
}  // namespace dimtensor
