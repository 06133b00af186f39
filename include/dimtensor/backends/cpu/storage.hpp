#pragma once
/// @file
/// @brief The CPU backend's tag and its storage: one buffer of elements
/// from the caching allocator, shared by a tensor and its views.

#include <cstddef>
#include <memory>
#include <string_view>
#include <type_traits>

#include <dimtensor/backends/cpu/allocator.hpp>
#include <dimtensor/config.hpp>

namespace dimtensor {

/// @brief The CPU backend: host memory, compiler-vectorized loops, OpenMP
/// threads and CBLAS contractions.
struct cpu {
  /// The host reads and writes the elements directly.
  static constexpr bool host_accessible = true;
  /// The backend's name in messages.
  static constexpr std::string_view name = "cpu";

  /// Storage of @p n elements of type T.
  template <class T>
  class storage {
    static_assert(std::is_trivially_copyable_v<T>, "dimtensor: element types must be trivially copyable");

   public:
    /// Allocates @p n uninitialized elements.
    explicit storage(index_t n)
        : size_(n),
          data_(static_cast<T*>(backends::cpu::caching_allocator::instance().allocate(bytes(n)))) {}
    storage(storage const&) = delete;
    storage& operator=(storage const&) = delete;
    ~storage() { backends::cpu::caching_allocator::instance().deallocate(data_, bytes(size_)); }

    /// First element.
    T* data() noexcept { return data_; }
    /// First element.
    T const* data() const noexcept { return data_; }
    /// Number of elements.
    index_t size() const noexcept { return size_; }

   private:
    static std::size_t bytes(index_t n) { return static_cast<std::size_t>(n > 0 ? n : 1) * sizeof(T); }
    index_t size_;
    T* data_;
  };
};

}  // namespace dimtensor
