// Compiled twice by tests/CMakeLists.txt: as a program's file is, and with
// DIMTENSOR_NO_EXTERN_INSTANCES. cmake/CheckInstances.cmake then reads the
// objects' symbols: the first must call the library's copies of the CPU
// code (undefined here), the second must compile its own.  It includes the
// headers that hold the probed code, not the umbrella: each header
// declares its own instances.
#include <dimtensor/autograd/program.hpp>
#include <dimtensor/backends/cpu.hpp>
#include <dimtensor/nn/gru.hpp>
#include <dimtensor/ops/attention.hpp>

namespace dt = dimtensor;

// Addresses that escape, so that each function is referred to by name
// (a call could be inlined away in one object and not in the other).
void (*volatile probe_softmax)(dt::cpu, float const*, float*, dt::index_t, dt::index_t, dt::index_t) =
    &dt::backend_softmax<float>;
void (*volatile probe_add_gradient)(dt::autograd::tensor_state&, double const*, dt::index_t) =
    &dt::autograd::add_gradient<dt::cpu, double>;
auto volatile probe_attention_run = &dt::detail::attention_run<dt::cpu, float>;
auto volatile probe_gru_layer_pass = &dt::nn::detail::gru_layer_pass<double, dt::cpu>;
