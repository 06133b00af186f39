// A tensor of a backend that declares its storage but not the kernels of the
// backend contract (backends/backend.hpp): one assertion names the contract,
// before any operation fails deep inside with "no matching function".
#include <dimtensor/dimtensor.hpp>
// EXPECT: does not declare every kernel of the backend contract
#include <string_view>
namespace dt = dimtensor;
DIMTENSOR_DIM(Batch);
// Storage and traits, no kernels.
struct storage_only {
  static constexpr bool host_accessible = true;
  static constexpr std::string_view name = "storage_only";
  template <class T>
  using storage = dt::cpu::storage<T>;
};
int main() {
#ifdef DIMTENSOR_COMPILE_FAIL
  dt::basic_tensor<storage_only, float, Batch> const x(Batch(3));
#else
  dt::basic_tensor<dt::cpu, float, Batch> const x(Batch(3));
#endif
  (void)x;
}
