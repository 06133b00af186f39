#pragma once
/// @file
/// @brief Random tensors: `rand`, `randn`, `normal`, `uniform`, `randint`,
/// `bernoulli`, drawn from a seedable `generator`.
///
/// Extents are named as for the other factories:
/// `randn<float>(gen, Batch(2), Queries(1), QueryFeat(20))`.  Each factory
/// has an overload without the generator that draws from the process-wide
/// `default_generator()` (seeded with PyTorch's default seed, 67280421310721,
/// and reseeded by `manual_seed`).
///
/// The streams are the same on every platform and standard library: the
/// engine is the 64-bit Mersenne Twister, `dimtensor::mt19937_64`, which
/// draws exactly `std::mt19937_64`'s stream (the standard fixes it) without
/// making every file that includes the library parse `<random>`, and the
/// conversions to uniform reals, bounded integers and normals are written
/// here rather than taken from `<random>`'s distributions, which differ
/// between implementations.  The values are not PyTorch's (its CPU kernels
/// use other algorithms); parity tests load their inputs from `.npy` goldens.
/// Elements are drawn in row-major order.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <array>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/core/convert.hpp>
#include <dimtensor/core/error.hpp>
#include <dimtensor/ops/creation.hpp>
#include <dimtensor/tensor/tensor.hpp>

namespace dimtensor {

/// @brief The 64-bit Mersenne Twister of [rand.predef]: the same stream as
/// `std::mt19937_64` from the same seed, and a uniform random bit generator,
/// so `<random>`'s distributions accept it.
class mt19937_64 {
 public:
  /// What a draw returns.
  using result_type = std::uint64_t;
  /// The seed of a default-constructed engine (the standard's).
  static constexpr result_type default_seed = 5489u;

  /// An engine seeded with @p seed.
  explicit mt19937_64(result_type seed = default_seed) noexcept { this->seed(seed); }

  /// Restarts the stream from @p seed.
  void seed(result_type seed) noexcept {
    state_[0] = seed;
    for (std::size_t i = 1; i < n; ++i) {
      state_[i] = 6364136223846793005ULL * (state_[i - 1] ^ (state_[i - 1] >> 62)) + i;
    }
    next_ = n;
  }

  /// The smallest draw.
  static constexpr result_type min() noexcept { return 0; }
  /// The largest draw.
  static constexpr result_type max() noexcept { return ~result_type{0}; }

  /// The next 64 random bits.
  result_type operator()() noexcept {
    if (next_ == n) twist();
    result_type y = state_[next_++];
    y ^= (y >> 29) & 0x5555555555555555ULL;
    y ^= (y << 17) & 0x71d67fffeda60000ULL;
    y ^= (y << 37) & 0xfff7eee000000000ULL;
    return y ^ (y >> 43);
  }

  /// Skips @p z draws.
  void discard(unsigned long long z) noexcept {
    for (; z > 0; --z) (*this)();
  }

  /// Same state: the same stream from here on.
  friend bool operator==(mt19937_64 const&, mt19937_64 const&) = default;

 private:
  static constexpr std::size_t n = 312;
  static constexpr std::size_t m = 156;

  void twist() noexcept {
    constexpr result_type upper = ~result_type{0} << 31;
    for (std::size_t i = 0; i < n; ++i) {
      result_type const y = (state_[i] & upper) | (state_[(i + 1) % n] & ~upper);
      state_[i] = state_[(i + m) % n] ^ (y >> 1) ^ ((y & 1) != 0 ? 0xb5026f5aa96619e9ULL : 0);
    }
    next_ = 0;
  }

  std::array<result_type, n> state_{};
  std::size_t next_ = n;
};

/// @brief A seedable source of random numbers: `mt19937_64` (the stream of
/// `std::mt19937_64`) and portable conversions of its output.
///
/// Copying a generator copies its state (the copy replays the same stream).
/// A generator is not synchronized: give each thread its own.
class generator {
 public:
  /// The underlying engine.
  using engine_type = mt19937_64;
  /// The seed of a default-constructed generator (PyTorch's default seed).
  static constexpr std::uint64_t default_seed = 67280421310721ULL;

  /// A generator seeded with @p seed.
  explicit generator(std::uint64_t seed = default_seed) : engine_(seed), seed_(seed) {}

  /// Restarts the stream from @p seed.
  void seed(std::uint64_t seed) {
    engine_.seed(seed);
    seed_ = seed;
    has_spare_ = false;
  }
  /// The seed the current stream started from.
  std::uint64_t initial_seed() const noexcept { return seed_; }

  /// 64 random bits.
  std::uint64_t next_u64() { return engine_(); }

  /// Uniform in [0, 1): the top 53 bits of one draw, so every value is a
  /// multiple of 2^-53 and 1 is never reached.
  double next_double() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// Uniform in [0, 1) as a float: the top 24 bits of one draw (rounding a
  /// double to float could give 1).
  float next_float() { return static_cast<float>(engine_() >> 40) * 0x1.0p-24f; }

  /// Uniform in [0, n) for n > 0, without modulo bias (rejection sampling).
  std::uint64_t next_below(std::uint64_t n) {
    std::uint64_t const threshold = (0 - n) % n;  // 2^64 mod n: the draws below it would favour small results
    std::uint64_t x = engine_();
    while (x < threshold) x = engine_();
    return x % n;
  }

  /// A standard normal deviate (Marsaglia's polar method; the second value
  /// of each pair is kept for the next call).
  double next_normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u = 0;
    double v = 0;
    double s = 0;
    do {
      u = 2 * next_double() - 1;
      v = 2 * next_double() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double const m = std::sqrt(-2 * std::log(s) / s);
    spare_ = v * m;
    has_spare_ = true;
    return u * m;
  }

  /// The engine itself, for code that draws with the distributions of `<random>`.
  engine_type& engine() noexcept { return engine_; }

 private:
  engine_type engine_;
  std::uint64_t seed_;
  double spare_ = 0;
  bool has_spare_ = false;
};

/// @brief The process-wide generator the factories without a generator
/// argument draw from; starts from `generator::default_seed`.  Not synchronized.
inline generator& default_generator() {
  static generator gen;
  return gen;
}

/// Reseeds `default_generator()` (as `torch.manual_seed` does) and returns it.
inline generator& manual_seed(std::uint64_t seed) {
  default_generator().seed(seed);
  return default_generator();
}

namespace detail {

/// Fills @p t from @p draw in row-major order.  The generator is one
/// sequential stream on the host, so a seed gives the same tensor on every
/// backend; other backends receive the drawn elements in one copy.
template <class T, class Tensor, class Draw>
Tensor fill_random(Tensor t, Draw draw) {
  index_t const n = t.size();
  if constexpr (Tensor::backend::host_accessible) {
    T* p = t.data();
    for (index_t i = 0; i < n; ++i) p[i] = draw();
  } else {
    auto const staged = host_buffer<T>(n);
    for (index_t i = 0; i < n; ++i) staged[i] = draw();
    backend_copy_from_host(typename Tensor::backend{}, t.data(), static_cast<T const*>(staged.get()), n);
  }
  return t;
}

template <class T>
inline constexpr bool is_real_v = std::is_same_v<T, float> || std::is_same_v<T, double>;

}  // namespace detail

/// @name Random tensors
/// @{

/// Uniform in [0, 1): `rand<float>(gen, Batch(2), Hidden(8))`.
template <class T, detail::NamedExtent... Named>
auto rand(generator& gen, Named const&... extents) {
  static_assert(detail::is_real_v<T>, "dimtensor::rand<T>: T must be float or double (see randint for integers)");
  return detail::fill_random<T>(empty<T>(extents...), [&] {
    if constexpr (std::is_same_v<T, float>) {
      return gen.next_float();
    } else {
      return gen.next_double();
    }
  });
}

/// Standard normal (mean 0, standard deviation 1): `randn<float>(gen, Batch(2), Queries(1))`.
template <class T, detail::NamedExtent... Named>
auto randn(generator& gen, Named const&... extents) {
  static_assert(detail::is_real_v<T>, "dimtensor::randn<T>: T must be float or double");
  return detail::fill_random<T>(empty<T>(extents...), [&] { return static_cast<T>(gen.next_normal()); });
}

/// @brief Normal with mean @p mean and standard deviation @p std (>= 0;
/// `value_error` otherwise, or when either is not finite).
template <class T, detail::NamedExtent... Named>
auto normal(generator& gen, double mean, double std, Named const&... extents) {
  static_assert(detail::is_real_v<T>, "dimtensor::normal<T>: T must be float or double");
  if (!std::isfinite(mean) || !std::isfinite(std) || std < 0) {
    throw value_error("normal: mean must be finite and std finite and >= 0, got mean " + detail::number_text(mean) +
                      " and std " + detail::number_text(std));
  }
  (void)detail::checked_convert<T>(mean, "normal: mean");
  (void)detail::checked_convert<T>(std, "normal: std");
  return detail::fill_random<T>(empty<T>(extents...), [&] {
    double const v = mean + std * gen.next_normal();
    if (!std::isfinite(v) || !detail::representable_as<T>(v)) {
      throw value_error("normal: a draw, " + detail::number_text(v) + ", is past " +
                        std::string(detail::arithmetic_type_name<T>()) + "'s range: std " + detail::number_text(std) +
                        " is too large for the type");
    }
    return static_cast<T>(v);
  });
}

/// @brief Uniform in [@p lo, @p hi) (`value_error` unless both are finite
/// and lo < hi).
template <class T, detail::NamedExtent... Named>
auto uniform(generator& gen, double lo, double hi, Named const&... extents) {
  static_assert(detail::is_real_v<T>, "dimtensor::uniform<T>: T must be float or double (see randint for integers)");
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) {
    throw value_error("uniform: lo and hi must be finite with lo < hi, got lo " + detail::number_text(lo) +
                      " and hi " + detail::number_text(hi));
  }
  // Both bounds must be values of T (a double past float's range is none),
  // and T must have a value in [lo, hi): the draws stay inside it.
  auto const bottom = detail::checked_convert<T>(lo, "uniform: lo");
  auto const top = detail::checked_convert<T>(hi, "uniform: hi");
  if (!(bottom < top)) {
    throw value_error("uniform: [" + detail::number_text(lo) + ", " + detail::number_text(hi) + ") holds no " +
                      std::string(detail::arithmetic_type_name<T>()) + " value (both bounds round to " +
                      detail::number_text(static_cast<double>(top)) + ")");
  }
  auto const below_top = std::nextafter(top, bottom);
  // hi - lo overflows double when the bounds are near its largest values of
  // opposite signs; the convex combination cannot.
  double const width = hi - lo;
  bool const wide = !std::isfinite(width);
  return detail::fill_random<T>(empty<T>(extents...), [&] {
    double const u = gen.next_double();
    auto const x = static_cast<T>(wide ? lo * (1 - u) + hi * u : lo + width * u);
    return x < top ? x : below_top;  // rounding must not reach hi
  });
}

/// @brief Integers uniform in [@p lo, @p hi), as `torch.randint(lo, hi, ...)`:
/// `randint<std::int64_t>(gen, 0, 10, Batch(4))`.  T may be any element type
/// but bool.  `value_error` unless lo < hi and both bounds fit in T.
template <class T, detail::NamedExtent... Named>
auto randint(generator& gen, std::int64_t lo, std::int64_t hi, Named const&... extents) {
  static_assert(Element<T> && !std::is_same_v<T, bool>,
                "dimtensor::randint<T>: T must be float, double, std::int32_t or std::int64_t (see bernoulli for bool)");
  if (!(lo < hi)) {
    throw value_error("randint: lo must be less than hi, got lo " + std::to_string(lo) + " and hi " +
                      std::to_string(hi));
  }
  if (!detail::representable_as<T>(lo) || !detail::representable_as<T>(hi - 1)) {
    throw value_error("randint: the range [" + std::to_string(lo) + ", " + std::to_string(hi) + ") does not fit in " +
                      std::string(detail::arithmetic_type_name<T>()));
  }
  auto const span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  return detail::fill_random<T>(empty<T>(extents...), [&] {
    return static_cast<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + gen.next_below(span)));
  });
}

/// @brief 1 with probability @p p, else 0 (true/false for bool): a dropout
/// mask keeps elements with `bernoulli<float>(gen, 1 - p_drop, ...)`.
/// `value_error` unless 0 <= p <= 1.
template <class T, detail::NamedExtent... Named>
auto bernoulli(generator& gen, double p, Named const&... extents) {
  static_assert(Element<T>, "dimtensor::bernoulli<T>: T must be a tensor element type");
  if (!(p >= 0 && p <= 1)) throw value_error("bernoulli: p must be in [0, 1], got " + detail::number_text(p));
  return detail::fill_random<T>(empty<T>(extents...), [&] { return static_cast<T>(gen.next_double() < p); });
}

/// Uniform in [0, 1), from `default_generator()`.
template <class T, detail::NamedExtent... Named>
auto rand(Named const&... extents) {
  return rand<T>(default_generator(), extents...);
}
/// Standard normal, from `default_generator()`.
template <class T, detail::NamedExtent... Named>
auto randn(Named const&... extents) {
  return randn<T>(default_generator(), extents...);
}
/// Normal(mean, std), from `default_generator()`.
template <class T, detail::NamedExtent... Named>
auto normal(double mean, double std, Named const&... extents) {
  return normal<T>(default_generator(), mean, std, extents...);
}
/// Uniform in [lo, hi), from `default_generator()`.
template <class T, detail::NamedExtent... Named>
auto uniform(double lo, double hi, Named const&... extents) {
  return uniform<T>(default_generator(), lo, hi, extents...);
}
/// Integers in [lo, hi), from `default_generator()`.
template <class T, detail::NamedExtent... Named>
auto randint(std::int64_t lo, std::int64_t hi, Named const&... extents) {
  return randint<T>(default_generator(), lo, hi, extents...);
}
/// 1 with probability p, from `default_generator()`.
template <class T, detail::NamedExtent... Named>
auto bernoulli(double p, Named const&... extents) {
  return bernoulli<T>(default_generator(), p, extents...);
}
/// @}

}  // namespace dimtensor
