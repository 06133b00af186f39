// The messages and checks of core/shape.hpp that take names and extents as
// run-time data: one body for every dims list, compiled once into the
// dimtensor::runtime library.
#include <dimtensor/core/shape.hpp>

#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <dimtensor/core/error.hpp>

namespace dimtensor::detail {

std::string shape_text(std::span<std::string_view const> names, std::span<index_t const> ext) {
  std::string s = "[";
  for (std::size_t i = 0; i < ext.size(); ++i) {
    if (i) s += ", ";
    s += names[i];
    s += '=';
    s += std::to_string(ext[i]);
  }
  return s + "]";
}

void throw_extent_mismatch(std::string_view op, std::string_view dim, index_t a, index_t b, std::string_view what_a,
                           std::string_view what_b) {
  throw shape_error(std::string(op) + ": extent mismatch for dimension " + std::string(dim) + ": " + std::to_string(a) +
                    " (" + std::string(what_a) + ") vs " + std::to_string(b) + " (" + std::string(what_b) + ")");
}

std::string in_call_message(std::string_view call, std::string_view message) {
  std::string const head = std::string(call) + ": ";
  if (message.substr(0, head.size()) == head) return std::string(message);
  return head + std::string(message);
}

void throw_index_out_of_range(index_t i, std::string_view dim, index_t extent) {
  throw value_error("element access: index " + std::to_string(i) + " out of range for dimension " + std::string(dim) +
                    " of extent " + std::to_string(extent));
}

index_t checked_element_count_of(std::string_view op, std::span<std::string_view const> names,
                                 std::span<index_t const> ext, std::size_t element_size) {
  index_t const limit = std::numeric_limits<index_t>::max() / static_cast<index_t>(element_size);
  index_t n = 1;
  bool empty = false;
  for (auto e : ext) {
    if (e == 0) {
      empty = true;
    } else if (n > limit / e) {
      throw value_error(std::string(op) + ": the extents " + shape_text(names, ext) +
                        " hold more elements than memory can address");
    } else {
      n *= e;
    }
  }
  return empty ? 0 : n;
}

void check_static_extents_of(std::string_view op, std::span<std::string_view const> names,
                             std::span<index_t const> want_extents, std::span<index_t const> ext) {
  for (std::size_t i = 0; i < ext.size(); ++i) {
    index_t const want = want_extents[i];
    if (ext[i] < 0) {
      throw value_error(std::string(op) + ": negative extent " + std::to_string(ext[i]) + " for dimension " +
                        std::string(names[i]));
    }
    if (want != dynamic_extent && want != ext[i]) {
      throw_extent_mismatch(op, names[i], ext[i], want, "given", "static");
    }
  }
}

}  // namespace dimtensor::detail
