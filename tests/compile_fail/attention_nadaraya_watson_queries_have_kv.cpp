// Nadaraya-Watson pooling fed d2l's X_repeat: the test inputs already
// repeated over the training points, [Test, Train].  The queries must not
// have the key-value dim; the pooling broadcasts them itself.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: attention_operand_has_foreign_dim<dimtensor::call::nadaraya_watson, dimtensor::operand::queries, Train, dimtensor::dims<Test, Train> ?>
// EXPECT: an attention operand has a dim that belongs to another operand
namespace dt = dimtensor;
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);

int main() {
  auto const x_train = dt::rand<float>(Train(50)) * 5.0f;
  auto const y_train = dt::sin(x_train) * 2.0f;
  auto const x_test = dt::arange<float, Test>(0, 5, 0.1);
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const X_repeat = dt::repeat_interleave<Train>(dt::unsqueeze<Train, 1>(x_test), 50);
  auto const y_hat = dt::nn::nadaraya_watson<Train>(X_repeat, x_train, y_train);  // the mistake
#else
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test, x_train, y_train);  // the fix
#endif
  dt::tensor<float, Test> const y = y_hat;
  (void)y;
}
