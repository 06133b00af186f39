#pragma once
/// @file
/// @brief What the fuzz targets share: checks that stop the fuzzer with a
/// message, bitwise comparison of tensors, and scratch files per process.

#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <dimtensor/core/error.hpp>

namespace dimtensor_fuzz {

/// Stops the run (libFuzzer saves the input as a crash) when @p ok is false.
inline void require(bool ok, std::string_view what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %.*s\n", static_cast<int>(what.size()), what.data());
  std::abort();
}

/// Checks that a reader's error names the file or stream it read.
inline void require_names(dimtensor::io_error const& e, std::string_view name) {
  std::string_view const message = e.what();
  if (message.find(name) == std::string_view::npos) {
    std::fprintf(stderr, "io_error without the name %.*s: %s\n", static_cast<int>(name.size()), name.data(), e.what());
    std::abort();
  }
}

/// Same extents and the same bytes in every element (NaN payloads included).
template <class Tensor>
bool bitwise_equal(Tensor const& a, Tensor const& b) {
  if (a.extents() != b.extents()) return false;
  auto const n = static_cast<std::size_t>(a.size());
  return n == 0 || std::memcmp(a.data(), b.data(), n * sizeof(typename Tensor::value_type)) == 0;
}

/// A scratch file of this process, `<tmp>/dimtensor_fuzz_<pid>_<tag>`
/// (fuzzing jobs run side by side may share the folder), removed at exit.
inline std::filesystem::path const& scratch_file(std::string const& tag) {
  struct scratch {
    std::filesystem::path path;
    scratch(scratch const&) = delete;
    scratch& operator=(scratch const&) = delete;
    explicit scratch(std::filesystem::path p) : path(std::move(p)) {}
    ~scratch() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  };
  static std::map<std::string, scratch, std::less<>> files;
  auto it = files.find(tag);
  if (it == files.end()) {
    auto path = std::filesystem::temp_directory_path() / ("dimtensor_fuzz_" + std::to_string(::getpid()) + "_" + tag);
    it = files.try_emplace(tag, std::move(path)).first;
  }
  return it->second.path;
}

/// Writes @p bytes to @p file, replacing it.
inline void write_file(std::filesystem::path const& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  require(static_cast<bool>(out), "cannot write a scratch file");
}

/// The bytes of @p file.
inline std::string read_file(std::filesystem::path const& file) {
  std::ifstream in(file, std::ios::binary);
  require(static_cast<bool>(in), "cannot read a scratch file");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace dimtensor_fuzz
