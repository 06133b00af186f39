// Parity of text::tokenizer with Hugging Face `tokenizers`
// (tests/parity/goldens_tokenizers.py): a WordPiece (BertTokenizer) and a
// byte-level BPE (GPT2Tokenizer) read from the tokenizer.json that
// transformers' save_pretrained wrote give, for every line of a sample in
// English, French, Chinese, accented Latin, Greek, Turkish, Korean, emoji and
// odd spacing (and for the whole file), the same tokens, ids and decoded
// text; then what a malformed file or text gets.
#include <dimtensor/io/detail/json.hpp>
#include <dimtensor/text/tokenizer.hpp>

#include <catch2/catch.hpp>

#include "parity/support.hpp"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dt = dimtensor;
namespace json = dimtensor::detail::json;

namespace tokenizer_parity {

std::filesystem::path dir() { return std::filesystem::path(DIMTENSOR_PARITY_DATA_DIR) / "tokenizers"; }


void write(std::filesystem::path const& p, std::string const& text) { std::ofstream(p, std::ios::binary) << text; }

}  // namespace tokenizer_parity

using namespace tokenizer_parity;

TEST_CASE("text::tokenizer matches transformers' BertTokenizer and GPT2Tokenizer token for token",
          "[parity][tokenizer]") {
  json::value const expected = json::parse(parity_support::read_text(dir() / "expected.json"));
  for (std::string const name : {"bert", "gpt2"}) {
    dt::text::tokenizer const tok(dir() / name);
    CHECK(tok.model() == (name == "bert" ? "WordPiece" : "BPE"));
    int n = 0;
    for (auto const& c : expected.find("cases")->find(name)->as_array()) {
      std::string const text = c.find("text")->as_string();
      INFO(name << " case " << n << ": " << text);
      std::vector<std::string> tokens;
      for (auto const& t : c.find("tokens")->as_array()) tokens.push_back(t.as_string());
      std::vector<std::int64_t> ids;
      for (auto const& i : c.find("ids")->as_array()) ids.push_back(i.as_integer());
      CHECK(tok.tokenize(text) == tokens);
      CHECK(tok.encode(text) == ids);
      CHECK(tok.decode(ids) == c.find("decoded")->as_string());
      ++n;
    }
    CHECK(n == 11);
  }
}

TEST_CASE("text::tokenizer: special tokens, ids and what it refuses", "[parity][tokenizer]") {
  dt::text::tokenizer const bert(dir() / "bert" / "tokenizer.json");
  auto const ids = bert.encode("hello [MASK]");
  REQUIRE(ids.size() >= 3);
  CHECK(bert.id_to_token(ids.front()) == "[CLS]");
  CHECK(bert.id_to_token(ids.back()) == "[SEP]");
  CHECK(bert.id_to_token(ids[ids.size() - 2]) == "[MASK]");
  CHECK(bert.encode("hello", false).size() == ids.size() - 3);
  CHECK(bert.token_to_id("[PAD]") == 0);
  CHECK_FALSE(bert.token_to_id("no such token").has_value());
  CHECK(bert.decode(ids, false).starts_with("[CLS]"));
  CHECK_THROWS_WITH(bert.id_to_token(bert.vocab_size()), Catch::Contains("is not in the vocabulary"));
  CHECK_THROWS_WITH(bert.encode("ok \xC3("), Catch::Contains("the text is not UTF-8 at byte 3"));
  CHECK(dt::text::unicode_version() == "14.0.0");

  auto const tmp = std::filesystem::temp_directory_path() / "dimtensor_tokenizer_test";
  std::filesystem::create_directories(tmp);
  std::string const good = parity_support::read_text(dir() / "bert" / "tokenizer.json");
  SECTION("not JSON: the file, line and column") {
    write(tmp / "tokenizer.json", good.substr(0, good.size() / 2));
    CHECK_THROWS_AS(dt::text::tokenizer(tmp), dt::io_error);
    CHECK_THROWS_WITH(dt::text::tokenizer(tmp), Catch::Contains("tokenizer.json: not valid JSON") && Catch::Contains("line"));
  }
  SECTION("a model that is not built") {
    std::string text = good;
    text.replace(text.rfind("\"WordPiece\""), 11, "\"Unigram\"");   // the model comes last
    write(tmp / "tokenizer.json", text);
    CHECK_THROWS_WITH(dt::text::tokenizer(tmp), Catch::Contains("model type Unigram is not built"));
  }
  SECTION("a normalizer that is not built") {
    std::string text = good;
    text.replace(text.find("\"BertNormalizer\""), 16, "\"NFKC\"");
    write(tmp / "tokenizer.json", text);
    CHECK_THROWS_WITH(dt::text::tokenizer(tmp), Catch::Contains("normalizer type NFKC is not built"));
  }
  SECTION("no file") {
    CHECK_THROWS_WITH(dt::text::tokenizer(tmp / "missing.json"), Catch::Contains("cannot open"));
  }
}
