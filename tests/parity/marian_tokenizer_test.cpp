// Parity of text::marian_tokenizer with transformers' MarianTokenizer
// (tests/parity/goldens_marian_tokenizer.py): two small SentencePiece models
// and their shared vocab.json give, for every line of the tokenizer sample
// (one with a language code), the same pieces, ids and decoded text.  Built
// where CMake found SentencePiece (dimtensor::sentencepiece); elsewhere the
// file holds no test.
#ifdef DIMTENSOR_HAS_SENTENCEPIECE

#include <dimtensor/core/error.hpp>
#include <dimtensor/io/detail/json.hpp>
#include <dimtensor/text/marian_tokenizer.hpp>

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

namespace marian_tokenizer_parity {

std::filesystem::path dir() { return std::filesystem::path(DIMTENSOR_PARITY_DATA_DIR) / "tokenizers"; }


}  // namespace marian_tokenizer_parity

using namespace marian_tokenizer_parity;

TEST_CASE("text::marian_tokenizer matches transformers' MarianTokenizer piece for piece", "[parity][tokenizer][marian]") {
  dt::text::marian_tokenizer const tok(dir() / "marian");
  CHECK(tok.eos_id() == 0);
  CHECK(tok.pad_id() == tok.vocab_size() - 1);
  json::value const expected = json::parse(parity_support::read_text(dir() / "marian_expected.json"));
  int n = 0;
  for (auto const& c : expected.find("cases")->as_array()) {
    std::string const text = c.find("text")->as_string();
    INFO("case " << n << ": " << text);
    std::vector<std::string> tokens;
    for (auto const& t : c.find("tokens")->as_array()) tokens.push_back(t.as_string());
    std::vector<std::int64_t> ids;
    for (auto const& i : c.find("ids")->as_array()) ids.push_back(i.as_integer());
    CHECK(tok.tokenize(text) == tokens);
    CHECK(tok.encode(text) == ids);
    CHECK(tok.decode(ids) == c.find("decoded")->as_string());
    ++n;
  }
  CHECK(n == 10);
  // the special tokens as written; kept in decoding when asked
  auto const ids = tok.encode("a</s>b");
  CHECK(std::count(ids.begin(), ids.end(), tok.eos_id()) == 2);
  CHECK(tok.decode(ids, false).find("</s>") != std::string::npos);
  CHECK_THROWS_WITH(dt::text::marian_tokenizer(dir() / "bert"), Catch::Contains("cannot open") && Catch::Contains("source.spm"));
}

#endif  // DIMTENSOR_HAS_SENTENCEPIECE
