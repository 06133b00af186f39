#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/ops/random.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace random_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;

template <class Tensor>
std::vector<double> values(Tensor const& t) {
  std::vector<double> v(static_cast<std::size_t>(t.size()));
  for (dt::index_t i = 0; i < t.size(); ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(t.data()[i]);
  return v;
}

struct moments {
  double mean = 0;
  double var = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
};

moments moments_of(std::vector<double> const& v) {
  moments m;
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size() - 1);
  return m;
}

constexpr dt::index_t draws = 100000;

}  // namespace

TEST_CASE("generator: the engine is the standard's mt19937_64 and the conversions are fixed", "[ops][random]") {
  // The standard fixes mt19937_64's 10000th output for the default seed 5489.
  dt::generator g5489(5489);
  std::uint64_t x = 0;
  for (int i = 0; i < 10000; ++i) x = g5489.next_u64();
  CHECK(x == 9981545732273789042ULL);

  dt::generator g(42);
  std::mt19937_64 ref(42);
  for (int i = 0; i < 5; ++i) CHECK(g.next_double() == static_cast<double>(ref() >> 11) * 0x1.0p-53);
  for (int i = 0; i < 5; ++i) CHECK(g.next_float() == static_cast<float>(ref() >> 40) * 0x1.0p-24f);
  CHECK(g.initial_seed() == 42);
  CHECK(dt::generator().initial_seed() == 67280421310721ULL);
}

TEST_CASE("mt19937_64 draws std::mt19937_64's stream, reseeds, and serves <random>'s distributions",
          "[ops][random]") {
  // Two twists and more, from several seeds, then after reseeding.
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{5489}, std::uint64_t{42}, ~std::uint64_t{0}}) {
    dt::mt19937_64 ours(seed);
    std::mt19937_64 ref(seed);
    std::size_t differing = 0;
    for (int i = 0; i < 1000; ++i) differing += ours() != ref() ? 1 : 0;
    CHECK(differing == 0);
    ours.seed(seed + 1);
    ref.seed(seed + 1);
    ours.discard(700);
    ref.discard(700);
    CHECK(ours() == ref());
  }
  static_assert(dt::mt19937_64::min() == std::mt19937_64::min() && dt::mt19937_64::max() == std::mt19937_64::max());
  dt::mt19937_64 a(7);
  dt::mt19937_64 b = a;
  CHECK(a == b);
  (void)a();
  CHECK_FALSE(a == b);
  std::uniform_int_distribution<int> dice(1, 6);
  dt::generator g(3);
  int const roll = dice(g.engine());
  CHECK((roll >= 1 && roll <= 6));
}

TEST_CASE("randn follows Marsaglia's polar method on the generator's doubles", "[ops][random]") {
  dt::generator g(7);
  auto const t = dt::randn<double>(g, Batch(3), Queries(5));
  // An independent rendering of the method: pairs (u, v) in the unit disc, both values used.
  std::mt19937_64 ref(7);
  auto const u01 = [&] { return static_cast<double>(ref() >> 11) * 0x1.0p-53; };
  std::vector<double> want;
  while (want.size() < 16) {
    double u = 0, v = 0, s = 0;
    do {
      u = 2 * u01() - 1;
      v = 2 * u01() - 1;
      s = u * u + v * v;
    } while (s >= 1 || s == 0);
    double const m = std::sqrt(-2 * std::log(s) / s);
    want.push_back(u * m);
    want.push_back(v * m);
  }
  for (dt::index_t i = 0; i < 15; ++i) CHECK(t.data()[i] == want[static_cast<std::size_t>(i)]);
  // The 16th value was kept for the next draw.
  CHECK(g.next_normal() == want[15]);
  // Reseeding drops it.
  g.seed(7);
  CHECK(dt::randn<double>(g, Batch(1)).data()[0] == want[0]);
}

TEST_CASE("the same seed gives the same tensors, different seeds different ones", "[ops][random]") {
  dt::generator a(123);
  dt::generator b(123);
  dt::generator c(124);
  auto const x = dt::rand<float>(a, Batch(4), Hidden(8));
  auto const y = dt::rand<float>(b, Batch(4), Hidden(8));
  auto const z = dt::rand<float>(c, Batch(4), Hidden(8));
  CHECK(values(x) == values(y));
  CHECK(values(x) != values(z));

  dt::generator const saved = a;  // a copy replays the stream
  dt::generator replay = saved;
  CHECK(values(dt::randn<float>(a, Batch(33))) == values(dt::randn<float>(replay, Batch(33))));
  CHECK(values(dt::randint<std::int64_t>(a, -5, 5, Batch(20))) ==
        values(dt::randint<std::int64_t>(replay, -5, 5, Batch(20))));

  // The overloads without a generator use default_generator(), which manual_seed reseeds.
  dt::manual_seed(99);
  CHECK(dt::default_generator().initial_seed() == 99);
  auto const d1 = dt::randn<float>(Batch(5), Queries(3));
  auto const d2 = dt::normal<double>(1.0, 2.0, Batch(4));
  auto const d3 = dt::uniform<float>(-1.0, 1.0, Batch(4));
  auto const d4 = dt::randint<std::int32_t>(0, 100, Batch(4));
  auto const d5 = dt::bernoulli<bool>(0.5, Batch(4));
  auto const d6 = dt::rand<double>(Batch(4));
  dt::generator g(99);
  CHECK(values(d1) == values(dt::randn<float>(g, Batch(5), Queries(3))));
  CHECK(values(d2) == values(dt::normal<double>(g, 1.0, 2.0, Batch(4))));
  CHECK(values(d3) == values(dt::uniform<float>(g, -1.0, 1.0, Batch(4))));
  CHECK(values(d4) == values(dt::randint<std::int32_t>(g, 0, 100, Batch(4))));
  CHECK(values(d5) == values(dt::bernoulli<bool>(g, 0.5, Batch(4))));
  CHECK(values(d6) == values(dt::rand<double>(g, Batch(4))));
}

TEST_CASE("random factories name their extents like the other factories", "[ops][random]") {
  dt::generator g(1);
  auto const t = dt::randn<float>(g, Batch(2), Hidden::fixed<4>{});
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(t)>, dt::tensor<float, Batch, Hidden::fixed<4>>>);
  CHECK(t.extents() == std::array<dt::index_t, 2>{2, 4});
  auto const s = dt::rand<double>(g);  // rank 0
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(s)>, dt::tensor<double>>);
  CHECK(s.size() == 1);
  CHECK(dt::rand<float>(g, Batch(0)).size() == 0);
}

TEST_CASE("rand and uniform stay in range, with the right moments", "[ops][random]") {
  dt::generator g(2024);
  SECTION("rand<float>") {
    auto const m = moments_of(values(dt::rand<float>(g, Batch(draws))));
    CHECK(m.min >= 0.0);
    CHECK(m.max < 1.0);
    CHECK(m.mean == Approx(0.5).margin(0.005));
    CHECK(m.var == Approx(1.0 / 12).margin(0.002));
  }
  SECTION("rand<double>") {
    auto const m = moments_of(values(dt::rand<double>(g, Batch(draws))));
    CHECK(m.min >= 0.0);
    CHECK(m.max < 1.0);
    CHECK(m.mean == Approx(0.5).margin(0.005));
    CHECK(m.var == Approx(1.0 / 12).margin(0.002));
  }
  SECTION("uniform") {
    auto const m = moments_of(values(dt::uniform<double>(g, -2.0, 5.0, Batch(draws))));
    CHECK(m.min >= -2.0);
    CHECK(m.max < 5.0);
    CHECK(m.mean == Approx(1.5).margin(0.03));
    CHECK(m.var == Approx(49.0 / 12).margin(0.08));
  }
  SECTION("uniform<float> never rounds up to hi") {
    float const hi = std::nextafter(1.0f, 2.0f);
    auto const t = dt::uniform<float>(g, 1.0, static_cast<double>(hi), Batch(1000));
    for (dt::index_t i = 0; i < t.size(); ++i) CHECK(t.data()[i] == 1.0f);
  }
}

TEST_CASE("randn and normal have the right moments", "[ops][random]") {
  dt::generator g(31337);
  SECTION("randn<float>") {
    auto const m = moments_of(values(dt::randn<float>(g, Batch(draws))));
    CHECK(m.mean == Approx(0.0).margin(0.012));
    CHECK(m.var == Approx(1.0).margin(0.02));
  }
  SECTION("randn<double>, odd count") {
    auto const m = moments_of(values(dt::randn<double>(g, Batch(draws + 1))));
    CHECK(m.mean == Approx(0.0).margin(0.012));
    CHECK(m.var == Approx(1.0).margin(0.02));
  }
  SECTION("normal") {
    auto const m = moments_of(values(dt::normal<float>(g, 3.0, 2.0, Batch(draws))));
    CHECK(m.mean == Approx(3.0).margin(0.025));
    CHECK(std::sqrt(m.var) == Approx(2.0).margin(0.03));
    auto const c = values(dt::normal<double>(g, -1.5, 0.0, Batch(10)));
    for (double x : c) CHECK(x == -1.5);
  }
}

TEST_CASE("randint covers [lo, hi) evenly", "[ops][random]") {
  dt::generator g(5);
  auto const v = values(dt::randint<std::int64_t>(g, -3, 7, Batch(draws)));
  std::vector<int> count(10);
  bool in_range = true;
  for (double x : v) {
    in_range = in_range && x >= -3 && x < 7 && x == std::floor(x);
    if (in_range) ++count[static_cast<std::size_t>(x + 3)];
  }
  REQUIRE(in_range);
  for (int c : count) CHECK(static_cast<double>(c) / draws == Approx(0.1).margin(0.005));

  auto const f = values(dt::randint<float>(g, 0, 2, Batch(1000)));
  for (double x : f) CHECK((x == 0.0 || x == 1.0));
  auto const one = values(dt::randint<std::int32_t>(g, 41, 42, Batch(10)));
  for (double x : one) CHECK(x == 41);
  // The full int64 range works (no overflow in hi - lo).
  auto const wide = dt::randint<std::int64_t>(g, std::numeric_limits<std::int64_t>::min(),
                                              std::numeric_limits<std::int64_t>::max(), Batch(100));
  bool negative = false;
  bool positive = false;
  for (dt::index_t i = 0; i < wide.size(); ++i) {
    negative |= wide.data()[i] < 0;
    positive |= wide.data()[i] > 0;
  }
  CHECK(negative);
  CHECK(positive);
}

TEST_CASE("bernoulli draws ones with probability p", "[ops][random]") {
  dt::generator g(8);
  auto const m = moments_of(values(dt::bernoulli<float>(g, 0.3, Batch(draws))));
  CHECK(m.min == 0.0);
  CHECK(m.max == 1.0);
  CHECK(m.mean == Approx(0.3).margin(0.006));
  for (double x : values(dt::bernoulli<bool>(g, 0.0, Batch(1000)))) CHECK(x == 0.0);
  for (double x : values(dt::bernoulli<std::int32_t>(g, 1.0, Batch(1000)))) CHECK(x == 1.0);
}

TEST_CASE("random factories reject bad parameters with value_error", "[ops][random]") {
  dt::generator g;
  REQUIRE_THROWS_AS(dt::uniform<float>(g, 1.0, 1.0, Batch(2)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::uniform<float>(g, 2.0, 1.0, Batch(2)),
                      Catch::Contains("uniform: lo and hi must be finite with lo < hi, got lo 2 and hi 1"));
  REQUIRE_THROWS_WITH(dt::uniform<float>(g, 0.0, std::numeric_limits<double>::infinity(), Batch(2)),
                      Catch::Contains("got lo 0 and hi inf"));
  REQUIRE_THROWS_AS(dt::normal<float>(g, 0.0, -1.0, Batch(2)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::normal<float>(g, 0.0, -0.5, Batch(2)),
                      Catch::Contains("normal: mean must be finite and std finite and >= 0, got mean 0 and std -0.5"));
  REQUIRE_THROWS_WITH(dt::normal<double>(g, std::nan(""), 1.0, Batch(2)), Catch::Contains("got mean nan"));
  REQUIRE_THROWS_AS(dt::randint<std::int64_t>(g, 3, 3, Batch(2)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::randint<std::int64_t>(g, 5, 3, Batch(2)),
                      Catch::Contains("randint: lo must be less than hi, got lo 5 and hi 3"));
  REQUIRE_THROWS_WITH(dt::randint<std::int32_t>(g, 0, std::int64_t{1} << 32, Batch(2)),
                      Catch::Contains("randint: the range [0, 4294967296) does not fit in int32"));
  CHECK_NOTHROW(dt::randint<std::int32_t>(g, std::numeric_limits<std::int32_t>::min(),
                                          std::int64_t{std::numeric_limits<std::int32_t>::max()} + 1, Batch(2)));
  REQUIRE_THROWS_AS(dt::bernoulli<float>(g, 1.5, Batch(2)), dt::value_error);
  REQUIRE_THROWS_WITH(dt::bernoulli<float>(g, -0.25, Batch(2)), Catch::Contains("bernoulli: p must be in [0, 1], got -0.25"));
  REQUIRE_THROWS_WITH(dt::bernoulli<float>(g, std::nan(""), Batch(2)), Catch::Contains("got nan"));
  REQUIRE_THROWS_AS(dt::rand<float>(g, Batch(-1)), dt::value_error);
}

TEST_CASE("uniform and normal take bounds the element type holds, and stay inside them", "[ops][random]") {
  dt::generator g(7);
  SECTION("bounds past float's range are named, not turned into infinities") {
    REQUIRE_THROWS_WITH(dt::uniform<float>(g, -1e300, 1e300, Batch(6)),
                        Catch::Contains("uniform: lo: -1e+300 is not representable in float32"));
    REQUIRE_THROWS_WITH(dt::uniform<float>(g, 0.0, 1e39, Batch(6)),
                        Catch::Contains("uniform: hi: 1e+39 is not representable in float32"));
    REQUIRE_THROWS_WITH(dt::normal<float>(g, 1e39, 1.0, Batch(6)),
                        Catch::Contains("normal: mean: 1e+39 is not representable in float32"));
    REQUIRE_THROWS_WITH(dt::normal<float>(g, 0.0, 3e38, Batch(1000)),
                        Catch::Contains("normal: a draw") && Catch::Contains("is past float32's range"));
  }
  SECTION("an interval with no float in it") {
    REQUIRE_THROWS_WITH(dt::uniform<float>(g, 1.0, 1.0 + 1e-12, Batch(2)),
                        Catch::Contains("holds no float32 value (both bounds round to 1)"));
  }
  SECTION("the widest float and double intervals: every draw in [lo, hi)") {
    double const fmax = std::numeric_limits<float>::max();
    for (double x : values(dt::uniform<float>(g, -fmax, fmax, Batch(1000)))) {
      CHECK(std::isfinite(x));
      CHECK(x >= -fmax);
      CHECK(x < fmax);
    }
    double const dmax = std::numeric_limits<double>::max();  // hi - lo overflows double
    auto const m = moments_of(values(dt::uniform<double>(g, -dmax, dmax, Batch(1000))));
    CHECK(std::isfinite(m.min));
    CHECK(m.min >= -dmax);
    CHECK(m.max < dmax);
    CHECK(m.min < -dmax / 2);  // spread over the interval, not piled at one end
    CHECK(m.max > dmax / 2);
  }
}

}  // namespace random_test
