// The choice of the CPU kernels' instruction set (dimtensor/backends/cpu/dispatch.hpp):
// what the CPU runs, what DIMTENSOR_CPU_ISA asks for, and the table of the
// level chosen, once.
#include <cstdlib>
#include <string>
#include <string_view>

#include <dimtensor/backends/cpu/dispatch.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor::backends::cpu {

std::string_view isa_name(isa_level level) noexcept {
  switch (level) {
    case isa_level::avx512:
      return "avx512";
    case isa_level::avx2:
      return "avx2";
    case isa_level::baseline:
      break;
  }
  return "baseline";
}

isa_level isa_supported() noexcept {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // libgcc's and compiler-rt's checks include the operating system's
  // support for the registers (XCR0), not only the CPUID bits.
  __builtin_cpu_init();
  bool const avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  bool const avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  return avx512 ? isa_level::avx512 : avx2 ? isa_level::avx2 : isa_level::baseline;
#else
  return isa_level::baseline;
#endif
}

namespace {

isa_level choose_level() {
  isa_level const supported = isa_supported();
  char const* const asked = std::getenv("DIMTENSOR_CPU_ISA");
  if (asked == nullptr || *asked == '\0') return supported;
  std::string_view const word{asked};
  for (isa_level const level : {isa_level::baseline, isa_level::avx2, isa_level::avx512}) {
    if (word != isa_name(level)) continue;
    if (static_cast<int>(level) > static_cast<int>(supported)) {
      throw value_error("DIMTENSOR_CPU_ISA=" + std::string(word) + ": this CPU does not run " + std::string(word) +
                        " (the widest level it runs is " + std::string(isa_name(supported)) + ")");
    }
    return level;
  }
  throw value_error("DIMTENSOR_CPU_ISA=" + std::string(word) +
                    ": not an instruction-set level (it takes baseline, avx2 or avx512)");
}

template <class T>
level_kernels<T> const& kernels_for(isa_level level) noexcept {
  switch (level) {
    case isa_level::avx512:
      return kernels_of<isa_level::avx512, T>();
    case isa_level::avx2:
      return kernels_of<isa_level::avx2, T>();
    case isa_level::baseline:
      break;
  }
  return kernels_of<isa_level::baseline, T>();
}

}  // namespace

isa_level isa_active() {
  static isa_level const level = choose_level();
  return level;
}

template <class T>
level_kernels<T> const& kernels() {
  static level_kernels<T> const& table = kernels_for<T>(isa_active());
  return table;
}

template level_kernels<float> const& kernels<float>();
template level_kernels<double> const& kernels<double>();

}  // namespace dimtensor::backends::cpu
