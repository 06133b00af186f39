// text::tokenizer (dimtensor/text/tokenizer.hpp): a tokenizer.json read into
// tables, and WordPiece and byte-level BPE run as the `tokenizers` library
// runs them.

#include <dimtensor/text/tokenizer.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/io/detail/json.hpp>

#include "unicode.hpp"

namespace dimtensor::text {

namespace json = dimtensor::detail::json;
using detail::char_class;

namespace {

constexpr std::string_view op = "tokenizer";

// The byte-level alphabet: each byte as a printable character (GPT-2's
// bytes_to_unicode): the printable Latin-1 bytes as themselves, the others
// as U+0100 upwards in byte order.
struct byte_alphabet {
  std::array<char32_t, 256> of{};
  std::map<char32_t, unsigned char> back;
  byte_alphabet() {
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      bool const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      of[static_cast<std::size_t>(b)] = printable ? static_cast<char32_t>(b) : next++;
      back[of[static_cast<std::size_t>(b)]] = static_cast<unsigned char>(b);
    }
  }
};

byte_alphabet const& bytes() {
  static byte_alphabet const table;
  return table;
}

bool is_bert_punctuation(char32_t c) {
  bool const ascii = (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return ascii || detail::class_of(c) == char_class::punctuation;
}

struct pair_hash {
  std::size_t operator()(std::pair<std::string, std::string> const& p) const noexcept {
    return std::hash<std::string>{}(p.first) * 31 + std::hash<std::string>{}(p.second);
  }
};

}  // namespace

struct tokenizer::impl {
  std::string where;  // "tokenizer: FILE: "
  std::string model;
  std::unordered_map<std::string, std::int64_t> vocab;
  std::unordered_map<std::int64_t, std::string> tokens;  // by id
  std::int64_t max_id = -1;

  struct added_token {
    std::u32string content;
    std::int64_t id = 0;
    bool special = false;
  };
  std::vector<added_token> added;  // longest first
  std::unordered_map<std::int64_t, bool> special_id;

  // BertNormalizer
  bool bert_normalizer = false;
  bool clean_text = true;
  bool chinese_chars = true;
  bool strip_accents = true;
  bool lowercase = true;
  // pre-tokenizer
  enum class pre { none, bert, byte_level } pre_tokenizer = pre::none;
  bool add_prefix_space = false;
  bool use_regex = true;
  // WordPiece
  std::string unk;
  std::string prefix = "##";
  std::size_t max_chars = 100;
  // BPE
  std::unordered_map<std::pair<std::string, std::string>, std::size_t, pair_hash> ranks;
  // post-processor: the single template, a sequence (empty name) or a special token's ids
  struct piece {
    bool sequence = false;
    std::vector<std::int64_t> ids;
  };
  std::vector<piece> single{piece{true, {}}};
  // decoder
  enum class dec { none, wordpiece, byte_level } decoder = dec::none;
  bool cleanup = true;
  // truncation: the most ids an encoding keeps, special tokens included (0: no limit)
  std::size_t max_length = 0;

  [[noreturn]] void fail(std::string const& what) const { throw io_error(where + what); }

  json::value const& field(json::value const& obj, std::string_view key, std::string_view path) const {
    json::value const* v = obj.type() == json::kind::object ? obj.find(key) : nullptr;
    if (v == nullptr) fail(std::string(path) + " has no \"" + std::string(key) + "\"");
    return *v;
  }
  std::string text_of(json::value const& v, std::string_view path) const {
    if (v.type() != json::kind::string) fail(std::string(path) + " is " + std::string(json::kind_name(v.type())) + ", not a string");
    return v.as_string();
  }
  bool flag(json::value const& obj, std::string_view key, bool fallback) const {
    json::value const* v = obj.find(key);
    if (v == nullptr || v->is_null()) return fallback;
    if (v->type() != json::kind::boolean) fail(std::string(key) + " is " + std::string(json::kind_name(v->type())) + ", not true or false");
    return v->as_bool();
  }
  std::string type_of(json::value const& v, std::string_view path) const { return text_of(field(v, "type", path), std::string(path) + ".type"); }

  void read(json::value const& root);
  void read_model(json::value const& m);
  void read_post_processor(json::value const& p);

  // the text between added tokens, normalized and split into words
  std::u32string normalize(std::u32string const& text) const;
  std::vector<std::u32string> pre_tokenize(std::u32string const& text) const;
  void model_tokens(std::u32string const& word, std::vector<std::string>& out) const;
  std::vector<std::string> tokenize(std::string_view text, std::vector<std::int64_t>* added_ids) const;
  std::int64_t id_of(std::string const& token) const;
};

void tokenizer::impl::read(json::value const& root) {
  if (root.type() != json::kind::object) fail("holds " + std::string(json::kind_name(root.type())) + ", not an object");
  read_model(field(root, "model", "the file"));

  if (json::value const* a = root.find("added_tokens"); a != nullptr && !a->is_null()) {
    if (a->type() != json::kind::array) fail("added_tokens is not an array");
    for (auto const& t : a->as_array()) {
      added_token at;
      at.content = detail::utf8_decode(text_of(field(t, "content", "an added token"), "an added token's content"), where);
      json::value const& id = field(t, "id", "an added token");
      if (id.type() != json::kind::integer || id.as_integer() < 0) fail("an added token's id is not an id");
      at.id = id.as_integer();
      at.special = flag(t, "special", false);
      if (at.content.empty()) fail("an added token is empty");
      std::string const token = detail::utf8_encode(at.content);
      vocab.emplace(token, at.id);
      tokens[at.id] = token;
      max_id = std::max(max_id, at.id);
      added.push_back(std::move(at));
    }
    std::stable_sort(added.begin(), added.end(),
                     [](added_token const& x, added_token const& y) { return x.content.size() > y.content.size(); });
  }
  for (auto const& a : added) {
    if (a.special) special_id[a.id] = true;
  }

  if (json::value const* n = root.find("normalizer"); n != nullptr && !n->is_null()) {
    std::string const type = type_of(*n, "normalizer");
    if (type != "BertNormalizer") fail("normalizer type " + type + " is not built (BertNormalizer or none)");
    bert_normalizer = true;
    clean_text = flag(*n, "clean_text", true);
    chinese_chars = flag(*n, "handle_chinese_chars", true);
    lowercase = flag(*n, "lowercase", true);
    strip_accents = flag(*n, "strip_accents", lowercase);
  }
  if (json::value const* p = root.find("pre_tokenizer"); p != nullptr && !p->is_null()) {
    std::string const type = type_of(*p, "pre_tokenizer");
    if (type == "BertPreTokenizer") {
      pre_tokenizer = pre::bert;
    } else if (type == "ByteLevel") {
      pre_tokenizer = pre::byte_level;
      add_prefix_space = flag(*p, "add_prefix_space", false);
      use_regex = flag(*p, "use_regex", true);
    } else {
      fail("pre_tokenizer type " + type + " is not built (BertPreTokenizer, ByteLevel or none)");
    }
  }
  if (model == "BPE" && pre_tokenizer != pre::byte_level) fail("a BPE model without the ByteLevel pre-tokenizer is not built");
  if (json::value const* p = root.find("post_processor"); p != nullptr && !p->is_null()) read_post_processor(*p);
  if (json::value const* t = root.find("truncation"); t != nullptr && !t->is_null()) {
    json::value const& n = field(*t, "max_length", "truncation");
    if (n.type() != json::kind::integer || n.as_integer() <= 0) fail("truncation.max_length is not a positive integer");
    if (json::value const* dir = t->find("direction"); dir != nullptr && text_of(*dir, "truncation.direction") != "Right") {
      fail("truncation.direction " + dir->as_string() + " is not built (Right)");
    }
    max_length = static_cast<std::size_t>(n.as_integer());
  }
  if (json::value const* d = root.find("decoder"); d != nullptr && !d->is_null()) {
    std::string const type = type_of(*d, "decoder");
    if (type == "WordPiece") {
      decoder = dec::wordpiece;
      prefix = d->find("prefix") != nullptr ? text_of(*d->find("prefix"), "decoder.prefix") : prefix;
      cleanup = flag(*d, "cleanup", true);
    } else if (type == "ByteLevel") {
      decoder = dec::byte_level;
    } else {
      fail("decoder type " + type + " is not built (WordPiece, ByteLevel or none)");
    }
  }
}

void tokenizer::impl::read_model(json::value const& m) {
  model = type_of(m, "model");
  json::value const& v = field(m, "vocab", "model");
  if (v.type() != json::kind::object) fail("model.vocab is not an object of tokens and ids");
  for (auto const& [token, id] : v.as_object()) {
    if (id.type() != json::kind::integer || id.as_integer() < 0 || id.as_integer() > std::numeric_limits<std::int32_t>::max()) {
      fail("model.vocab: the id of " + token + " is not an id");
    }
    vocab.emplace(token, id.as_integer());
    tokens[id.as_integer()] = token;
    max_id = std::max(max_id, id.as_integer());
  }
  if (model == "WordPiece") {
    unk = text_of(field(m, "unk_token", "model"), "model.unk_token");
    if (json::value const* p = m.find("continuing_subword_prefix")) prefix = text_of(*p, "model.continuing_subword_prefix");
    if (json::value const* n = m.find("max_input_chars_per_word"); n != nullptr && !n->is_null()) {
      if (n->type() != json::kind::integer || n->as_integer() <= 0) fail("model.max_input_chars_per_word is not a positive integer");
      max_chars = static_cast<std::size_t>(n->as_integer());
    }
    if (!vocab.contains(unk)) fail("model.unk_token " + unk + " is not in the vocabulary");
  } else if (model == "BPE") {
    auto const off = [&](std::string_view key) {
      json::value const* f = m.find(key);
      return f == nullptr || f->is_null() || (f->type() == json::kind::string && f->as_string().empty()) ||
             (f->type() == json::kind::boolean && !f->as_bool());
    };
    for (std::string_view key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix", "byte_fallback", "ignore_merges"}) {
      if (!off(key)) fail("model." + std::string(key) + " is set: BPE is built without it");
    }
    json::value const& merges = field(m, "merges", "model");
    if (merges.type() != json::kind::array) fail("model.merges is not an array");
    std::size_t rank = 0;
    for (auto const& entry : merges.as_array()) {
      std::pair<std::string, std::string> p;
      if (entry.type() == json::kind::string) {  // "a b", the older form
        auto const& s = entry.as_string();
        auto const space = s.find(' ');
        if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
          fail("model.merges[" + std::to_string(rank) + "] \"" + s + "\" is not two tokens");
        }
        p = {s.substr(0, space), s.substr(space + 1)};
      } else if (entry.type() == json::kind::array && entry.as_array().size() == 2) {
        p = {text_of(entry.as_array()[0], "a merge"), text_of(entry.as_array()[1], "a merge")};
      } else {
        fail("model.merges[" + std::to_string(rank) + "] is neither \"a b\" nor [a, b]");
      }
      ranks.emplace(std::move(p), rank++);
    }
  } else {
    fail("model type " + model + " is not built (WordPiece or BPE)");
  }
}

void tokenizer::impl::read_post_processor(json::value const& p) {
  std::string const type = type_of(p, "post_processor");
  auto const special = [&](std::string const& token) {
    auto const it = vocab.find(token);
    if (it == vocab.end()) fail("post_processor: the special token " + token + " is not in the vocabulary");
    return piece{false, {it->second}};
  };
  if (type == "TemplateProcessing") {
    json::value const& s = field(p, "single", "post_processor");
    if (s.type() != json::kind::array) fail("post_processor.single is not an array");
    json::value const& specials = field(p, "special_tokens", "post_processor");
    single.clear();
    for (auto const& item : s.as_array()) {
      if (json::value const* seq = item.find("Sequence")) {
        if (text_of(field(*seq, "id", "a Sequence"), "a Sequence's id") != "A") fail("post_processor.single names a second sequence");
        single.push_back({true, {}});
      } else if (json::value const* tok = item.find("SpecialToken")) {
        std::string const id = text_of(field(*tok, "id", "a SpecialToken"), "a SpecialToken's id");
        json::value const& entry = field(specials, id, "post_processor.special_tokens");
        piece pc;
        for (auto const& i : field(entry, "ids", "a special token").as_array()) {
          if (i.type() != json::kind::integer) fail("post_processor.special_tokens." + id + ".ids holds something other than ids");
          pc.ids.push_back(i.as_integer());
        }
        single.push_back(std::move(pc));
      } else {
        fail("post_processor.single holds an item that is neither a Sequence nor a SpecialToken");
      }
    }
  } else if (type == "BertProcessing" || type == "RobertaProcessing") {
    auto const name = [&](std::string_view key) {
      json::value const& v = field(p, key, "post_processor");
      if (v.type() != json::kind::array || v.as_array().empty()) fail("post_processor." + std::string(key) + " is not [token, id]");
      return text_of(v.as_array()[0], "post_processor." + std::string(key));
    };
    single = {special(name("cls")), piece{true, {}}, special(name("sep"))};
  } else if (type != "ByteLevel") {
    fail("post_processor type " + type + " is not built (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel)");
  }
}

std::u32string tokenizer::impl::normalize(std::u32string const& text) const {
  if (!bert_normalizer) return text;
  std::u32string a;
  a.reserve(text.size());
  for (char32_t c : text) {
    if (clean_text) {
      bool const control = c != U'\t' && c != U'\n' && c != U'\r' && detail::class_of(c) == char_class::other;
      if (c == 0 || c == 0xFFFD || control) continue;
      if (detail::is_white_space(c)) c = U' ';
    }
    if (chinese_chars && detail::is_cjk(c)) {
      a += U' ';
      a += c;
      a += U' ';
    } else {
      a += c;
    }
  }
  if (strip_accents) {
    std::u32string b;
    b.reserve(a.size());
    for (char32_t c : a) detail::append_stripped(c, b);
    a = std::move(b);
  }
  if (lowercase) {
    std::u32string b;
    b.reserve(a.size());
    for (char32_t c : a) detail::append_lower(c, b);
    a = std::move(b);
  }
  return a;
}

std::vector<std::u32string> tokenizer::impl::pre_tokenize(std::u32string const& text) const {
  std::vector<std::u32string> words;
  if (pre_tokenizer == pre::none) {
    if (!text.empty()) words.push_back(text);
    return words;
  }
  if (pre_tokenizer == pre::bert) {
    std::u32string word;
    auto const flush = [&] {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    };
    for (char32_t c : text) {
      if (detail::is_white_space(c)) {
        flush();
      } else if (is_bert_punctuation(c)) {
        flush();
        words.emplace_back(1, c);
      } else {
        word += c;
      }
    }
    flush();
    return words;
  }
  // byte level: GPT-2's split, then each piece's bytes as the alphabet's characters
  std::u32string s = text;
  if (add_prefix_space && !s.empty() && s.front() != U' ') s.insert(s.begin(), U' ');
  std::vector<std::u32string> pieces;
  if (!use_regex) {
    if (!s.empty()) pieces.push_back(s);
  } else {
    std::size_t const n = s.size();
    auto const letter = [&](std::size_t k) { return k < n && detail::class_of(s[k]) == char_class::letter; };
    auto const number = [&](std::size_t k) { return k < n && detail::class_of(s[k]) == char_class::number; };
    auto const space = [&](std::size_t k) { return k < n && detail::is_white_space(s[k]); };
    auto const rest = [&](std::size_t k) { return k < n && !space(k) && !letter(k) && !number(k); };
    std::size_t i = 0;
    while (i < n) {
      std::size_t end = i;
      if (s[i] == U'\'') {  // 's 't 're 've 'm 'll 'd
        for (std::u32string_view c : {U"s", U"t", U"re", U"ve", U"m", U"ll", U"d"}) {
          if (std::u32string_view(s).substr(i + 1, c.size()) == c) {
            end = i + 1 + c.size();
            break;
          }
        }
      }
      if (end == i) {
        std::size_t const j = s[i] == U' ' ? i + 1 : i;
        if (letter(j)) {
          end = j;
          while (letter(end)) ++end;
        } else if (number(j)) {
          end = j;
          while (number(end)) ++end;
        } else if (rest(j)) {
          end = j;
          while (rest(end)) ++end;
        } else {  // whitespace: \s+(?!\S), else \s+
          end = i;
          while (space(end)) ++end;
          if (end < n && end - i >= 2) --end;
        }
      }
      pieces.push_back(s.substr(i, end - i));
      i = end;
    }
  }
  for (auto const& p : pieces) {
    std::string utf8 = detail::utf8_encode(p);
    std::u32string mapped;
    mapped.reserve(utf8.size());
    for (char b : utf8) mapped += bytes().of[static_cast<unsigned char>(b)];
    words.push_back(std::move(mapped));
  }
  return words;
}

void tokenizer::impl::model_tokens(std::u32string const& word, std::vector<std::string>& out) const {
  if (model == "WordPiece") {
    if (word.size() > max_chars) {
      out.push_back(unk);
      return;
    }
    std::vector<std::string> pieces;
    std::size_t start = 0;
    while (start < word.size()) {
      std::size_t end = word.size();
      std::string found;
      while (start < end) {
        std::string sub = (start > 0 ? prefix : std::string()) + detail::utf8_encode(word.substr(start, end - start));
        if (vocab.contains(sub)) {
          found = std::move(sub);
          break;
        }
        --end;
      }
      if (found.empty()) {
        out.push_back(unk);
        return;
      }
      pieces.push_back(std::move(found));
      start = end;
    }
    out.insert(out.end(), pieces.begin(), pieces.end());
    return;
  }
  // BPE: the characters, then the adjacent pair of lowest rank (the
  // leftmost of equals) merged, again and again, as the tokenizers
  // library's queue does; each pair's rank is looked up once and again
  // only when a neighbour merges
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::string> parts;
  for (char32_t c : word) parts.push_back(detail::utf8_encode(std::u32string(1, c)));
  auto const rank_of = [&](std::size_t k) {
    auto const r = ranks.find({parts[k], parts[k + 1]});
    return r == ranks.end() ? none : r->second;
  };
  std::vector<std::size_t> rank(parts.empty() ? 0 : parts.size() - 1);
  for (std::size_t k = 0; k < rank.size(); ++k) rank[k] = rank_of(k);
  while (!rank.empty()) {
    auto const best = std::min_element(rank.begin(), rank.end());
    if (*best == none) break;
    auto const at = static_cast<std::size_t>(best - rank.begin());
    parts[at] += parts[at + 1];
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(at) + 1);
    rank.erase(rank.begin() + static_cast<std::ptrdiff_t>(at));
    if (at < rank.size()) rank[at] = rank_of(at);
    if (at > 0) rank[at - 1] = rank_of(at - 1);
  }
  out.insert(out.end(), parts.begin(), parts.end());
}

std::vector<std::string> tokenizer::impl::tokenize(std::string_view text, std::vector<std::int64_t>* added_ids) const {
  std::u32string const all = detail::utf8_decode(text, std::string(op));
  std::vector<std::string> out;
  auto const run = [&](std::u32string const& span) {
    if (span.empty()) return;
    for (auto const& word : pre_tokenize(normalize(span))) model_tokens(word, out);
  };
  // the added tokens as written, the text between them tokenized
  std::size_t from = 0;
  std::u32string pending;
  for (std::size_t i = 0; i < all.size();) {
    added_token const* hit = nullptr;
    for (auto const& a : added) {
      if (all.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    run(all.substr(from, i - from));
    out.push_back(detail::utf8_encode(hit->content));
    if (added_ids != nullptr) added_ids->push_back(hit->id);
    i += hit->content.size();
    from = i;
  }
  run(all.substr(from));
  return out;
}

std::int64_t tokenizer::impl::id_of(std::string const& token) const {
  auto const it = vocab.find(token);
  if (it == vocab.end()) {
    throw value_error(std::string(op) + ": the token " + token + " is not in the vocabulary of " + where +
                      "(a BPE whose merges make tokens its vocabulary lacks)");
  }
  return it->second;
}

tokenizer::tokenizer(std::filesystem::path const& source) {
  std::error_code ec;
  path_ = std::filesystem::is_directory(source, ec) ? source / "tokenizer.json" : source;
  auto m = std::make_shared<impl>();
  m->where = std::string(op) + ": " + path_.string() + ": ";
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw io_error(std::string(op) + ": cannot open " + path_.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw io_error(std::string(op) + ": cannot read " + path_.string());
  json::value root;
  try {
    root = json::parse(text.str());
  } catch (json::parse_error const& e) {
    throw io_error(m->where + "not valid JSON: " + e.what());
  } catch (value_error const& e) {
    throw io_error(m->where + e.what());
  }
  try {
    m->read(root);
  } catch (io_error const&) {
    throw;
  } catch (value_error const& e) {   // an added token that is not UTF-8
    throw io_error(m->where + e.what());
  }
  impl_ = std::move(m);
}

std::string const& tokenizer::model() const noexcept { return impl_->model; }

std::vector<std::string> tokenizer::tokenize(std::string_view text) const { return impl_->tokenize(text, nullptr); }

std::vector<std::int64_t> tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<std::int64_t> ids;
  for (auto const& t : impl_->tokenize(text, nullptr)) ids.push_back(impl_->id_of(t));
  std::size_t specials = 0;
  if (add_special_tokens) {
    for (auto const& p : impl_->single) specials += p.ids.size();
  }
  if (impl_->max_length > 0 && ids.size() + specials > impl_->max_length) {
    ids.resize(impl_->max_length > specials ? impl_->max_length - specials : 0);
  }
  if (!add_special_tokens) return ids;
  std::vector<std::int64_t> out;
  for (auto const& p : impl_->single) {
    if (p.sequence) {
      out.insert(out.end(), ids.begin(), ids.end());
    } else {
      out.insert(out.end(), p.ids.begin(), p.ids.end());
    }
  }
  return out;
}

std::string const& tokenizer::id_to_token(std::int64_t id) const {
  auto const it = impl_->tokens.find(id);
  if (it == impl_->tokens.end()) {
    throw value_error(std::string(op) + ": id " + std::to_string(id) + " is not in the vocabulary of " + impl_->where);
  }
  return it->second;
}

std::optional<std::int64_t> tokenizer::token_to_id(std::string_view token) const {
  auto const it = impl_->vocab.find(std::string(token));
  return it == impl_->vocab.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

std::int64_t tokenizer::vocab_size() const noexcept { return impl_->max_id + 1; }

std::string tokenizer::decode(std::span<std::int64_t const> ids, bool skip_special_tokens) const {
  impl const& m = *impl_;
  std::vector<std::string> toks;
  for (std::int64_t id : ids) {
    std::string const& t = id_to_token(id);
    if (skip_special_tokens && m.special_id.contains(id)) continue;
    toks.push_back(t);
  }
  std::string out;
  if (m.decoder == impl::dec::byte_level) {
    std::string raw;
    for (auto const& t : toks) {
      for (char32_t c : detail::utf8_decode(t, std::string(op))) {
        auto const b = bytes().back.find(c);
        if (b == bytes().back.end()) {
          detail::utf8_append(c, raw);   // an added token's text, as written
        } else {
          raw += static_cast<char>(b->second);
        }
      }
    }
    // bytes that are not UTF-8 become U+FFFD, as the decoder's lossy conversion
    for (std::size_t i = 0; i < raw.size();) {
      std::size_t const n = dimtensor::detail::json::utf8_sequence_length(std::string_view(raw).substr(i));
      if (n > 0) {
        out.append(raw, i, n);
        i += n;
      } else {
        out += "\xEF\xBF\xBD";
        ++i;
      }
    }
    return out;
  }
  // each token after the first: its piece glued on (the subword prefix
  // taken off) or after a space; WordPiece's cleanup applies to each
  // token so prepared (" ," becomes ",")
  for (std::size_t i = 0; i < toks.size(); ++i) {
    std::string piece = toks[i];
    if (i > 0) {
      if (m.decoder == impl::dec::wordpiece && piece.starts_with(m.prefix)) {
        piece.erase(0, m.prefix.size());
      } else {
        piece.insert(piece.begin(), ' ');
      }
    }
    if (m.decoder == impl::dec::wordpiece && m.cleanup) {
      for (auto const& [from, to] : std::initializer_list<std::pair<std::string_view, std::string_view>>{
               {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"}, {" 'm", "'m"},
               {" do not", " don't"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}}) {
        for (std::size_t at = piece.find(from); at != std::string::npos; at = piece.find(from, at + to.size())) {
          piece.replace(at, from.size(), to);
        }
      }
    }
    out += piece;
  }
  return out;
}

}  // namespace dimtensor::text
