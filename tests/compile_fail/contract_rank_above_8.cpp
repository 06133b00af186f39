// The batched product reads layouts of at most 8 dims: a contraction of
// operands of rank 9 stops at one message instead of deep inside it.
#include <dimtensor/dimtensor.hpp>
// EXPECT: contractions of operands of rank above 8 are not supported
namespace dt = dimtensor;
DIMTENSOR_DIM(R1);
DIMTENSOR_DIM(R2);
DIMTENSOR_DIM(R3);
DIMTENSOR_DIM(R4);
DIMTENSOR_DIM(R5);
DIMTENSOR_DIM(R6);
DIMTENSOR_DIM(R7);
DIMTENSOR_DIM(R8);
DIMTENSOR_DIM(K);
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::tensor<float, R1, R2, R3, R4, R5, R6, R7, R8, K> const a(R1(1), R2(1), R3(1), R4(1), R5(1), R6(1), R7(1), R8(2),
                                                               K(3));
#else
  dt::tensor<float, R2, R3, R4, R5, R6, R7, R8, K> const a(R2(1), R3(1), R4(1), R5(1), R6(1), R7(1), R8(2), K(3));
#endif
  dt::tensor<float, K> const b(K(3));
  auto const c = dt::contract<K>(a, b);
  return static_cast<int>(c.size()) - 2;
}
