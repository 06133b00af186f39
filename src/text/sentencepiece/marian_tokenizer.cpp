// text::marian_tokenizer (dimtensor/text/marian_tokenizer.hpp) on
// SentencePiece, as transformers' MarianTokenizer runs it.

#include <dimtensor/text/marian_tokenizer.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <sentencepiece_processor.h>

#include <dimtensor/core/error.hpp>
#include <dimtensor/io/detail/json.hpp>

namespace dimtensor::text {

namespace json = dimtensor::detail::json;

struct marian_tokenizer::impl {
  sentencepiece::SentencePieceProcessor source;
  sentencepiece::SentencePieceProcessor target;
  std::unordered_map<std::string, std::int64_t> vocab;
  std::map<std::int64_t, std::string> tokens;
  std::vector<std::string> specials;  // as written, longest first
  std::int64_t eos = 0;
  std::int64_t unk = 1;
  std::int64_t pad = 0;
};

namespace {

constexpr std::string_view op = "marian_tokenizer";

void load(sentencepiece::SentencePieceProcessor& sp, std::filesystem::path const& file) {
  if (!std::filesystem::exists(file)) throw io_error(std::string(op) + ": cannot open " + file.string());
  auto const status = sp.Load(file.string());
  if (!status.ok()) throw io_error(std::string(op) + ": " + file.string() + ": not a SentencePiece model: " + status.ToString());
}

std::int64_t special_id(std::unordered_map<std::string, std::int64_t> const& vocab, std::string const& token,
                        std::filesystem::path const& file) {
  auto const it = vocab.find(token);
  if (it == vocab.end()) throw io_error(std::string(op) + ": " + file.string() + " has no " + token);
  return it->second;
}

}  // namespace

marian_tokenizer::marian_tokenizer(std::filesystem::path const& folder) {
  auto m = std::make_shared<impl>();
  load(m->source, folder / "source.spm");
  load(m->target, folder / "target.spm");
  auto const file = folder / "vocab.json";
  std::ifstream in(file, std::ios::binary);
  if (!in) throw io_error(std::string(op) + ": cannot open " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  json::value root;
  try {
    root = json::parse(text.str());
  } catch (value_error const& e) {
    throw io_error(std::string(op) + ": " + file.string() + ": not valid JSON: " + e.what());
  }
  if (root.type() != json::kind::object) throw io_error(std::string(op) + ": " + file.string() + " is not an object of tokens and ids");
  for (auto const& [token, id] : root.as_object()) {
    if (id.type() != json::kind::integer || id.as_integer() < 0) {
      throw io_error(std::string(op) + ": " + file.string() + ": the id of " + token + " is not an id");
    }
    m->vocab.emplace(token, id.as_integer());
    m->tokens.emplace(id.as_integer(), token);
  }
  m->eos = special_id(m->vocab, "</s>", file);
  m->unk = special_id(m->vocab, "<unk>", file);
  m->pad = special_id(m->vocab, "<pad>", file);
  m->specials = {"</s>", "<unk>", "<pad>"};
  std::stable_sort(m->specials.begin(), m->specials.end(), [](auto const& a, auto const& b) { return a.size() > b.size(); });
  impl_ = std::move(m);
}

std::vector<std::string> marian_tokenizer::tokenize(std::string_view text) const {
  impl const& m = *impl_;
  std::vector<std::string> out;
  auto const run = [&](std::string_view chunk) {
    if (chunk.empty()) return;
    if (chunk.starts_with(">>")) {
      if (auto const end = chunk.find("<<"); end != std::string_view::npos) {
        out.emplace_back(chunk.substr(0, end + 2));
        chunk.remove_prefix(end + 2);
      }
    }
    std::vector<std::string> pieces;
    auto const status = m.source.Encode(std::string(chunk), &pieces);
    if (!status.ok()) throw value_error(std::string(op) + ": " + status.ToString());
    out.insert(out.end(), pieces.begin(), pieces.end());
  };
  std::size_t from = 0;
  for (std::size_t i = 0; i < text.size();) {
    auto const hit = std::find_if(m.specials.begin(), m.specials.end(),
                                  [&](std::string const& s) { return text.substr(i).starts_with(s); });
    if (hit == m.specials.end()) {
      ++i;
      continue;
    }
    run(text.substr(from, i - from));
    out.push_back(*hit);
    i += hit->size();
    from = i;
  }
  run(text.substr(from));
  return out;
}

std::vector<std::int64_t> marian_tokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> ids;
  for (auto const& t : tokenize(text)) ids.push_back(token_to_id(t).value_or(impl_->unk));
  ids.push_back(impl_->eos);
  return ids;
}

std::string marian_tokenizer::decode(std::span<std::int64_t const> ids, bool skip_special_tokens) const {
  impl const& m = *impl_;
  std::string out;
  std::vector<std::string> pieces;
  auto const flush = [&] {
    std::string text;
    auto const status = m.source.Decode(pieces, &text);
    if (!status.ok()) throw value_error(std::string(op) + ": " + status.ToString());
    out += text;
    pieces.clear();
  };
  for (std::int64_t id : ids) {
    bool const special = id == m.eos || id == m.unk || id == m.pad;
    if (special && skip_special_tokens) continue;
    std::string token;
    if (auto const it = m.tokens.find(id); it != m.tokens.end()) {
      token = it->second;
    } else if (id >= 0 && id < m.source.GetPieceSize()) {
      token = m.source.IdToPiece(static_cast<int>(id));
    } else {
      throw value_error(std::string(op) + ": id " + std::to_string(id) + " is not in the vocabulary");
    }
    if (special) {
      flush();
      out += token + " ";
    } else {
      pieces.push_back(std::move(token));
    }
  }
  flush();
  // "▁" as spaces, then the ends trimmed, as convert_tokens_to_string
  for (std::size_t at = out.find("\xE2\x96\x81"); at != std::string::npos; at = out.find("\xE2\x96\x81", at + 1)) {
    out.replace(at, 3, " ");
  }
  auto const first = out.find_first_not_of(" \t\n\r\f\v");
  if (first == std::string::npos) return {};
  auto const last = out.find_last_not_of(" \t\n\r\f\v");
  return out.substr(first, last - first + 1);
}

std::optional<std::int64_t> marian_tokenizer::token_to_id(std::string_view token) const {
  auto const it = impl_->vocab.find(std::string(token));
  return it == impl_->vocab.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

std::int64_t marian_tokenizer::eos_id() const noexcept { return impl_->eos; }
std::int64_t marian_tokenizer::pad_id() const noexcept { return impl_->pad; }
std::int64_t marian_tokenizer::vocab_size() const noexcept { return static_cast<std::int64_t>(impl_->vocab.size()); }

}  // namespace dimtensor::text
