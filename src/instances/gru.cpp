// The GRU layer's passes, back-propagation through time and nodes, compiled once into dimtensor::runtime for the CPU's float and
// double; <dimtensor/nn/gru.hpp> declares them (extern template).
#include <dimtensor/nn/gru.hpp>

namespace dimtensor {
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_GRU_INSTANCES)
}  // namespace dimtensor
