// data::bleu: d2l's BLEU on the book's translations, clipped counts, the
// brevity penalty, and where d2l would divide by zero.
#include <catch2/catch.hpp>

#include <cmath>

#include <dimtensor/core/error.hpp>
#include <dimtensor/data/bleu.hpp>

namespace data = dimtensor::data;

TEST_CASE("bleu: the book's translations", "[data][bleu]") {
  // go . => va !, bleu 1.000 ... he's calm . => il est riche ., bleu 0.658
  CHECK(data::bleu("va !", "va !", 2) == 1.0);
  CHECK(data::bleu("je suis chez moi .", "je suis chez moi .", 2) == 1.0);
  // Unigrams 3 of 4, bigrams 1 of 3: (3/4)^(1/2) · (1/3)^(1/4).
  double const riche = std::sqrt(0.75) * std::pow(1.0 / 3.0, 0.25);
  CHECK(data::bleu("il est riche .", "il est calme .", 2) == Approx(riche).epsilon(1e-15));
  CHECK(std::round(riche * 1000) / 1000 == 0.658);
}

TEST_CASE("bleu: clipped n-gram counts and the brevity penalty", "[data][bleu]") {
  // "a a a" against "a b": one "a" in the label, so 1 of 3 unigrams match; no bigram does.
  CHECK(data::bleu("a a a", "a b", 1) == Approx(std::pow(1.0 / 3.0, 0.5)));
  CHECK(data::bleu("a a a", "a b", 2) == 0.0);
  // A prediction shorter than the label: exp(1 - 4/2) times full precision.
  CHECK(data::bleu("c d", "a b c d", 2) == Approx(std::exp(1.0 - 2.0)));
  // Longer than the label: no penalty, precision only.
  CHECK(data::bleu("a b c d", "a b", 1) == Approx(std::sqrt(0.5)));
  // k = 3 adds trigrams with weight 1/8.
  CHECK(data::bleu("a b c d", "a b c e", 3) ==
        Approx(std::pow(0.75, 0.5) * std::pow(2.0 / 3.0, 0.25) * std::pow(0.5, 0.125)));
}

TEST_CASE("bleu: no n-grams to count gives 0; k below 1 is a value_error", "[data][bleu]") {
  CHECK(data::bleu("va", "va !", 2) == 0.0);  // one token, k = 2: d2l would divide by zero
  CHECK(data::bleu("", "va !", 1) == 0.0);    // "".split(' ') is one empty token, matching nothing
  CHECK_THROWS_AS(data::bleu("va !", "va !", 0), dimtensor::value_error);
}
