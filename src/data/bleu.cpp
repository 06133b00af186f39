// data::bleu: d2l's BLEU over space-separated tokens.
#include <dimtensor/data/bleu.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/core/error.hpp>

namespace dimtensor::data {

namespace {

// Python's str.split(' '): every single space separates, empty tokens kept.
std::vector<std::string_view> split_on_spaces(std::string_view text) {
  std::vector<std::string_view> tokens;
  std::size_t start = 0;
  while (true) {
    std::size_t const space = text.find(' ', start);
    if (space == std::string_view::npos) {
      tokens.push_back(text.substr(start));
      return tokens;
    }
    tokens.push_back(text.substr(start, space - start));
    start = space + 1;
  }
}

// The n tokens from i, joined by spaces (an n-gram's key, as d2l's ' '.join).
std::string ngram(std::vector<std::string_view> const& tokens, std::size_t i, std::size_t n) {
  std::string key(tokens[i]);
  for (std::size_t j = 1; j < n; ++j) {
    key += ' ';
    key += tokens[i + j];
  }
  return key;
}

}  // namespace

double bleu(std::string_view pred_seq, std::string_view label_seq, int k) {
  if (k < 1) throw value_error("bleu: k must be at least 1, got " + std::to_string(k));
  auto const pred = split_on_spaces(pred_seq);
  auto const label = split_on_spaces(label_seq);
  double const len_pred = static_cast<double>(pred.size());
  double const len_label = static_cast<double>(label.size());
  double score = std::exp(std::min(0.0, 1.0 - len_label / len_pred));
  for (std::size_t n = 1; n <= static_cast<std::size_t>(k); ++n) {
    if (pred.size() < n) return 0.0;  // no n-grams to count: d2l divides by zero here
    std::map<std::string, int> label_subs;
    for (std::size_t i = 0; i + n <= label.size(); ++i) ++label_subs[ngram(label, i, n)];
    int matches = 0;
    for (std::size_t i = 0; i + n <= pred.size(); ++i) {
      auto const it = label_subs.find(ngram(pred, i, n));
      if (it != label_subs.end() && it->second > 0) {
        ++matches;
        --it->second;
      }
    }
    double const precision = matches / static_cast<double>(pred.size() - n + 1);
    score *= std::pow(precision, std::pow(0.5, static_cast<double>(n)));
  }
  return score;
}

}  // namespace dimtensor::data
