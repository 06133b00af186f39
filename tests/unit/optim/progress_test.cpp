#include <catch2/catch.hpp>

#include <functional>
#include <iostream>
#include <sstream>
#include <string>

#include <dimtensor/optim/progress.hpp>

namespace optim = dimtensor::optim;

namespace progress_test {

// A clock that the test moves by hand.
struct fake_clock {
  double now = 100;
  std::function<double()> fn() {
    return [this] { return now; };
  }
};

TEST_CASE("progress: plain lines every K epochs and the last", "[optim][progress]") {
  std::ostringstream out;
  fake_clock clock;
  optim::progress_options options;
  options.terminal = false;
  options.every = 2;
  options.clock = clock.fn();
  optim::progress bar(5, out, options);
  CHECK_FALSE(bar.terminal());
  for (int epoch = 1; epoch <= 5; ++epoch) {
    clock.now += 1.5;
    bar.update(epoch, 1.0 / epoch);
  }
  bar.finish();
  CHECK(out.str() ==
        "epoch 2/5  loss 0.500000  3.0s elapsed  ETA 4.5s\n"
        "epoch 4/5  loss 0.250000  6.0s elapsed  ETA 1.5s\n"
        "epoch 5/5  loss 0.200000  7.5s elapsed\n");
  CHECK(bar.last_epoch() == 5);
}

TEST_CASE("progress: one line redrawn on a terminal", "[optim][progress]") {
  std::ostringstream out;
  fake_clock clock;
  optim::progress_options options;
  options.terminal = true;
  options.precision = 2;
  options.clock = clock.fn();
  optim::progress bar(3, out, options);
  clock.now += 100;
  bar.update(1, {{"loss", 12.5}, {"ppl", 3}});
  clock.now += 100;
  bar.update(2, 1.25);
  // The second line is 11 characters shorter: spaces cover the rest of the first.
  CHECK(out.str() ==
        "\repoch 1/3  loss 12.50  ppl 3.00  1m40s elapsed  ETA 3m20s"
        "\repoch 2/3  loss 1.25  3m20s elapsed  ETA 1m40s" +
            std::string(11, ' '));
  SECTION("the last epoch ends the line") {
    clock.now += 3400;
    bar.update(3, 0.5);
    CHECK(out.str().substr(out.str().rfind('\r')) == "\repoch 3/3  loss 0.50  1h00m elapsed" + std::string(11, ' ') + "\n");
    bar.finish();  // nothing more
    CHECK(out.str().back() == '\n');
    CHECK(out.str()[out.str().size() - 2] == ' ');
  }
  SECTION("finish() ends a line a loop left early") {
    bar.finish();
    CHECK(out.str().back() == '\n');
  }
}

TEST_CASE("progress: a stream that is not std::cout is no terminal", "[optim][progress]") {
  std::ostringstream out;
  optim::progress bar(2, out);
  CHECK_FALSE(bar.terminal());
  bar.update(1, 0.5);
  CHECK(out.str().rfind("epoch 1/2  loss 0.500000  ", 0) == 0);
  CHECK(out.str().find("elapsed  ETA ") != std::string::npos);
}

TEST_CASE("progress: bad arguments", "[optim][progress]") {
  std::ostringstream out;
  REQUIRE_THROWS_AS(optim::progress(0, out), dimtensor::value_error);
  REQUIRE_THROWS_WITH(optim::progress(0, out), Catch::Contains("epochs"));
  optim::progress_options options;
  options.every = 0;
  REQUIRE_THROWS_WITH(optim::progress(3, out, options), Catch::Contains("every"));
  optim::progress bar(3, out);
  REQUIRE_THROWS_WITH(bar.update(4, 1.0), Catch::Contains("epoch 4") && Catch::Contains("[1, 3]"));
  REQUIRE_THROWS_WITH(bar.update(0, 1.0), Catch::Contains("epoch 0"));
}

TEST_CASE("progress_clock: empty by default; holds a lambda or a std::function; copies share it",
          "[optim][progress]") {
  optim::progress_clock none;
  CHECK_FALSE(none);
  double now = 3;
  optim::progress_clock lambda = [&now] { return now; };
  REQUIRE(lambda);
  now = 4;
  CHECK(lambda() == 4);
  std::function<double()> const f = [] { return 7.5; };
  optim::progress_clock wrapped = f;
  CHECK(wrapped() == 7.5);
  int calls = 0;
  optim::progress_clock counting = [calls]() mutable { return static_cast<double>(++calls); };
  optim::progress_clock copy = counting;
  CHECK(counting() == 1);
  CHECK(copy() == 2);
}

TEST_CASE("progress: the one-argument form writes to std::cout", "[optim][progress]") {
  optim::progress bar(3);
  // std::cout is no terminal under CTest; what it is elsewhere, isatty says.
  CHECK(bar.terminal() == optim::detail::is_terminal(std::cout));
  CHECK(bar.last_epoch() == 0);
}

}  // namespace progress_test
