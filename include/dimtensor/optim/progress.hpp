#pragma once
/// @file
/// @brief `optim::progress`: the progress of a training loop — epoch i of
/// n, the loss, the time elapsed and the time left — on a terminal as one
/// line redrawn in place, elsewhere (a log, a pipe, CTest) as plain lines.
///
/// @code
/// dt::optim::progress bar(num_epochs);                  // std::cout, terminal or not by isatty
/// for (int epoch = 1; epoch <= num_epochs; ++epoch) {
///   ...
///   bar.update(epoch, loss);
/// }
/// bar.finish();
/// @endcode
///
/// On a terminal: `\repoch 3/10  loss 0.123456  0.8s elapsed  ETA 1.9s`,
/// rewritten at every update, ended by a newline at the last epoch (or
/// `finish()`).  Otherwise: the same text, one line every `every` epochs
/// and at the last.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iomanip>
#include <iostream>
#include <optional>
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

#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor::optim {

/// How `progress` writes.
struct progress_options {
  /// Redraw one line with a carriage return (true) or write plain lines (false); unset:
  /// true when the stream is std::cout or std::cerr and that is a terminal.
  std::optional<bool> terminal;
  /// Plain lines: one every this many epochs (and always the last).
  index_t every = 1;
  /// The word before the counter.
  std::string unit = "epoch";
  /// Digits after the point of the values.
  int precision = 6;
  /// Seconds since some fixed moment; unset: std::chrono::steady_clock.
  std::function<double()> clock;
};

namespace detail {

/// Whether @p out writes to a terminal (std::cout or std::cerr only).
inline bool is_terminal(std::ostream const& out) {
#if defined(_WIN32)
  if (&out == &std::cout) return _isatty(_fileno(stdout)) != 0;
  if (&out == &std::cerr || &out == &std::clog) return _isatty(_fileno(stderr)) != 0;
#else
  if (&out == &std::cout) return ::isatty(STDOUT_FILENO) != 0;
  if (&out == &std::cerr || &out == &std::clog) return ::isatty(STDERR_FILENO) != 0;
#endif
  return false;
}

/// @p seconds as `4.2s`, `2m05s` or `1h02m`.
inline std::string duration_text(double seconds) {
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

/// @brief Reports a training loop's progress on a stream (see the file's
/// description for the two forms).
class progress {
 public:
  /// Progress over @p total epochs (> 0), written to @p out.
  explicit progress(index_t total, std::ostream& out = std::cout, progress_options options = {})
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

  /// Epoch @p epoch (1 … total) ended with loss @p loss.
  void update(index_t epoch, double loss) { update(epoch, {{"loss", loss}}); }

  /// Epoch @p epoch (1 … total) ended with the named @p values (`{{"loss", l}, {"ppl", p}}`).
  void update(index_t epoch, std::vector<std::pair<std::string, double>> const& values) {
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

  /// Ends a redrawn line that the last epoch did not end (a loop stopped early).
  void finish() {
    if (terminal_ && drawn_ > 0) {
      *out_ << '\n';
      out_->flush();
      drawn_ = 0;
    }
  }

  /// Whether the line is redrawn in place.
  bool terminal() const noexcept { return terminal_; }
  /// The last epoch reported (0 before the first).
  index_t last_epoch() const noexcept { return last_; }

  /// @brief The text of one report: `epoch 3/10  loss 0.123456  0.8s elapsed  ETA 1.9s`.
  std::string line(index_t epoch, std::vector<std::pair<std::string, double>> const& values, double elapsed) const {
    std::ostringstream s;
    s << options_.unit << ' ' << epoch << '/' << total_;
    s << std::fixed << std::setprecision(options_.precision);
    for (auto const& [name, value] : values) s << "  " << name << ' ' << value;
    double const remaining = elapsed / static_cast<double>(epoch) * static_cast<double>(total_ - epoch);
    s << "  " << detail::duration_text(elapsed) << " elapsed";
    if (epoch < total_) s << "  ETA " << detail::duration_text(remaining);
    return s.str();
  }

 private:
  index_t total_;
  std::ostream* out_;
  progress_options options_;
  bool terminal_ = false;
  double start_ = 0;
  std::size_t drawn_ = 0;
  index_t last_ = 0;
};

}  // namespace dimtensor::optim
