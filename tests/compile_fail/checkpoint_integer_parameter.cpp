// load_checkpoint fills parameters of float or double (a checkpoint's F32,
// F64, F16 and BF16 tensors); a module with an integer parameter is named.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/checkpoint.hpp>
// EXPECT: dimtensor::nn::load_checkpoint: parameters must hold float or double
namespace dt = dimtensor;
DIMTENSOR_DIM(Vocab);
#ifdef DIMTENSOR_COMPILE_FAIL
using element = int;
#else
using element = float;
#endif
struct counts {
  dt::tensor<element, Vocab> table = dt::zeros<element>(Vocab(3));
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") {
    f(prefix + "table", table);
  }
  template <class F>
  void for_each_parameter(F&& f, std::string const& prefix = "") const {
    f(prefix + "table", table);
  }
};
int main(int argc, char**) {
  if (argc > 1) {
    counts c;
    dt::nn::load_checkpoint(c, "model.safetensors");
  }
}
