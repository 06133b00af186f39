#pragma once
/// @file
/// @brief `models::beam_search`: `transformers`' `generate(num_beams=k)`
/// (its beam search, without sampling) over any model that gives the next
/// token's logits for a batch of beams, with `models::beam_options`
/// (beams, length penalty, early stopping).
///
/// The rule, step by step (transformers 5's `_beam_search`): each beam's
/// log-softmax plus its running score; the 2k best continuations of each
/// batch item over its k beams; those ending with the end token (or
/// reaching the length limit) among the first k enter the item's finished
/// hypotheses with the score divided by (generated length)^length_penalty,
/// where they displace worse ones; the k best others run on.  An item
/// stops improving when every one of its k hypotheses is finished and its
/// best running beam cannot beat the worst of them (`early_stopping`
/// false: at its current length; "never": at the longest length when the
/// penalty favours length; true: as soon as k are finished); decoding
/// stops when no item can improve, or every continuation has ended.  The
/// best hypothesis of each item is returned, shorter ones padded.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <dimtensor/config.hpp>
#include <dimtensor/core/error.hpp>

namespace dimtensor::models {

/// @brief How `beam_search` stops early (`transformers`' `early_stopping`).
enum class early_stopping {
  /// false: stop an item when its best running beam, at its current length, cannot beat its finished ones.
  heuristic,
  /// true: stop an item as soon as it has num_beams finished hypotheses.
  on_full,
  /// "never": as heuristic, but at the longest length when the length penalty is positive.
  never,
};

/// @brief Options of `beam_search` (`generate`'s names and defaults).
struct beam_options {
  /// Beams per batch item (`num_beams`).
  index_t num_beams = 4;
  /// A finished hypothesis scores its log-probability / (generated length)^length_penalty.
  double length_penalty = 1.0;
  /// When an item stops.
  models::early_stopping early_stopping = early_stopping::heuristic;
};

/// @brief Beam search over @p batch items, from the token @p start, for at
/// most @p max_new tokens, ending a hypothesis at @p eos and padding the
/// returned ones with @p pad.
///
/// @p step(feed, from) is the model: @p from[r] is the beam (of the
/// previous call's `batch * num_beams` rows; empty on the first call) that
/// row r continues, so a cache is reordered by it; @p feed[r] is row r's
/// last token; it returns the next token's logits, `batch * num_beams`
/// rows of the vocabulary's size, row-major.  Returns each item's best
/// hypothesis, the start token first, all of the longest one's length.
inline std::vector<std::vector<std::int64_t>> beam_search(
    index_t batch, std::int64_t start, std::int64_t eos, std::int64_t pad, index_t max_new, beam_options const& o,
    std::function<std::vector<double>(std::vector<std::int64_t> const& feed, std::vector<index_t> const& from)> const&
        step) {
  index_t const k = o.num_beams;
  if (k < 1) throw value_error("beam_search: num_beams " + std::to_string(k) + " is not positive");
  if (max_new < 0) throw value_error("beam_search: max_new_tokens " + std::to_string(max_new) + " is negative");
  double const lowest = -1e9;  // transformers' score of an empty slot
  index_t const keep = 2 * k;  // one end token: max(2, 1 + 1) * k continuations
  auto const at = [](index_t i) { return static_cast<std::size_t>(i); };
  struct hypothesis {
    std::vector<std::int64_t> tokens;
    double score = -1e9;
    bool finished = false;
  };
  std::vector<std::vector<hypothesis>> running(at(batch)), finished(at(batch));
  std::vector<bool> improvable(at(batch), true);
  for (index_t b = 0; b < batch; ++b) {
    running[at(b)].assign(at(k), hypothesis{{start}, lowest, false});
    running[at(b)][0].score = 0;
    finished[at(b)].assign(at(k), hypothesis{{start}, lowest, false});
  }
  std::vector<index_t> from;
  index_t cur_len = 1;
  index_t const max_length = 1 + max_new;
  // The first n of @p scores' indices by descending score (ties: the lower index first).
  auto const top = [](std::vector<double> const& scores, index_t n) {
    std::vector<index_t> idx(scores.size());
    std::iota(idx.begin(), idx.end(), index_t{0});
    std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), [&scores](index_t x, index_t y) {
      auto const sx = scores[static_cast<std::size_t>(x)], sy = scores[static_cast<std::size_t>(y)];
      return sx > sy || (sx == sy && x < y);
    });
    idx.resize(static_cast<std::size_t>(n));
    return idx;
  };
  while (cur_len < max_length) {
    std::vector<std::int64_t> feed(at(batch * k));
    for (index_t b = 0; b < batch; ++b) {
      for (index_t j = 0; j < k; ++j) feed[at(b * k + j)] = running[at(b)][at(j)].tokens.back();
    }
    std::vector<double> const logits = step(feed, from);
    index_t const vocab = static_cast<index_t>(logits.size()) / (batch * k);
    if (vocab * batch * k != static_cast<index_t>(logits.size()) || vocab < keep) {
      throw value_error("beam_search: the model gave " + std::to_string(logits.size()) + " logits for " +
                        std::to_string(batch * k) + " beams (a vocabulary of at least " + std::to_string(keep) +
                        " each)");
    }
    from.assign(at(batch * k), 0);
    bool all_hit = true;
    for (index_t b = 0; b < batch; ++b) {
      auto& run = running[at(b)];
      // Each beam's log-softmax plus its running score, over beams x vocabulary.
      std::vector<double> acc(at(k * vocab));
      for (index_t j = 0; j < k; ++j) {
        double const* row = logits.data() + (b * k + j) * vocab;
        double const m = *std::max_element(row, row + vocab);
        double sum = 0;
        for (index_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - m);
        double const lse = m + std::log(sum);
        for (index_t v = 0; v < vocab; ++v) acc[at(j * vocab + v)] = row[v] - lse + run[at(j)].score;
      }
      std::vector<index_t> const cand = top(acc, keep);
      std::vector<hypothesis> next(at(keep));
      std::vector<index_t> source(at(keep));
      std::vector<bool> hit(at(keep));
      std::vector<double> run_scores(at(keep)), fin_scores(at(keep));
      bool const full = std::all_of(finished[at(b)].begin(), finished[at(b)].end(),
                                    [](hypothesis const& h) { return h.finished; });
      for (index_t c = 0; c < keep; ++c) {
        index_t const beam = cand[at(c)] / vocab;
        std::int64_t const token = cand[at(c)] % vocab;
        double const score = acc[at(cand[at(c)])];
        next[at(c)].tokens = run[at(beam)].tokens;
        next[at(c)].tokens.push_back(token);
        next[at(c)].score = score;
        source[at(c)] = beam;
        hit[at(c)] = token == eos || cur_len + 1 >= max_length;
        all_hit = all_hit && hit[at(c)];
        run_scores[at(c)] = score + (hit[at(c)] ? lowest : 0.0);
        double f = score / std::pow(static_cast<double>(cur_len), o.length_penalty);
        if (full && o.early_stopping == early_stopping::on_full) f += lowest;
        if (!improvable[at(b)]) f += lowest;
        if (!(hit[at(c)] && c < k)) f += lowest;
        fin_scores[at(c)] = f;
      }
      // The k best continuations that have not ended run on.
      std::vector<index_t> const go = top(run_scores, k);
      std::vector<hypothesis> kept(at(k));
      for (index_t j = 0; j < k; ++j) {
        kept[at(j)] = next[at(go[at(j)])];
        kept[at(j)].score = run_scores[at(go[at(j)])];
        from[at(b * k + j)] = b * k + source[at(go[at(j)])];
      }
      run = std::move(kept);
      // The finished hypotheses and the ones just ended: the k best.
      std::vector<hypothesis> merged = finished[at(b)];
      std::vector<double> merged_scores;
      for (auto const& h : merged) merged_scores.push_back(h.score);
      for (index_t c = 0; c < keep; ++c) {
        merged.push_back({next[at(c)].tokens, fin_scores[at(c)], hit[at(c)] && c < k});
        merged_scores.push_back(fin_scores[at(c)]);
      }
      std::vector<index_t> const best = top(merged_scores, k);
      std::vector<hypothesis> now(at(k));
      for (index_t j = 0; j < k; ++j) now[at(j)] = merged[at(best[at(j)])];
      finished[at(b)] = std::move(now);
    }
    ++cur_len;
    // Whether an item's best running beam can still beat its finished ones.
    bool any_improvable = false, all_full = true;
    for (index_t b = 0; b < batch; ++b) {
      auto const& fin = finished[at(b)];
      index_t const length = o.early_stopping == early_stopping::never && o.length_penalty > 0.0 ? max_length - 1
                                                                                                 : cur_len - 1;
      double const best_possible = running[at(b)][0].score / std::pow(static_cast<double>(length), o.length_penalty);
      double worst = fin[0].score;
      for (auto const& h : fin) worst = std::min(worst, h.score);
      bool beats = false;
      for (auto const& h : fin) beats = beats || best_possible > (h.finished ? worst : lowest);
      improvable[at(b)] = improvable[at(b)] && beats;
      any_improvable = any_improvable || improvable[at(b)];
      for (auto const& h : fin) all_full = all_full && h.finished;
    }
    bool const open = !(all_full && o.early_stopping == early_stopping::on_full);
    if (!(any_improvable && open && !all_hit)) break;
  }
  std::vector<std::vector<std::int64_t>> out(at(batch));
  std::size_t longest = 0;
  for (index_t b = 0; b < batch; ++b) {
    out[at(b)] = finished[at(b)][0].tokens;
    longest = std::max(longest, out[at(b)].size());
  }
  for (auto& row : out) row.resize(longest, pad);
  return out;
}

}  // namespace dimtensor::models
