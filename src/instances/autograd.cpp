// The autograd engine's gradient buffers, the interpreter's node and
// leaves, the view and copy nodes and the line rule's node, compiled once
// into dimtensor::runtime for the CPU's float and double; their headers
// declare them (extern template).
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/autograd/rules/line.hpp>

namespace dimtensor {
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_AUTOGRAD_INSTANCES)
DIMTENSOR_DEFINE_INSTANCES(DIMTENSOR_LINE_INSTANCES)
}  // namespace dimtensor
