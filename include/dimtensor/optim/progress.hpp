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
///
/// The code is compiled once, in src/optim/progress.cpp (part of the
/// `dimtensor::runtime` library, which `dimtensor::dimtensor` links), so that
/// including this header costs no `<iostream>`, `<sstream>`, `<chrono>` or
/// `<functional>`.

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor::optim {

/// @brief Seconds since some fixed moment, from any callable that returns a
/// number (a lambda, a function, a `std::function<double()>`); empty by
/// default.  Copies share the callable.
class progress_clock {
 public:
  /// No clock.
  progress_clock() = default;
  /// Calls @p f.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, progress_clock> && std::is_invocable_r_v<double, F&>)
  progress_clock(F f)  // NOLINT: implicit, as std::function's
      : fn_(std::make_shared<F>(std::move(f))),
        call_([](void* p) -> double { return static_cast<double>((*static_cast<F*>(p))()); }) {}

  /// Whether there is a callable.
  explicit operator bool() const noexcept { return call_ != nullptr; }
  /// The callable's value (there must be one).
  double operator()() const { return call_(fn_.get()); }

 private:
  std::shared_ptr<void> fn_;
  double (*call_)(void*) = nullptr;
};

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
  progress_clock clock;
};

namespace detail {

/// Whether @p out writes to a terminal (std::cout or std::cerr only).
bool is_terminal(std::ostream const& out);

/// @p seconds as `4.2s`, `2m05s` or `1h02m`.
std::string duration_text(double seconds);

}  // namespace detail

/// @brief Reports a training loop's progress on a stream (see the file's
/// description for the two forms).
class progress {
 public:
  /// Progress over @p total epochs (> 0), written to std::cout.
  explicit progress(index_t total);
  /// Progress over @p total epochs (> 0), written to @p out.
  explicit progress(index_t total, std::ostream& out, progress_options options = {});

  /// Epoch @p epoch (1 … total) ended with loss @p loss.
  void update(index_t epoch, double loss) { update(epoch, {{"loss", loss}}); }

  /// Epoch @p epoch (1 … total) ended with the named @p values (`{{"loss", l}, {"ppl", p}}`).
  void update(index_t epoch, std::vector<std::pair<std::string, double>> const& values);

  /// Ends a redrawn line that the last epoch did not end (a loop stopped early).
  void finish();

  /// Whether the line is redrawn in place.
  bool terminal() const noexcept { return terminal_; }
  /// The last epoch reported (0 before the first).
  index_t last_epoch() const noexcept { return last_; }

  /// @brief The text of one report: `epoch 3/10  loss 0.123456  0.8s elapsed  ETA 1.9s`.
  std::string line(index_t epoch, std::vector<std::pair<std::string, double>> const& values, double elapsed) const;

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
