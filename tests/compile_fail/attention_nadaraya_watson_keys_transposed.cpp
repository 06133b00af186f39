// Nadaraya-Watson pooling with one row of keys per query, built the wrong
// way round: [Train, Test] instead of [Test, Train] (d2l's
// x_train.repeat((n_test, 1)) is [n_test, n_train]).  The queries, which
// get Train as their last dim, meet the keys aligned from the right: Test
// against Train at position 0.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/nn/attention.hpp>
// EXPECT: operands_disagree<dimtensor::call::minus, dimtensor::diagnostic::at_position<0>, dimtensor::diagnostic::left_has<Test>, dimtensor::diagnostic::right_has<Train> ?>
// EXPECT: the operands' dims, aligned from the right, must be the same dimension at every position
namespace dt = dimtensor;
DIMTENSOR_DIM(Train);
DIMTENSOR_DIM(Test);

int main() {
  auto const x_train = dt::rand<float>(Train(50)) * 5.0f;
  auto const y_train = dt::sin(x_train) * 2.0f;
  auto const x_test = dt::arange<float, Test>(0, 5, 0.1);
  dt::index_t const n_test = x_test.extent<Test>();
#ifdef DIMTENSOR_COMPILE_FAIL
  auto const keys = dt::repeat_interleave<Test>(dt::unsqueeze<Test, 1>(x_train), n_test);  // the mistake
  auto const values = dt::repeat_interleave<Test>(dt::unsqueeze<Test, 1>(y_train), n_test);
#else
  auto const keys = dt::repeat_interleave<Test>(dt::unsqueeze<Test, 0>(x_train), n_test);  // the fix
  auto const values = dt::repeat_interleave<Test>(dt::unsqueeze<Test, 0>(y_train), n_test);
#endif
  auto const y_hat = dt::nn::nadaraya_watson<Train>(x_test, keys, values);
  (void)y_hat;
}
