// The contraction's run-time part and node, and the permuted copies, compiled once into dimtensor::runtime for the CPU's float and
// double; <dimtensor/ops/contract.hpp> declares them (extern template).
#include <dimtensor/ops/contract.hpp>

namespace dimtensor {
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_CONTRACT_INSTANCES)
}  // namespace dimtensor
