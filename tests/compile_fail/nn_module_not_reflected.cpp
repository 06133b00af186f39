// A user module that derives from nn::module but declares its members as
// plain members: for_each_parameter cannot see them (no reflection).
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/linear.hpp>
#include <dimtensor/nn/module.hpp>
// EXPECT: needs M's submodules and parameters declared with BOOST_HANA_DEFINE_STRUCT
namespace dt = dimtensor;
DIMTENSOR_DIM(In);
DIMTENSOR_DIM(Out);
#ifdef DIMTENSOR_COMPILE_FAIL
struct net : dt::nn::module<net> {
  dt::nn::linear<In, Out> dense{In(4), Out(3)};  // the mistake
};
#else
struct net : dt::nn::module<net> {
  BOOST_HANA_DEFINE_STRUCT(net, (dt::nn::linear<In, Out>, dense));  // the fix
  net() : dense(In(4), Out(3)) {}
};
#endif
int main() {
  net n;
  int count = 0;
  n.for_each_parameter([&](auto const&, auto&) { ++count; });
  return count == 2 ? 0 : 1;
}
