// The CPU backend's dims-free code for float (include/dimtensor/instances.hpp
// declares it), compiled once into the dimtensor::runtime library.
#define DIMTENSOR_DEFINE_INSTANCES float
#include <dimtensor/instances.hpp>
