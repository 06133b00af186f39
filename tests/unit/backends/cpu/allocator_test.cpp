// Tests of backends/cpu/allocator.hpp: the caching allocator.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <new>

#include <dimtensor/backends/cpu/allocator.hpp>
#include <dimtensor/ops/creation.hpp>

namespace allocator_test {
DIMTENSOR_DIM(Batch);
}  // namespace allocator_test

namespace dt = dimtensor;
using dt::backends::cpu::caching_allocator;
using namespace allocator_test;

namespace {
bool aligned(void const* p) { return reinterpret_cast<std::uintptr_t>(p) % dt::backends::cpu::buffer_alignment == 0; }
}  // namespace

TEST_CASE("allocator: blocks are 64-byte aligned and writable", "[backends][cpu][allocator]") {
  auto& a = caching_allocator::instance();
  CHECK(&a == &caching_allocator::instance());
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65},
                            std::size_t{4096}, std::size_t{100000}}) {
    void* p = a.allocate(bytes);
    REQUIRE(p != nullptr);
    CHECK(aligned(p));
    auto* c = static_cast<unsigned char*>(p);
    for (std::size_t i = 0; i < bytes; ++i) c[i] = static_cast<unsigned char>(i);
    a.deallocate(p, bytes);
  }
  a.deallocate(nullptr, 128);  // a no-op
}

TEST_CASE("allocator: requests no machine can satisfy throw bad_alloc", "[backends][cpu][allocator]") {
  auto& a = caching_allocator::instance();
  CHECK_THROWS_AS(a.allocate(std::numeric_limits<std::size_t>::max()), std::bad_alloc);
  CHECK_THROWS_AS(a.allocate((std::size_t{1} << 63) + 1), std::bad_alloc);
}

#ifndef DIMTENSOR_NO_CACHING_ALLOCATOR

TEST_CASE("allocator: a freed block is reused for the same size class", "[backends][cpu][allocator]") {
  auto& a = caching_allocator::instance();
  a.release_cached();
  REQUIRE(a.cached_bytes() == 0);

  void* p = a.allocate(1000);  // class 1024
  a.deallocate(p, 1000);
  CHECK(a.cached_bytes() == 1024);
  void* other = a.allocate(5000);  // class 8192: not that block
  CHECK(other != p);
  CHECK(a.cached_bytes() == 1024);
  void* q = a.allocate(600);  // class 1024 again
  CHECK(q == p);
  CHECK(a.cached_bytes() == 0);
  a.deallocate(q, 600);
  a.deallocate(other, 5000);
  CHECK(a.cached_bytes() == 1024 + 8192);

  a.release_cached();
  CHECK(a.cached_bytes() == 0);
}

TEST_CASE("allocator: the cache limit sends larger frees to the OS", "[backends][cpu][allocator]") {
  auto& a = caching_allocator::instance();
  a.release_cached();
  a.set_cache_limit(4096);
  void* p = a.allocate(4096);
  void* q = a.allocate(64);
  a.deallocate(p, 4096);
  CHECK(a.cached_bytes() == 4096);
  a.deallocate(q, 64);  // would exceed the limit
  CHECK(a.cached_bytes() == 4096);
  a.set_cache_limit(std::size_t{4} << 30);
  a.release_cached();
  CHECK(a.cached_bytes() == 0);
}

TEST_CASE("allocator: a tensor's buffer is reused by the next tensor of that size", "[backends][cpu][allocator]") {
  auto& a = caching_allocator::instance();
  a.release_cached();
  float* first = nullptr;
  {
    auto t = dt::zeros<float>(Batch(3000));  // 12000 bytes: class 16384
    first = t.data();
    CHECK(a.cached_bytes() == 0);
  }
  CHECK(a.cached_bytes() == 16384);
  auto u = dt::ones<float>(Batch(4000));  // 16000 bytes, same class
  CHECK(u.data() == first);
  CHECK(u(Batch(3999)) == 1.0f);  // the reused block was fully initialized
  CHECK(a.cached_bytes() == 0);
}

#else

TEST_CASE("allocator: without caching nothing is kept", "[backends][cpu][allocator]") {
  auto& a = caching_allocator::instance();
  void* p = a.allocate(1000);
  a.deallocate(p, 1000);
  CHECK(a.cached_bytes() == 0);
}

#endif
