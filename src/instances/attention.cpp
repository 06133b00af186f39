// Scaled dot-product attention's and additive attention's scores' run-time
// parts and nodes, compiled once into dimtensor::runtime for the CPU's
// float and double; their headers declare them (extern template).
#include <dimtensor/ops/additive_scores.hpp>
#include <dimtensor/ops/attention.hpp>

namespace dimtensor {
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_ATTENTION_INSTANCES)
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_ADDITIVE_SCORES_INSTANCES)
}  // namespace dimtensor
