// optim::progress (include/dimtensor/optim/progress.hpp), compiled once into
// the dimtensor::runtime library.
#include <dimtensor/optim/progress.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#if defined(_WIN32)
#include <io.h>
#else
#include <unistd.h>
#endif

namespace dimtensor::optim {

namespace detail {

bool is_terminal(std::ostream const& out) {
#if defined(_WIN32)
  if (&out == &std::cout) return _isatty(_fileno(stdout)) != 0;
  if (&out == &std::cerr || &out == &std::clog) return _isatty(_fileno(stderr)) != 0;
#else
  if (&out == &std::cout) return ::isatty(STDOUT_FILENO) != 0;
  if (&out == &std::cerr || &out == &std::clog) return ::isatty(STDERR_FILENO) != 0;
#endif
  return false;
}

std::string duration_text(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  std::ostringstream s;
  if (seconds < 60) {
    s << std::fixed << std::setprecision(1) << seconds << 's';
    return s.str();
  }
  auto const whole = static_cast<long long>(seconds);
  s << std::setfill('0');
  if (whole < 3600) {
    s << whole / 60 << 'm' << std::setw(2) << whole % 60 << 's';
  } else {
    s << whole / 3600 << 'h' << std::setw(2) << (whole % 3600) / 60 << 'm';
  }
  return s.str();
}

}  // namespace detail

progress::progress(index_t total) : progress(total, std::cout) {}

progress::progress(index_t total, std::ostream& out, progress_options options)
    : total_(total), out_(&out), options_(std::move(options)) {
  if (total_ <= 0) throw value_error("progress: the number of epochs must be > 0, got " + std::to_string(total_));
  if (options_.every <= 0) {
    throw value_error("progress: every must be > 0, got " + std::to_string(options_.every));
  }
  terminal_ = options_.terminal.value_or(detail::is_terminal(out));
  if (!options_.clock) {
    options_.clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
  start_ = options_.clock();
}

void progress::update(index_t epoch, std::vector<std::pair<std::string, double>> const& values) {
  if (epoch < 1 || epoch > total_) {
    throw value_error("progress: epoch " + std::to_string(epoch) + " is outside [1, " + std::to_string(total_) + "]");
  }
  std::string const text = line(epoch, values, options_.clock() - start_);
  if (terminal_) {
    // Pad over the longer previous line, which '\r' alone leaves visible.
    std::size_t const width = std::max(text.size(), drawn_);
    *out_ << '\r' << text << std::string(width - text.size(), ' ');
    drawn_ = text.size();
    if (epoch == total_) {
      *out_ << '\n';
      drawn_ = 0;
    }
    out_->flush();
  } else if (epoch % options_.every == 0 || epoch == total_) {
    *out_ << text << '\n';
  }
  last_ = epoch;
}

void progress::finish() {
  if (terminal_ && drawn_ > 0) {
    *out_ << '\n';
    out_->flush();
    drawn_ = 0;
  }
}

std::string progress::line(index_t epoch, std::vector<std::pair<std::string, double>> const& values,
                           double elapsed) const {
  std::ostringstream s;
  s << options_.unit << ' ' << epoch << '/' << total_;
  s << std::fixed << std::setprecision(options_.precision);
  for (auto const& [name, value] : values) s << "  " << name << ' ' << value;
  double const remaining = elapsed / static_cast<double>(epoch) * static_cast<double>(total_ - epoch);
  s << "  " << detail::duration_text(elapsed) << " elapsed";
  if (epoch < total_) s << "  ETA " << detail::duration_text(remaining);
  return s.str();
}

}  // namespace dimtensor::optim
