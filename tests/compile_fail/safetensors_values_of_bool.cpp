// safetensors_reader::values<T> reads numbers at a run-time rank: float,
// double, std::int32_t or std::int64_t; another T is named.
#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/safetensors.hpp>
// EXPECT: dimtensor::safetensors_reader::values<T>: T must be float, double, std::int32_t or std::int64_t
namespace dt = dimtensor;
int main(int argc, char**) {
  if (argc > 1) {
    dt::safetensors_reader const reader("model.safetensors");
#ifdef DIMTENSOR_COMPILE_FAIL
    auto const v = reader.values<bool>("mask");
#else
    auto const v = reader.values<float>("mask");
#endif
    (void)v;
  }
}
