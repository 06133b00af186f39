// data/nmt.hpp: d2l's machine-translation pipeline (read_data_nmt,
// preprocess_nmt, tokenize_nmt, Vocab, truncate_pad, build_array_nmt,
// load_data_nmt) against hand-computed expectations, the skipped lines with
// their line numbers, the held-out split and the shuffled minibatches.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <dimtensor/data.hpp>
#include <dimtensor/dimtensor.hpp>

#include "unit/support/files.hpp"

// The shipped corpora (examples/data/), by absolute path in the CMake build.
#ifndef DIMTENSOR_EXAMPLES_DATA_DIR
#define DIMTENSOR_EXAMPLES_DATA_DIR "examples/data"
#endif

namespace nmt_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Steps);

namespace dt = dimtensor;
namespace data = dimtensor::data;
namespace fs = std::filesystem;

using tokens = std::vector<std::string>;
using lines_t = std::vector<tokens>;
using test_support::temp_dir;
using test_support::write_bytes;

temp_dir const& tmp() { return test_support::program_temp_dir("dimtensor_nmt_test_"); }

// The message of the E that f throws; fails the test when f throws nothing or something else.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (E const& e) {
    return e.what();
  }
  FAIL("no exception of the expected type");
  return {};
}

template <class Tensor>
std::vector<std::int64_t> values(Tensor const& t) {
  return std::vector<std::int64_t>(t.data(), t.data() + t.size());
}

// The first six lines of d2l's fra.txt, as the book prints them: French puts
// a U+202F narrow no-break space before '!' and '?'.
std::string const d2l_head =
    "Go.\tVa\u202f!\nHi.\tSalut\u202f!\nRun!\tCours\u202f!\nRun!\tCourez\u202f!\nWho?\tQui\u202f?\n"
    "Wow!\t\u00c7a alors\u202f!\n";

}  // namespace

TEST_CASE("preprocess_nmt: d2l's spaces, lowercase and punctuation", "[data][nmt]") {
  CHECK(data::preprocess_nmt("Go.\tVa\u202f!") == "go .\tva !");
  CHECK(data::preprocess_nmt("Hello,World") == "hello ,world");
  CHECK(data::preprocess_nmt("Hello, World!?") == "hello , world ! ?");
  CHECK(data::preprocess_nmt("Go .") == "go .");  // already spaced: no second space
  CHECK(data::preprocess_nmt(".Go") == ".go");    // nothing before the first character
  CHECK(data::preprocess_nmt("Non\u00a0!") == "non !");
  CHECK(data::preprocess_nmt("") == "");
  // the book's output for the head of the file
  CHECK(data::preprocess_nmt(d2l_head) ==
        "go .\tva !\nhi .\tsalut !\nrun !\tcours !\nrun !\tcourez !\nwho ?\tqui ?\nwow !\t\u00e7a alors !\n");

  SECTION("lowercasing: ASCII, Latin-1 Supplement, Latin Extended-A, as Python's str.lower()") {
    CHECK(data::preprocess_nmt("\u00c9L\u00c8VE") == "\u00e9l\u00e8ve");  // ÉLÈVE → élève
    CHECK(data::preprocess_nmt("\u00c0\u00c2\u00c7\u00ca\u00cb\u00ce\u00cf\u00d4\u00d9\u00db\u00dc\u00de") ==
          "\u00e0\u00e2\u00e7\u00ea\u00eb\u00ee\u00ef\u00f4\u00f9\u00fb\u00fc\u00fe");
    CHECK(data::preprocess_nmt("\u00d7\u00df") == "\u00d7\u00df");  // × and ß have no lowercase
    CHECK(data::preprocess_nmt("\u0152UVRE") == "\u0153uvre");        // Œ → œ
    CHECK(data::preprocess_nmt("\u0178") == "\u00ff");                // Ÿ → ÿ
    CHECK(data::preprocess_nmt("\u0100\u0139\u014a\u0179\u0141") == "\u0101\u013a\u014b\u017a\u0142");
    CHECK(data::preprocess_nmt("\u0130") == "i\u0307");               // İ → i + combining dot, as Python
    CHECK(data::preprocess_nmt("\u0131\u0138\u0149\u017f") == "\u0131\u0138\u0149\u017f");  // already small
    CHECK(data::preprocess_nmt("\u0394\u0416") == "\u0394\u0416");  // Greek and Cyrillic: not covered, kept
  }
  SECTION("bytes that are not UTF-8 are kept, and so are the lines") {
    CHECK(data::preprocess_nmt("A\xC3\x28.") == "a\xC3( .");
    CHECK(data::preprocess_nmt("\xFF!") == "\xFF !");
    CHECK(data::preprocess_nmt("\xE0\x80\x80X") == "\xE0\x80\x80x");  // overlong: three bytes kept
    std::string const raw = "A\n\nB\xC3\n\xED\xA0\x80\nC.";
    auto const out = data::preprocess_nmt(raw);
    CHECK(std::count(out.begin(), out.end(), '\n') == std::count(raw.begin(), raw.end(), '\n'));
  }
}

TEST_CASE("tokenize_nmt: pairs of token lists, num_examples", "[data][nmt]") {
  auto const text = data::preprocess_nmt(d2l_head);
  auto const all = data::tokenize_nmt(text);
  REQUIRE(all.size() == 6);
  CHECK(all.source[0] == tokens{"go", "."});
  CHECK(all.target[0] == tokens{"va", "!"});
  CHECK(all.source[4] == tokens{"who", "?"});
  CHECK(all.target[5] == tokens{"\u00e7a", "alors", "!"});
  CHECK(all.lines == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});
  CHECK(all.skipped.empty());

  auto const two = data::tokenize_nmt(text, 2);
  REQUIRE(two.size() == 2);
  CHECK(two.source == lines_t{{"go", "."}, {"hi", "."}});
  CHECK(two.target == lines_t{{"va", "!"}, {"salut", "!"}});
  CHECK(data::tokenize_nmt(text, 0).size() == 0);
  CHECK(data::tokenize_nmt(text, 100).size() == 6);

  SECTION("empty tokens dropped; a trailing CR removed") {
    auto const c = data::tokenize_nmt("  go   .  \t va  !\r\n");
    REQUIRE(c.size() == 1);
    CHECK(c.source[0] == tokens{"go", "."});
    CHECK(c.target[0] == tokens{"va", "!"});
  }
  SECTION("parse_nmt: raw text, the same result") {
    auto const parsed = data::parse_nmt(d2l_head, 4);
    auto const by_hand = data::tokenize_nmt(data::preprocess_nmt(d2l_head), 4);
    CHECK(parsed.source == by_hand.source);
    CHECK(parsed.target == by_hand.target);
    CHECK(parsed.lines == by_hand.lines);
  }
}

TEST_CASE("tokenize_nmt: malformed lines skipped with their line numbers, comments ignored", "[data][nmt]") {
  std::string const raw =
      "# Tatoeba, CC-BY 2.0: a comment, not a pair\n"  // 1
      "Go.\tVa !\n"                                     // 2
      "no tab here\n"                                   // 3
      "a\tb\tc\n"                                       // 4
      "\tVide.\n"                                       // 5
      "Hi.\t   \n"                                      // 6
      "x\xC3\x28y\tz\n"                                 // 7: invalid UTF-8 at byte 2
      "\n"                                              // 8
      "Run!\tCours !\r\n"                               // 9
      "#\tnot a pair either\n"                          // 10
      "ok\t\xF0\x9F\x98\x80 \xED\xA0\x80\n"             // 11: a valid emoji, then a surrogate at byte 9
      "Wow!\tÇa alors !";                               // 12, no final newline
  std::vector<data::skipped_line> const expected{{3, "no tab"},
                                                 {4, "more than one tab"},
                                                 {5, "empty source"},
                                                 {6, "empty target"},
                                                 {7, "invalid UTF-8 at byte 2"},
                                                 {11, "invalid UTF-8 at byte 9"}};

  auto const parsed = data::parse_nmt(raw);
  CHECK(parsed.skipped == expected);
  CHECK(parsed.lines == std::vector<std::size_t>{2, 9, 12});
  CHECK(parsed.source == lines_t{{"go", "."}, {"run", "!"}, {"wow", "!"}});
  CHECK(parsed.target == lines_t{{"va", "!"}, {"cours", "!"}, {"\u00e7a", "alors", "!"}});

  auto const two_steps = data::tokenize_nmt(data::preprocess_nmt(raw));
  CHECK(two_steps.skipped == expected);
  CHECK(two_steps.lines == parsed.lines);
  CHECK(two_steps.source == parsed.source);

  SECTION("num_examples: reading stops at the line that completes them") {
    auto const one = data::parse_nmt(raw, 1);
    CHECK(one.lines == std::vector<std::size_t>{2});
    CHECK(one.skipped.empty());
    auto const two = data::parse_nmt(raw, 2);
    CHECK(two.lines == std::vector<std::size_t>{2, 9});
    CHECK(two.skipped.size() == 5);
  }
  SECTION("report_skipped") {
    std::ostringstream out;
    data::report_skipped(out, "fra.txt", parsed.skipped);
    CHECK(out.str() ==
          "fra.txt:3: no tab, skipped\nfra.txt:4: more than one tab, skipped\nfra.txt:5: empty source, skipped\n"
          "fra.txt:6: empty target, skipped\nfra.txt:7: invalid UTF-8 at byte 2, skipped\n"
          "fra.txt:11: invalid UTF-8 at byte 9, skipped\n");
    std::ostringstream few;
    data::report_skipped(few, "f", parsed.skipped, 2);
    CHECK(few.str() == "f:3: no tab, skipped\nf:4: more than one tab, skipped\nf: 4 more malformed lines skipped\n");
  }
}

TEST_CASE("read_data_nmt: the whole file; io_error naming a missing one", "[data][nmt]") {
  auto const file = tmp() / "pairs.txt";
  std::string const bytes = "Go.\tVa\u202f!\r\nHi.\tSalut.\n";
  write_bytes(file, bytes);
  CHECK(data::read_data_nmt(file) == bytes);

  auto const missing = tmp() / "no_such_dir" / "fra.txt";
  auto const what = message_of<dt::io_error>([&] { (void)data::read_data_nmt(missing); });
  CHECK_THAT(what, Catch::Contains(missing.string()) && Catch::Contains("read_data_nmt"));
  auto const dir = message_of<dt::io_error>([&] { (void)data::read_data_nmt(tmp().path()); });
  CHECK_THAT(dir, Catch::Contains(tmp().path().string()));
  CHECK_THROWS_AS((data::nmt_dataset<Batch, Steps>(missing)), dt::io_error);
}

TEST_CASE("read_data_nmt: a UTF-8 byte-order mark is dropped, other encodings are io_errors", "[data][nmt]") {
  auto const file = tmp() / "encoded.txt";
  SECTION("UTF-8 with a byte-order mark: the mark is not part of the first token") {
    write_bytes(file, "\xEF\xBB\xBFGo.\tVa !\n");
    auto const text = data::read_data_nmt(file);
    CHECK(text == "Go.\tVa !\n");
    auto const corpus = data::parse_nmt(text);
    REQUIRE(corpus.size() == 1);
    CHECK(corpus.source[0] == tokens{"go", "."});
    // Text handed over in memory loses its mark the same way.
    CHECK(data::parse_nmt("\xEF\xBB\xBFGo.\tVa !\n").source[0] == tokens{"go", "."});
    CHECK(data::tokenize_nmt("\xEF\xBB\xBFgo .\tva !").source[0] == tokens{"go", "."});
  }
  auto const error_of = [&](std::string const& bytes) {
    write_bytes(file, bytes);
    return message_of<dt::io_error>([&] { (void)data::read_data_nmt(file); });
  };
  using Catch::Contains;
  SECTION("UTF-16 and UTF-32, with a byte-order mark or without") {
    // "Go.\tVa !\n" in UTF-16 little-endian: every other byte 0.
    std::string const utf16le("G\0o\0.\0\t\0V\0a\0 \0!\0\n\0", 18);
    CHECK_THAT(error_of("\xFF\xFE" + utf16le), Contains(file.string()) && Contains("line 1") &&
                                                   Contains("a UTF-16 little-endian byte-order mark") &&
                                                   Contains("must be UTF-8"));
    CHECK_THAT(error_of(std::string("\xFE\xFF\0G", 4)), Contains("UTF-16 big-endian byte-order mark"));
    CHECK_THAT(error_of(std::string("\xFF\xFE\0\0G\0\0\0", 8)), Contains("UTF-32 little-endian byte-order mark"));
    CHECK_THAT(error_of(std::string("\0\0\xFE\xFF\0\0\0G", 8)), Contains("UTF-32 big-endian byte-order mark"));
    CHECK_THAT(error_of(utf16le), Contains("line 1") && Contains("a NUL byte at byte 2 of the file") &&
                                      Contains("looks UTF-16 little-endian"));
    CHECK_THAT(error_of(std::string("Hi.\tSalut.\n\0G\0o", 16)),
               Contains("line 2") && Contains("NUL byte at byte 12 of the file (text has none)"));
    CHECK_THAT(error_of(std::string("G\0\0\0o\0\0\0", 8)), Contains("looks UTF-32 little-endian"));
  }
  SECTION("invalid UTF-8: the line and the byte") {
    CHECK_THAT(error_of("Go.\tVa !\nx\xC3\x28y\tz\n"),
               Contains(file.string()) && Contains("line 2: invalid UTF-8 at byte 2 of the line"));
    CHECK_THAT(error_of("Go.\tVa !\r\nHi.\tSalut \xE9t\xE9\n"), Contains("line 2: invalid UTF-8 at byte 11"));
  }
}

TEST_CASE("vocab: d2l's Vocab, frequency order, ties by first occurrence", "[data][nmt]") {
  // counts b 2, a 2, c 1, d 2, e 1, first seen in the order b a c d e
  lines_t const lines{{"b", "a", "c"}, {"a", "b", "d", "d"}, {"e"}};

  data::vocab const all(lines, 0, {"<pad>"});
  CHECK(all.idx_to_token() == tokens{"<unk>", "<pad>", "b", "a", "d", "c", "e"});
  CHECK(all.size() == 7);
  using tf = data::vocab::token_freq;
  CHECK(all.token_freqs() == std::vector<tf>{{"b", 2}, {"a", 2}, {"d", 2}, {"c", 1}, {"e", 1}});
  CHECK(all["b"] == 2);
  CHECK(all.index("e") == 6);
  CHECK(all["zz"] == 0);
  CHECK(all.unk() == 0);
  CHECK(all["<unk>"] == 0);
  CHECK(all["<pad>"] == 1);
  CHECK(all.indices(tokens{"a", "zz", "e", "b"}) == std::vector<std::int64_t>{3, 0, 6, 2});
  CHECK(all.to_tokens(std::vector<std::int64_t>{4, 0, 1}) == tokens{"d", "<unk>", "<pad>"});
  CHECK(all.token(5) == "c");
  CHECK(all.contains("c"));
  CHECK_FALSE(all.contains("zz"));
  CHECK_THROWS_AS(all.token(7), dt::value_error);
  CHECK_THROWS_AS(all.token(-1), dt::value_error);
  CHECK_THROWS_AS(all.to_tokens(std::vector<std::int64_t>{1, 9}), dt::value_error);

  data::vocab const frequent(lines, 2, {"<pad>", "<bos>", "<eos>"});
  CHECK(frequent.idx_to_token() == tokens{"<unk>", "<pad>", "<bos>", "<eos>", "b", "a", "d"});
  CHECK(frequent["c"] == 0);  // below min_freq: unknown
  CHECK(frequent.token_freqs().size() == 5);

  SECTION("a reserved token in the corpus keeps its reserved index") {
    data::vocab const v(lines_t{{"x", "<eos>", "<eos>", "y", "y", "y"}}, 0, {"<pad>", "<eos>"});
    CHECK(v.idx_to_token() == tokens{"<unk>", "<pad>", "<eos>", "y", "x"});
    CHECK(v.token_freqs().front() == tf{"y", 3});
  }
  SECTION("no tokens: <unk> alone") {
    CHECK(data::vocab().idx_to_token() == tokens{"<unk>"});
    CHECK(data::vocab(lines_t{}, 0, {"<pad>"}).size() == 2);
    CHECK(data::vocab(lines, 3).size() == 1);
  }
  SECTION("bad reserved tokens") {
    CHECK_THROWS_AS(data::vocab(lines, 0, {"<pad>", "<pad>"}), dt::value_error);
    CHECK_THROWS_AS(data::vocab(lines, 0, {"<unk>"}), dt::value_error);
  }
}

TEST_CASE("truncate_pad: d2l's, both ways", "[data][nmt]") {
  CHECK(data::truncate_pad({5, 6, 7}, 2, 1) == std::vector<std::int64_t>{5, 6});
  CHECK(data::truncate_pad({5, 6, 7}, 5, 1) == std::vector<std::int64_t>{5, 6, 7, 1, 1});
  CHECK(data::truncate_pad({5, 6, 7}, 3, 1) == std::vector<std::int64_t>{5, 6, 7});
  CHECK(data::truncate_pad({}, 3, 9) == std::vector<std::int64_t>{9, 9, 9});
  CHECK(data::truncate_pad({5}, 0, 1).empty());
}

TEST_CASE("build_array_nmt: <eos>, truncate_pad, valid lengths as int64 tensors", "[data][nmt]") {
  lines_t const lines{{"go", "."}, {"hi", ".", "x", "y", "z"}};
  // counts . 2, then go hi x y z once each in that order
  data::vocab const v(lines, 0, {"<pad>", "<bos>", "<eos>"});
  REQUIRE(v.idx_to_token() == tokens{"<unk>", "<pad>", "<bos>", "<eos>", ".", "go", "hi", "x", "y", "z"});

  auto const [array, valid_len] = data::build_array_nmt<Batch, Steps>(lines, v, 4);
  static_assert(std::is_same_v<std::remove_cvref_t<decltype(array)>, dt::basic_tensor<dt::cpu, std::int64_t, Batch, Steps>>);
  // Lengths along Steps, as a tensor [Batch] (masked_softmax<Steps> and the losses check the dim).
  static_assert(
      std::is_same_v<std::remove_cvref_t<decltype(valid_len)>, dt::basic_lengths<Steps, dt::cpu, std::int64_t, Batch>>);
  static_assert(dt::is_tensor_v<std::remove_cvref_t<decltype(valid_len)>>);
  CHECK(array.extents() == std::array<dt::index_t, 2>{2, 4});
  CHECK(values(array) == std::vector<std::int64_t>{5, 4, 3, 1,    // go . <eos> <pad>
                                                   6, 4, 7, 8});  // hi . x y: truncated, <eos> dropped
  CHECK(values(valid_len) == std::vector<std::int64_t>{3, 4});
  CHECK(array(Batch(0), Steps(2)) == v["<eos>"]);

  SECTION("unknown tokens count as tokens; a static Steps") {
    auto const r = data::build_array_nmt<Batch, Steps::fixed<6>>(lines_t{{"zz", "go"}}, v, 6);
    CHECK(values(r.array) == std::vector<std::int64_t>{0, 5, 3, 1, 1, 1});
    CHECK(values(r.valid_len) == std::vector<std::int64_t>{3});
    CHECK_THROWS_AS((data::build_array_nmt<Batch, Steps::fixed<5>>(lines, v, 4)), dt::shape_error);
  }
  SECTION("the arrays feed the masking ops") {
    auto const masked = dt::sequence_mask<Steps>(dt::cast<float>(array), valid_len);
    CHECK(masked(Batch(0), Steps(3)) == 0.0f);
    CHECK(masked(Batch(0), Steps(2)) == 3.0f);
  }
  SECTION("a vocabulary without <pad> or <eos>") {
    CHECK_THROWS_AS((data::build_array_nmt<Batch, Steps>(lines, data::vocab(lines), 4)), dt::value_error);
    CHECK_THROWS_AS((data::build_array_nmt<Batch, Steps>(lines, data::vocab(lines, 0, {"<pad>"}), 4)),
                    dt::value_error);
  }
}

namespace {

// 25 pairs; pair i is "w<i> w<i> common\tm<i> m<i> commun ." so that, with
// min_freq 2, every training pair's own words are in the vocabularies and
// the held-out pairs' are not.
std::string numbered_corpus(int n) {
  std::string s = "# numbered pairs\n";
  for (int i = 0; i < n; ++i) {
    s += "W" + std::to_string(i) + " w" + std::to_string(i) + " common\tm" + std::to_string(i) + " m" +
         std::to_string(i) + " commun.\n";
  }
  return s;
}

}  // namespace

TEST_CASE("nmt_dataset: every 10th pair held out, vocabularies from the training pairs", "[data][nmt]") {
  auto const text = numbered_corpus(25);
  data::nmt_options options;
  options.num_steps = 5;
  options.num_examples = std::nullopt;
  auto const ds = data::nmt_dataset<Batch, Steps>::from_text(text, options);

  REQUIRE(ds.size() == 23);
  REQUIRE(ds.test_pairs().size() == 2);
  CHECK(ds.test_pairs().source == lines_t{{"w9", "w9", "common"}, {"w19", "w19", "common"}});
  CHECK(ds.test_pairs().target == lines_t{{"m9", "m9", "commun", "."}, {"m19", "m19", "commun", "."}});
  CHECK(ds.test_pairs().lines == std::vector<std::size_t>{11, 21});  // the comment is line 1
  CHECK(ds.train_pairs().source[8] == tokens{"w8", "w8", "common"});
  CHECK(ds.train_pairs().source[9] == tokens{"w10", "w10", "common"});
  CHECK(ds.skipped().empty());

  auto const& sv = ds.src_vocab();
  CHECK(sv["<unk>"] == 0);
  CHECK(sv["<pad>"] == 1);
  CHECK(sv["<bos>"] == 2);
  CHECK(sv["<eos>"] == 3);
  CHECK(sv["common"] == 4);  // 23 times, the most frequent
  CHECK(sv.size() == 4 + 1 + 23);
  CHECK_FALSE(sv.contains("w9"));
  CHECK_FALSE(sv.contains("w19"));
  CHECK(sv.contains("w24"));
  CHECK(ds.tgt_vocab().size() == 4 + 2 + 23);
  CHECK_FALSE(ds.tgt_vocab().contains("m9"));

  // the arrays hold the training pairs in file order
  CHECK(ds.src().extents() == std::array<dt::index_t, 2>{23, 5});
  CHECK(ds.tgt().extents() == std::array<dt::index_t, 2>{23, 5});
  auto const w10 = sv["w10"];
  CHECK(values(ds.src()).at(9 * 5) == w10);
  CHECK(ds.src()(Batch(9), Steps(3)) == 3);  // <eos>
  CHECK(ds.src()(Batch(9), Steps(4)) == 1);  // <pad>
  CHECK(values(ds.src_valid_len()) == std::vector<std::int64_t>(23, 4));
  CHECK(values(ds.tgt_valid_len()) == std::vector<std::int64_t>(23, 5));

  SECTION("num_examples counts the held-out pairs too") {
    options.num_examples = 20;
    auto const first20 = data::nmt_dataset<Batch, Steps>::from_text(text, options);
    CHECK(first20.size() == 18);
    CHECK(first20.test_pairs().lines == std::vector<std::size_t>{11, 21});
  }
  SECTION("test_period 0: no split; another period") {
    options.test_period = 0;
    CHECK(data::nmt_dataset<Batch, Steps>::from_text(text, options).test_pairs().size() == 0);
    options.test_period = 3;  // pairs 2, 5, 8, …, 23
    auto const thirds = data::nmt_dataset<Batch, Steps>::from_text(text, options);
    CHECK(thirds.test_pairs().size() == 8);
    CHECK(thirds.test_pairs().source.front() == tokens{"w2", "w2", "common"});
    CHECK(thirds.size() == 17);
  }
  SECTION("min_freq 1 keeps words seen once; a static Steps") {
    options.min_freq = 1;
    auto const ds1 = data::nmt_dataset<Batch, Steps::fixed<5>>::from_text(text, options);
    CHECK(ds1.src_vocab().size() == 4 + 1 + 23);
    CHECK(ds1.tgt_vocab()["."] == 5);  // commun 23, . 23: first seen wins the tie
    options.num_steps = 6;
    CHECK_THROWS_AS((data::nmt_dataset<Batch, Steps::fixed<5>>::from_text(text, options)), dt::shape_error);
    options.num_steps = 0;
    CHECK_THROWS_AS((data::nmt_dataset<Batch, Steps>::from_text(text, options)), dt::value_error);
  }
}

TEST_CASE("nmt_dataset: skipped lines reported to the warning sink, by file name", "[data][nmt]") {
  auto const file = tmp() / "fra.txt";
  write_bytes(file, "# header\nGo.\tVa !\nbroken line\nHi.\tSalut !\nA\tB\tC\n");
  std::ostringstream warnings;
  data::nmt_options options;
  options.num_steps = 4;
  options.warnings = &warnings;
  data::nmt_dataset<Batch, Steps> const ds(file, options);
  CHECK(ds.size() == 2);
  CHECK(ds.skipped() == std::vector<data::skipped_line>{{3, "no tab"}, {5, "more than one tab"}});
  CHECK(warnings.str() == file.string() + ":3: no tab, skipped\n" + file.string() + ":5: more than one tab, skipped\n");

  CHECK(data::nmt_options{}.warnings == &std::cerr);
  options.warnings = nullptr;  // silent; skipped() still lists them
  CHECK(data::nmt_dataset<Batch, Steps>(file, options).skipped().size() == 2);

  auto const loaded = data::load_data_nmt<Batch, Steps>(file, 8, 1);
  CHECK(loaded.size() == 1);
  CHECK(loaded.num_steps() == 8);
}

TEST_CASE("nmt_dataset::batches: every training pair once per epoch, shuffled by the generator", "[data][nmt]") {
  data::nmt_options options;
  options.num_steps = 5;
  options.warnings = nullptr;
  auto const ds = data::nmt_dataset<Batch, Steps>::from_text(numbered_corpus(25), options);
  REQUIRE(ds.size() == 23);
  auto const src = values(ds.src());
  auto const tgt = values(ds.tgt());

  dt::generator gen(42);
  auto const epoch1 = ds.batches(5, gen);
  CHECK(epoch1.size() == 5);
  CHECK(epoch1.batch_size() == 5);
  std::vector<dt::index_t> sizes;
  std::vector<std::size_t> seen;
  std::size_t k = 0;
  for (auto const& [X, X_valid_len, Y, Y_valid_len] : epoch1) {
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(X)>, dt::basic_tensor<dt::cpu, std::int64_t, Batch, Steps>>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(X_valid_len)>,
                                 dt::basic_lengths<Steps, dt::cpu, std::int64_t, Batch>>);
    static_assert(std::is_same_v<std::remove_cvref_t<decltype(Y_valid_len)>,
                                 dt::basic_lengths<Steps, dt::cpu, std::int64_t, Batch>>);
    dt::index_t const n = X.extents()[0];
    sizes.push_back(n);
    CHECK(X.extents()[1] == 5);
    REQUIRE(Y.extents() == X.extents());
    REQUIRE(X_valid_len.extents()[0] == n);
    for (dt::index_t r = 0; r < n; ++r, ++k) {
      std::size_t const p = epoch1.order()[k];
      seen.push_back(p);
      for (dt::index_t s = 0; s < 5; ++s) {
        CHECK(X(Batch(r), Steps(s)) == src[p * 5 + static_cast<std::size_t>(s)]);
        CHECK(Y(Batch(r), Steps(s)) == tgt[p * 5 + static_cast<std::size_t>(s)]);
      }
      // the row is training pair p's: its word, and the held-out pairs' never show
      CHECK(X(Batch(r), Steps(0)) == ds.src_vocab()[ds.train_pairs().source[p][0]]);
      CHECK(X_valid_len(Batch(r)) == 4);
      CHECK(Y_valid_len(Batch(r)) == 5);
    }
  }
  CHECK(sizes == std::vector<dt::index_t>{5, 5, 5, 5, 3});
  std::sort(seen.begin(), seen.end());
  std::vector<std::size_t> all(23);
  std::iota(all.begin(), all.end(), std::size_t{0});
  CHECK(seen == all);
  std::vector<std::size_t> file_order(all);
  CHECK(epoch1.order() != file_order);

  SECTION("a new order each epoch, the same for the same seed, another for another seed") {
    auto const epoch2 = ds.batches(5, gen);
    CHECK(epoch2.order() != epoch1.order());
    auto sorted2 = epoch2.order();
    std::sort(sorted2.begin(), sorted2.end());
    CHECK(sorted2 == all);

    dt::generator again(42);
    CHECK(ds.batches(5, again).order() == epoch1.order());
    CHECK(ds.batches(7, again).order() == epoch2.order());  // the order does not depend on the batch size
    dt::generator other(43);
    CHECK(ds.batches(5, other).order() != epoch1.order());
  }
  SECTION("batch sizes: one batch of everything, one pair per batch; 0 is refused") {
    CHECK(ds.batches(100, gen).size() == 1);
    auto const whole = *ds.batches(100, gen).begin();
    CHECK(whole.X.extents()[0] == 23);
    CHECK(ds.batches(1, gen).size() == 23);
    CHECK(ds.batches(23, gen).size() == 1);
    CHECK(ds.batches(22, gen).size() == 2);
    CHECK_THROWS_AS(ds.batches(0, gen), dt::value_error);
    CHECK_THROWS_AS(ds.batches(5, gen).batch(5), dt::value_error);
  }
}

TEST_CASE("nmt_dataset: the shipped corpus examples/data/fra-eng/fra.txt", "[data][nmt]") {
  fs::path const file = fs::path(DIMTENSOR_EXAMPLES_DATA_DIR) / "fra-eng" / "fra.txt";
  if (!fs::exists(file)) {
    WARN("skipped: " << file.string() << " does not exist");
    return;
  }
  std::ostringstream warnings;
  data::nmt_options options;
  options.num_steps = 10;
  options.num_examples = std::nullopt;
  options.warnings = &warnings;
  data::nmt_dataset<Batch, Steps> const ds(file, options);
  CHECK(warnings.str().empty());
  CHECK(ds.skipped().empty());
  std::size_t const pairs = ds.size() + ds.test_pairs().size();
  REQUIRE(pairs > 0);
  CHECK(ds.test_pairs().size() == pairs / 10);
  CHECK(ds.src_vocab().idx_to_token().size() >= 4);
  CHECK(ds.src_vocab()["<eos>"] == 3);
  CHECK(ds.tgt_vocab()["<pad>"] == 1);
  // one check each, not one per token: the corpus has thousands
  std::vector<std::string> uppercase;
  for (auto const* side : {&ds.train_pairs().source, &ds.train_pairs().target}) {
    for (auto const& line : *side) {
      for (auto const& token : line) {
        if (std::any_of(token.begin(), token.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) {
          uppercase.push_back(token);
        }
      }
    }
  }
  CHECK(uppercase.empty());
  auto const in_range = [](std::int64_t len) { return len >= 2 && len <= 10; };  // a token and <eos>, at least
  auto const src_lens = values(ds.src_valid_len());
  auto const tgt_lens = values(ds.tgt_valid_len());
  CHECK(std::all_of(src_lens.begin(), src_lens.end(), in_range));
  CHECK(std::all_of(tgt_lens.begin(), tgt_lens.end(), in_range));
  // d2l's default: the first 600 pairs, 540 of them for training when the file has that many
  auto const d2l = data::load_data_nmt<Batch, Steps>(file, 8);
  CHECK(d2l.size() + d2l.test_pairs().size() == std::min<std::size_t>(pairs, 600));
}

namespace nmt_test_steps {
DIMTENSOR_DIM(EncSteps);
DIMTENSOR_DIM(DecSteps);
}  // namespace nmt_test_steps

TEST_CASE("nmt_dataset<Batch, EncSteps, DecSteps>: sources and targets under steps of their own", "[data][nmt]") {
  using nmt_test_steps::DecSteps;
  using nmt_test_steps::EncSteps;
  data::nmt_options options;
  options.num_steps = 5;
  options.warnings = nullptr;
  auto const ds = data::nmt_dataset<Batch, EncSteps, DecSteps>::from_text(numbered_corpus(25), options);
  auto const same = data::nmt_dataset<Batch, Steps>::from_text(numbered_corpus(25), options);
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(ds.src())>, dt::tensor<std::int64_t, Batch, EncSteps>>);
  STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(ds.tgt())>, dt::tensor<std::int64_t, Batch, DecSteps>>);
  CHECK(values(ds.src()) == values(same.src()));
  CHECK(values(ds.tgt()) == values(same.tgt()));
  dt::generator gen(7);
  for (auto const& [X, X_valid_len, Y, Y_valid_len] : ds.batches(8, gen)) {
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(X)>, dt::tensor<std::int64_t, Batch, EncSteps>>);
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(Y)>, dt::tensor<std::int64_t, Batch, DecSteps>>);
    // Each side's lengths measure its own steps.
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(X_valid_len)>, dt::lengths<EncSteps, Batch>>);
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(Y_valid_len)>, dt::lengths<DecSteps, Batch>>);
    STATIC_REQUIRE(std::is_same_v<std::remove_cvref_t<decltype(ds.tgt_valid_len())>, dt::lengths<DecSteps, Batch>>);
    CHECK(Y.extent<DecSteps>() == 5);
    CHECK(X.extent<Batch>() == Y_valid_len.extent<Batch>());
  }
}

}  // namespace nmt_test
