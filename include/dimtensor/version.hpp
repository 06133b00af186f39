#pragma once
/// @file
/// @brief The library's version, as constants (the CMake package carries the same numbers).

namespace dimtensor {
/// Major version: changes break source compatibility.
inline constexpr int version_major = 0;
/// Minor version: new features, source compatible.
inline constexpr int version_minor = 1;
/// Patch version: fixes only.
inline constexpr int version_patch = 0;
}  // namespace dimtensor
