// A setting (the number of layers) declared among a module's reflected
// members: for_each_parameter would not know what key or mode it has.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/module.hpp>
// EXPECT: module_member_not_a_module<.*encoder, int>
// EXPECT: neither a parameter \(a tensor\), a module
namespace dt = dimtensor;
DIMTENSOR_DIM(Feat);
DIMTENSOR_DIM(Hidden);
struct encoder : dt::nn::module<encoder> {
#ifdef DIMTENSOR_COMPILE_FAIL
  BOOST_HANA_DEFINE_STRUCT(encoder, (dt::nn::linear<Feat, Hidden>, dense), (int, num_layers));  // the mistake
#else
  BOOST_HANA_DEFINE_STRUCT(encoder, (dt::nn::linear<Feat, Hidden>, dense));  // the fix: settings outside the macro
  int num_layers;
#endif
  encoder() : dense(Feat(4), Hidden(8)), num_layers(2) {}
};
int main() {
  encoder model;
  auto const names = dt::nn::parameter_names(model);
  (void)names;
}
