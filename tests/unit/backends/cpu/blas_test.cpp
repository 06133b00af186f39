// Tests of backends/cpu/blas.hpp: the BLAS chosen at configure time is the
// one the headers call, it names itself, and its threads follow
// set_num_threads and drop to one for dimtensor's own products.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <dimtensor/backends/cpu/blas.hpp>
#include <dimtensor/backends/cpu/gemm.hpp>
#include <dimtensor/backends/cpu/parallel.hpp>

namespace dt = dimtensor;
namespace cpu = dt::backends::cpu;

namespace {

// The BLAS's thread count after set_num_threads(n): n, except that MKL
// takes at most the machine's physical cores.
bool blas_threads_follow(int n) {
  int const got = cpu::detail::blas_threads();
#if defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL
  return got >= 1 && got <= n;
#else
  return got == n;
#endif
}

// Restores the default thread count when a test ends.
struct thread_guard {
  ~thread_guard() { dt::set_num_threads(0); }
};

}  // namespace

TEST_CASE("blas: the vendor is the one the build was configured with", "[backends][cpu][blas]") {
  // DIMTENSOR_TEST_BLAS: DIMTENSOR_BLAS of the build (tests/CMakeLists.txt), "none" without a BLAS.
  CHECK(cpu::blas_vendor() == std::string(DIMTENSOR_TEST_BLAS));
}

TEST_CASE("blas: the description names the vendor, its version and its kernel", "[backends][cpu][blas]") {
  std::string const text = cpu::blas_description();
  INFO(text);
  REQUIRE(text.rfind(std::string(cpu::blas_vendor()), 0) == 0);
#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
#if !(defined(DIMTENSOR_BLAS_MKL) && DIMTENSOR_BLAS_MKL)
  // "<vendor> <version> (kernel <name>)", both non-empty.
  auto const space = text.find(' ');
  auto const kernel = text.find(" (kernel ");
  REQUIRE(space != std::string::npos);
  REQUIRE(kernel != std::string::npos);
  CHECK(kernel > space + 1);
  CHECK(text.size() > kernel + std::string(" (kernel )").size());
  CHECK(text.back() == ')');
#else
  CHECK(text.find("Math Kernel Library") != std::string::npos);
#endif
#else
  CHECK(text == "none (portable loops)");
#endif
}

#if defined(DIMTENSOR_HAS_CBLAS) && DIMTENSOR_HAS_CBLAS
TEST_CASE("blas: set_num_threads sets the BLAS's threads; dimtensor's products set it to one",
          "[backends][cpu][blas]") {
  thread_guard guard;
  dt::set_num_threads(2);
  CHECK(blas_threads_follow(2));

  // A product through the BLAS: OpenMP's threads share the products, one
  // BLAS thread each.
  int const m = 96, n = 80, k = 64;
  std::vector<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n),
      c(static_cast<std::size_t>(m) * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.5f;
  cpu::gemm_blas<float>(1, m, n, k, {a.data(), m * k, k, 1}, {b.data(), k * n, n, 1}, {c.data(), m * n, n, 1});
  CHECK(cpu::detail::blas_threads() == 1);
  for (int i : {0, m / 2, m - 1}) {
    for (int j : {0, n / 3, n - 1}) {
      float expected = 0;
      for (int p = 0; p < k; ++p)
        expected += a[static_cast<std::size_t>(i * k + p)] * b[static_cast<std::size_t>(p * n + j)];
      CHECK(c[static_cast<std::size_t>(i * n + j)] == Approx(expected).epsilon(1e-5));
    }
  }

  dt::set_num_threads(3);
  CHECK(blas_threads_follow(3));
}
#endif
