#pragma once
/// @file
/// @brief The exceptions dimtensor throws for bad input at run time.

#include <stdexcept>
#include <string>

namespace dimtensor {

/// Base of every dimtensor exception.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Dynamic extents that disagree; the message names the operation, the
/// dimension and both sizes.
class shape_error : public error {
 public:
  using error::error;
};

/// A value out of its domain (a negative valid length, an index out of range…).
class value_error : public error {
 public:
  using error::error;
};

/// A file that cannot be read or written, or whose content is malformed or
/// does not match the tensor type it is loaded into.
class io_error : public error {
 public:
  using error::error;
};

/// A failure reported by a device runtime (CUDA, cuBLAS): out of device
/// memory, no device, a failed launch.  The message names the call and the
/// runtime's own words.
class device_error : public error {
 public:
  using error::error;
};

}  // namespace dimtensor
