#pragma once
// Test support for the tests that write files (io, viz, nn parameters): a
// temporary directory of their own, whole files as bytes, and the contents
// the round trips write.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include <dimtensor/config.hpp>

namespace test_support {

// A fresh directory under the system's temporary one, removed with the
// object.  The prefix names the test file; the clock and a random number
// keep concurrent runs of the program (ctest -j) apart.
class temp_dir {
 public:
  explicit temp_dir(std::string const& prefix) {
    auto const stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    path_ = std::filesystem::temp_directory_path() /
            (prefix + std::to_string(stamp) + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  temp_dir(temp_dir const&) = delete;
  temp_dir& operator=(temp_dir const&) = delete;

  std::filesystem::path const& path() const noexcept { return path_; }
  std::filesystem::path operator/(std::filesystem::path const& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// The directory named by prefix for the whole run of the program: made at
// the first call, removed at exit.
inline temp_dir const& program_temp_dir(std::string const& prefix) {
  static std::map<std::string, temp_dir> dirs;
  return dirs.try_emplace(prefix, prefix).first->second;
}

// The whole file, byte for byte; the file must open.
inline std::string read_bytes(std::filesystem::path const& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Replaces the file's contents with bytes.
inline void write_bytes(std::filesystem::path const& p, std::string const& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The elements of v as bytes, as a file stores them.
template <class T>
std::string raw(std::vector<T> const& v) {
  return std::string(reinterpret_cast<char const*>(v.data()), v.size() * sizeof(T));
}

// Element i of a round trip's tensor: distinct, signed and fractional where
// the type allows, so that a swapped or truncated element shows.
template <class T>
T value_at(dimtensor::index_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return i % 3 == 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(i) * T(0.25) - T(3.1);
  } else {
    return static_cast<T>(i * 7 - 11);
  }
}

// Sets every element of a contiguous tensor t to value_at(its flat index).
template <class Tensor>
void fill_pattern(Tensor& t) {
  for (dimtensor::index_t i = 0; i < t.size(); ++i) t.data()[i] = value_at<typename Tensor::value_type>(i);
}

}  // namespace test_support
