#pragma once
/// @file
/// @brief The CPU backend's caching allocator.
///
/// Writing into freshly mapped pages is several times slower than writing
/// into pages already touched, so buffers are not returned to the OS: freed
/// blocks go to per-size-class free lists and are handed out again.  Size
/// classes are powers of two from 64 bytes; blocks are 64-byte aligned.
/// Define DIMTENSOR_NO_CACHING_ALLOCATOR (the sanitizer builds do) to make
/// every allocation a real one, so AddressSanitizer sees every use after free.

#include <bit>
#include <cstddef>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace dimtensor::backends::cpu {

/// Alignment of every buffer (a cache line; enough for AVX-512 loads).
inline constexpr std::size_t buffer_alignment = 64;

/// @brief Process-wide cache of freed buffers, by power-of-two size class.
class caching_allocator {
 public:
  /// The allocator every CPU tensor uses.
  static caching_allocator& instance() {
    static caching_allocator a;
    return a;
  }

  /// A 64-byte aligned block of at least @p bytes bytes.
  void* allocate(std::size_t bytes) {
    // larger requests cannot succeed, and their size class would index past free_
    if (bytes > (std::size_t{1} << 62)) throw std::bad_alloc();
    std::size_t const cls = size_class(bytes);
#ifndef DIMTENSOR_NO_CACHING_ALLOCATOR
    {
      std::lock_guard lock(mutex_);
      auto& list = free_[cls];
      if (!list.empty()) {
        void* p = list.back();
        list.pop_back();
        cached_bytes_ -= class_bytes(cls);
        return p;
      }
    }
#endif
    void* p = std::aligned_alloc(buffer_alignment, class_bytes(cls));
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }

  /// Returns a block obtained from allocate(@p bytes).
  void deallocate(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
#ifndef DIMTENSOR_NO_CACHING_ALLOCATOR
    std::size_t const cls = size_class(bytes);
    std::lock_guard lock(mutex_);
    if (cached_bytes_ + class_bytes(cls) <= limit_) {
      try {
        free_[cls].push_back(p);
        cached_bytes_ += class_bytes(cls);
        return;
      } catch (...) {
        // fall through: release it instead of caching it
      }
    }
#else
    (void)bytes;
#endif
    std::free(p);
  }

  /// Gives every cached block back to the OS.
  void release_cached() noexcept {
    std::lock_guard lock(mutex_);
    for (auto& list : free_) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    cached_bytes_ = 0;
  }

  /// Bytes held in the free lists now.
  std::size_t cached_bytes() const {
    std::lock_guard lock(mutex_);
    return cached_bytes_;
  }

  /// Caps the bytes kept in the free lists (default 4 GiB); larger frees go to the OS.
  void set_cache_limit(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    limit_ = bytes;
  }

  caching_allocator(caching_allocator const&) = delete;
  caching_allocator& operator=(caching_allocator const&) = delete;
  ~caching_allocator() { release_cached(); }

 private:
  caching_allocator() = default;

  static constexpr std::size_t min_class = 6;  // 64 bytes
  static std::size_t size_class(std::size_t bytes) {
    std::size_t const b = bytes < (std::size_t{1} << min_class) ? (std::size_t{1} << min_class) : bytes;
    return static_cast<std::size_t>(std::bit_width(b - 1));
  }
  static std::size_t class_bytes(std::size_t cls) { return std::size_t{1} << cls; }

  mutable std::mutex mutex_;
  std::vector<void*> free_[64];
  std::size_t cached_bytes_ = 0;
  std::size_t limit_ = std::size_t{4} << 30;
};

}  // namespace dimtensor::backends::cpu
