// Nadaraya-Watson pooling given the test outputs as values: the values must
// be the training outputs, along the key-value dim Train.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_lacks_dim<dimtensor::call::nadaraya_watson, dimtensor::operand::values, Train, dimtensor::dims<Test> ?>
// EXPECT: an attention operand lacks a dim that the module names
namespace dt = dimtensor;
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);

int main() {
  auto const x_train = dt::rand<float>(Train(50)) * 5.0f;
  auto const y_train = dt::sin(x_train) * 2.0f;
  auto const x_test = dt::arange<float, Test>(0, 5, 0.1);
  auto const y_truth = dt::sin(x_test) * 2.0f;
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_truth);  // the mistake
#else
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train);  // the fix
#endif
  dt::tensor<float, Test> const y = y_hat;
  (void)y;
}
