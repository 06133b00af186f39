#include <catch2/catch.hpp>

#include <dimtensor/io/detail/json.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace json_test {
namespace {

namespace json = dimtensor::detail::json;

// The parse_error of @p text, or "(no error)".
std::string parse_failure(std::string_view text, std::size_t max_depth = json::default_max_depth) {
  try {
    (void)json::parse(text, max_depth);
  } catch (json::parse_error const& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("json::parse reads every kind of value", "[io][json]") {
  auto const v = json::parse(
      " {\"n\": null, \"t\": true, \"f\": false, \"i\": -42, \"z\": 0, \"d\": 2.5e-3, \"s\": \"hi\","
      " \"a\": [1, [2, {}], []], \"o\": {\"k\": \"v\"}}\r\n\t");
  REQUIRE(v.type() == json::kind::object);
  auto const& o = v.as_object();
  REQUIRE(o.size() == 9);
  CHECK(o[0].first == "n");  // members keep the order written
  CHECK(o[8].first == "o");
  CHECK(v.find("n")->is_null());
  CHECK(v.find("t")->as_bool() == true);
  CHECK(v.find("f")->as_bool() == false);
  CHECK(v.find("i")->type() == json::kind::integer);
  CHECK(v.find("i")->as_integer() == -42);
  CHECK(v.find("z")->as_integer() == 0);
  CHECK(v.find("d")->type() == json::kind::number);
  CHECK(v.find("d")->as_number() == 2.5e-3);
  CHECK(v.find("s")->as_string() == "hi");
  auto const& a = v.find("a")->as_array();
  REQUIRE(a.size() == 3);
  CHECK(a[0].as_integer() == 1);
  CHECK(a[1].as_array()[1].as_object().empty());
  CHECK(a[2].as_array().empty());
  CHECK(v.find("o")->find("k")->as_string() == "v");
  CHECK(v.find("missing") == nullptr);
  CHECK(json::parse("7").find("k") == nullptr);

  // Wrong-kind access is a value_error naming both kinds.
  REQUIRE_THROWS_AS(v.find("s")->as_integer(), dimtensor::value_error);
  REQUIRE_THROWS_WITH(v.find("s")->as_array(), Catch::Contains("expected an array, found a string"));
  CHECK(v.find("i")->as_number() == -42.0);
}

TEST_CASE("json::parse numbers: int64 range, fractions, exponents", "[io][json]") {
  CHECK(json::parse("9223372036854775807").as_integer() == std::numeric_limits<std::int64_t>::max());
  CHECK(json::parse("-9223372036854775808").as_integer() == std::numeric_limits<std::int64_t>::min());
  // Integers beyond int64 become numbers rather than failing.
  auto const big = json::parse("18446744073709551616");
  CHECK(big.type() == json::kind::number);
  CHECK(big.as_number() == 18446744073709551616.0);
  CHECK(json::parse("1E2").as_number() == 100.0);
  CHECK(json::parse("1e+2").as_number() == 100.0);
  CHECK(json::parse("-0.5e-1").as_number() == -0.05);
  CHECK(json::parse("0.1").as_number() == 0.1);
  CHECK(json::parse("-0").as_integer() == 0);
  CHECK(json::parse("1.0").type() == json::kind::number);

  CHECK_THAT(parse_failure("01"), Catch::Contains("leading zero") && Catch::Contains("at byte 0"));
  CHECK_THAT(parse_failure("-"), Catch::Contains("expected a digit after '-'"));
  CHECK_THAT(parse_failure("1."), Catch::Contains("expected a digit after '.'"));
  CHECK_THAT(parse_failure("1e"), Catch::Contains("expected a digit in the exponent"));
  CHECK_THAT(parse_failure(".5"), Catch::Contains("unexpected '.': expected a value"));
  CHECK_THAT(parse_failure("+1"), Catch::Contains("unexpected '+'"));
  CHECK_THAT(parse_failure("1e400"), Catch::Contains("out of the range of a double"));
  CHECK_THAT(parse_failure("NaN"), Catch::Contains("unexpected 'N'"));
  CHECK_THAT(parse_failure("[Infinity]"), Catch::Contains("unexpected 'I'"));
  CHECK_THAT(parse_failure("0x10"), Catch::Contains("unexpected 'x' after the JSON value"));
}

TEST_CASE("json::parse strings: escapes, \\u, surrogate pairs, UTF-8", "[io][json]") {
  CHECK(json::parse(R"("a\"b\\c\/d\be\ff\ng\rh\ti")").as_string() == "a\"b\\c/d\be\ff\ng\rh\ti");
  CHECK(json::parse(R"("\u0041\u00e9\u2603")").as_string() == "A\xc3\xa9\xe2\x98\x83");
  CHECK(json::parse(R"("\u00E9")").as_string() == "\xc3\xa9");
  CHECK(json::parse(R"("\u0000")").as_string() == std::string(1, '\0'));
  // U+1F600 as a surrogate pair, and the largest code point U+10FFFF.
  CHECK(json::parse(R"("\ud83d\ude00")").as_string() == "\xf0\x9f\x98\x80");
  CHECK(json::parse(R"("\uDBFF\uDFFF")").as_string() == "\xf4\x8f\xbf\xbf");
  // Raw UTF-8 passes through.
  CHECK(json::parse("\"\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80\"").as_string() == "\xc3\xa9\xe2\x98\x83\xf0\x9f\x98\x80");

  CHECK_THAT(parse_failure(R"("\ud83d")"), Catch::Contains("high surrogate not followed by a \\u low surrogate"));
  CHECK_THAT(parse_failure(R"("\ud83dx")"), Catch::Contains("high surrogate"));
  CHECK_THAT(parse_failure(R"("\ud83d\u0041")"), Catch::Contains("high surrogate"));
  CHECK_THAT(parse_failure(R"("ab\ude00")"), Catch::Contains("unpaired low surrogate") && Catch::Contains("byte 3"));
  CHECK_THAT(parse_failure(R"("\u12")"), Catch::Contains("expected 4 hex digits"));
  CHECK_THAT(parse_failure(R"("\u12g4")"), Catch::Contains("'g' in a \\u escape"));
  CHECK_THAT(parse_failure(R"("\x41")"), Catch::Contains("invalid escape sequence '\\x'"));
  CHECK_THAT(parse_failure("\"a\nb\""), Catch::Contains("raw control character U+000a"));
  CHECK_THAT(parse_failure("\"tab\there\""), Catch::Contains("raw control character U+0009"));
  CHECK_THAT(parse_failure("\"abc"), Catch::Contains("unexpected end of text in a string"));
  CHECK_THAT(parse_failure("'single'"), Catch::Contains("unexpected '''"));
  // Invalid UTF-8: a stray continuation byte, an overlong '/', an encoded
  // surrogate, a code point above U+10FFFF, a truncated sequence, and 0xff.
  for (std::string_view bad :
       {"\"\x80\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe2\x98\"", "\"\xff\""}) {
    CHECK_THAT(parse_failure(bad), Catch::Contains("invalid UTF-8 byte 0x") && Catch::Contains("at byte 1"));
  }
  // Outside strings, a non-ASCII byte is just unexpected.
  CHECK_THAT(parse_failure("\xc3\xa9"), Catch::Contains("unexpected byte 0xc3"));
}

TEST_CASE("json::parse rejects what RFC 8259 does not allow, saying where", "[io][json]") {
  CHECK_THAT(parse_failure(""), Catch::Contains("empty text"));
  CHECK_THAT(parse_failure("   "), Catch::Contains("empty text"));
  CHECK_THAT(parse_failure("[1, 2,]"), Catch::Contains("trailing ',' before ']'") && Catch::Contains("at byte 6"));
  CHECK_THAT(parse_failure("{\"a\": 1,}"), Catch::Contains("trailing ',' before '}'"));
  CHECK_THAT(parse_failure("{a: 1}"), Catch::Contains("unexpected 'a': expected a string key"));
  CHECK_THAT(parse_failure("{\"a\" 1}"), Catch::Contains("expected ':' after a key"));
  CHECK_THAT(parse_failure("{\"a\": 1 \"b\": 2}"), Catch::Contains("expected ',' or '}' in an object"));
  CHECK_THAT(parse_failure("[1 2]"), Catch::Contains("expected ',' or ']' in an array"));
  CHECK_THAT(parse_failure("[1"), Catch::Contains("unexpected end of text: expected ',' or ']'"));
  CHECK_THAT(parse_failure("{\"a\":"), Catch::Contains("unexpected end of text: expected a value"));
  CHECK_THAT(parse_failure("tru"), Catch::Contains("invalid literal: expected 'true'"));
  CHECK_THAT(parse_failure("nul"), Catch::Contains("expected 'null'"));
  CHECK_THAT(parse_failure("{} {}"),
             Catch::Contains("unexpected '{' after the JSON value") && Catch::Contains("byte 3"));
  CHECK_THAT(parse_failure("// comment\n{}"), Catch::Contains("unexpected '/'"));
  CHECK_THAT(parse_failure("[1]\x0b"), Catch::Contains("unexpected byte 0x0b"));

  // Line and column of the offending byte.
  try {
    (void)json::parse("{\n  \"a\": 1,\n  \"b\": x\n}");
    FAIL("no parse_error");
  } catch (json::parse_error const& e) {
    CHECK(e.offset() == 19);
    CHECK(e.line() == 3);
    CHECK(e.column() == 8);
    CHECK(e.reason() == "unexpected 'x': expected a value");
    CHECK(std::string(e.what()) == "unexpected 'x': expected a value at byte 19 (line 3, column 8)");
  }
  // A parse_error is a value_error.
  REQUIRE_THROWS_AS(json::parse("["), dimtensor::value_error);
}

TEST_CASE("json::parse rejects duplicate keys", "[io][json]") {
  CHECK_THAT(parse_failure(R"({"a": 1, "b": 2, "a": 3})"),
             Catch::Contains("duplicate key \"a\" in an object") && Catch::Contains("at byte 17"));
  // Nested, and spelled differently but equal after unescaping.
  CHECK_THAT(parse_failure(R"({"x": {"k\u0041": 1, "kA": 2}})"), Catch::Contains("duplicate key \"kA\""));
  // The same key in sibling objects is fine.
  CHECK_NOTHROW(json::parse(R"([{"a": 1}, {"a": 2}])"));
  // Many keys: checked without quadratic time; the first repeated one is named.
  std::string many = "{";
  for (int i = 0; i < 20000; ++i) many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  auto const ok = json::parse(many.substr(0, many.size() - 1) + "}");
  CHECK(ok.as_object().size() == 20000);
  CHECK_THAT(parse_failure(many + "\"k19999\": 0, \"k5\": 1}"), Catch::Contains("duplicate key \"k19999\""));
}

TEST_CASE("json::parse limits nesting instead of overflowing the stack", "[io][json]") {
  auto const nested = [](std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  CHECK_NOTHROW(json::parse(nested(64)));
  CHECK_THAT(parse_failure(nested(65)), Catch::Contains("nested deeper than 64 levels") && Catch::Contains("byte 64"));
  std::string objects;
  for (int i = 0; i < 65; ++i) objects += "{\"a\":";
  objects += "1" + std::string(65, '}');
  CHECK_THAT(parse_failure(objects), Catch::Contains("nested deeper than 64 levels"));
  // Far deeper than any stack would take, unclosed too.
  CHECK_THAT(parse_failure(std::string(1'000'000, '[')), Catch::Contains("nested deeper than 64 levels"));
  CHECK_THAT(parse_failure(nested(3), 2), Catch::Contains("nested deeper than 2 levels"));
}

TEST_CASE("json::dump writes compact JSON that reads back", "[io][json]") {
  json::object o;
  o.emplace_back("s", "q\"b\\n\n\t\x01\x1f/\xc3\xa9");
  o.emplace_back("i", -7);
  o.emplace_back("u", std::size_t{24});
  o.emplace_back("d", 1.0);
  o.emplace_back("e", 0.1);
  o.emplace_back("big", 1e300);
  o.emplace_back("b", json::array{true, false, nullptr});
  o.emplace_back("o", json::object{});
  json::value const v(o);
  std::string const text = json::dump(v);
  CHECK(text ==
        "{\"s\":\"q\\\"b\\\\n\\n\\t\\u0001\\u001f/\xc3\xa9\",\"i\":-7,\"u\":24,\"d\":1.0,\"e\":0.1,\"big\":1e+300,"
        "\"b\":[true,false,null],\"o\":{}}");
  CHECK(json::parse(text) == v);

  REQUIRE_THROWS_AS(json::dump(json::value(std::nan(""))), dimtensor::value_error);
  REQUIRE_THROWS_WITH(json::dump(json::value(HUGE_VAL)), Catch::Contains("has no JSON spelling"));
  REQUIRE_THROWS_WITH(json::dump(json::value("\xff")), Catch::Contains("not valid UTF-8"));
  REQUIRE_THROWS_WITH(json::value(std::uint64_t{1} << 63), Catch::Contains("does not fit a signed 64-bit integer"));
  CHECK(json::is_valid_utf8("plain \xe2\x98\x83"));
  CHECK_FALSE(json::is_valid_utf8("\xe2\x98"));
}

}  // namespace json_test
