#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/safetensors.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "unit/support/files.hpp"

namespace safetensors_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;
namespace fs = std::filesystem;

// The committed goldens (tests/unit/io/data/make_safetensors.py wrote them);
// the build gives their folder (__FILE__ may be relative to the build tree,
// e.g. under ccache with a base directory).
fs::path const data_dir = fs::path(DIMTENSOR_UNIT_DATA_DIR) / "io" / "data";

using namespace test_support;

// This file's directory, removed at exit.
temp_dir const& tmp() { return program_temp_dir("dimtensor_safetensors_test_"); }

std::string le64(std::uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return s;
}

// A safetensors file by hand: the header as given (not padded), then data.
std::string file_bytes(std::string const& header, std::string const& data) {
  return le64(header.size()) + header + data;
}

std::string raw16(std::vector<std::uint16_t> const& v) { return raw(v); }

template <class Tensor>
Tensor patterned(typename Tensor::extents_type const& ext) {
  Tensor t(dt::uninitialized, ext);
  fill_pattern(t);
  return t;
}

template <class Tensor>
void check_same(Tensor const& got, Tensor const& want) {
  REQUIRE(got.extents() == want.extents());
  REQUIRE(got.is_contiguous());
  for (dt::index_t i = 0; i < want.size(); ++i) CHECK(got.data()[i] == want.data()[i]);
}

// The io_error message of loading key as Tensor from a file of these bytes.
template <class Tensor>
std::string load_error(std::string const& bytes, std::string const& key) {
  auto const p = tmp() / "load_error.safetensors";
  write_bytes(p, bytes);
  try {
    (void)dt::load_safetensors<Tensor>(p, key);
  } catch (dt::io_error const& e) {
    return e.what();
  }
  return "(no io_error)";
}

// The io_error message of opening a file of these bytes.
std::string open_error(std::string const& bytes) {
  auto const p = tmp() / "open_error.safetensors";
  write_bytes(p, bytes);
  try {
    dt::safetensors_reader r(p);
  } catch (dt::io_error const& e) {
    return e.what();
  }
  return "(no io_error)";
}

// One valid entry: 6 floats at [0, 24).
std::string const ok_entry = R"("w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]})";
std::string const six_floats = raw(std::vector<float>{1, 2, 3, 4, 5, 6});

template <class T>
void round_trip_all_ranks(std::string const& tag) {
  using r0 = dt::tensor<T>;
  using r1 = dt::tensor<T, Batch>;
  using r2 = dt::tensor<T, Batch, Queries>;
  using r3 = dt::tensor<T, Batch, Queries, KVPairs>;
  using r4 = dt::tensor<T, Batch, Queries, KVPairs, Hidden::fixed<2>>;
  auto const a0 = patterned<r0>({});
  auto const a1 = patterned<r1>({5});
  auto const a2 = patterned<r2>({3, 4});
  auto const a3 = patterned<r3>({2, 3, 5});
  auto const a4 = patterned<r4>({2, 1, 3, 2});
  auto const empty = patterned<r2>({0, 3});

  dt::safetensors_writer w;
  w.add("r0", a0);
  w.add("r1", a1);
  w.add("r2", a2);
  w.add("r3", a3);
  w.add("r4", a4);
  w.add("empty", empty);
  auto const p = tmp() / (tag + ".safetensors");
  w.save(p);

  auto const bytes = read_bytes(p);
  REQUIRE(bytes.size() >= 8);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  CHECK(n % 8 == 0);
  std::size_t const elements = 1 + 5 + 12 + 30 + 12;
  CHECK(bytes.size() == 8 + n + elements * sizeof(T));

  dt::safetensors_reader r(p);
  CHECK(r.keys() == std::vector<std::string>{"empty", "r0", "r1", "r2", "r3", "r4"});
  CHECK(r.metadata().empty());
  CHECK(r.entry("r0").shape.empty());
  CHECK(r.entry("r3").shape == std::vector<dt::index_t>{2, 3, 5});
  CHECK(r.entry("r3").dtype == std::string(dt::detail::safetensors_dtype_of<T>));
  CHECK(r.entry("r3").end - r.entry("r3").begin == 30 * sizeof(T));
  check_same(r.load<r0>("r0"), a0);
  check_same(r.load<r1>("r1"), a1);
  check_same(r.load<r2>("r2"), a2);
  check_same(r.load<r3>("r3"), a3);
  check_same(r.load<r4>("r4"), a4);
  check_same(r.load<r2>("empty"), empty);
  check_same(dt::load_safetensors<r3>(p, "r3"), a3);
}

using f2 = dt::tensor<float, Batch, Queries>;
using f3 = dt::tensor<float, Batch, Queries, KVPairs>;

}  // namespace

TEST_CASE("safetensors round trip of every dtype at ranks 0 to 4", "[io][safetensors]") {
  SECTION("float") { round_trip_all_ranks<float>("f32"); }
  SECTION("double") { round_trip_all_ranks<double>("f64"); }
  SECTION("int32") { round_trip_all_ranks<std::int32_t>("i32"); }
  SECTION("int64") { round_trip_all_ranks<std::int64_t>("i64"); }
  SECTION("bool") { round_trip_all_ranks<bool>("bool"); }
}

TEST_CASE("safetensors_writer writes views in logical order and evaluates expressions", "[io][safetensors]") {
  f2 const x{{1, 2, 3}, {4, 5, 6}};
  auto const xt = dt::transpose<Batch, Queries>(x);  // [Queries=3, Batch=2], a strided view
  REQUIRE_FALSE(dt::eval(xt).is_contiguous());

  dt::safetensors_writer w;
  w.add("xt", xt);
  w.add("lazy", x * 2.0f + 1.0f);
  w.add("mask", x > 2.5f);
  w.add_metadata("format", "pt");
  auto const p = tmp() / "views.safetensors";
  w.save(p);

  dt::safetensors_reader r(p);
  auto const t = r.load<dt::tensor<float, Queries, Batch>>("xt");
  REQUIRE(t.extents() == std::array<dt::index_t, 2>{3, 2});
  std::vector<float> const want_t{1, 4, 2, 5, 3, 6};
  for (std::size_t i = 0; i < want_t.size(); ++i) CHECK(t.data()[i] == want_t[i]);

  auto const lazy = r.load<f2>("lazy");
  std::vector<float> const want_lazy{3, 5, 7, 9, 11, 13};
  for (std::size_t i = 0; i < want_lazy.size(); ++i) CHECK(lazy.data()[i] == want_lazy[i]);

  auto const mask = r.load<dt::tensor<bool, Batch, Queries>>("mask");
  std::vector<bool> const want_mask{false, false, true, true, true, true};
  for (std::size_t i = 0; i < want_mask.size(); ++i) CHECK(mask.data()[i] == want_mask[i]);
  CHECK(r.metadata() == std::map<std::string, std::string>{{"format", "pt"}});

  // The writer copied the elements: changing x afterwards changes nothing.
  dt::safetensors_writer w2;
  f2 y = x.clone();
  w2.add("y", y);
  y.data()[0] = 100;
  w2.save(tmp() / "copy.safetensors");
  CHECK(dt::load_safetensors<f2>(tmp() / "copy.safetensors", "y").data()[0] == 1.0f);
}

TEST_CASE("safetensors_writer writes what the reference writer writes, byte for byte", "[io][safetensors]") {
  // The reference implementation's test_serialization: "attn.0", F32 [1, 2, 3], 0..5.
  dt::safetensors_writer w;
  w.add("attn.0", dt::tensor<float, Batch, Queries, KVPairs>{{{0, 1, 2}, {3, 4, 5}}});
  w.save(tmp() / "attn.safetensors");
  std::string const header = R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})";
  REQUIRE(header.size() == 64);
  CHECK(read_bytes(tmp() / "attn.safetensors") == le64(64) + header + raw(std::vector<float>{0, 1, 2, 3, 4, 5}));

  // test_empty, without and with metadata.
  dt::safetensors_writer().save(tmp() / "empty.safetensors");
  CHECK(read_bytes(tmp() / "empty.safetensors") == le64(8) + "{}      ");
  dt::safetensors_writer m;
  m.add_metadata("framework", "pt");
  m.save(tmp() / "meta.safetensors");
  CHECK(read_bytes(tmp() / "meta.safetensors") == le64(40) + R"({"__metadata__":{"framework":"pt"}})" + "     ");
  dt::safetensors_reader const r(tmp() / "empty.safetensors");
  CHECK(r.keys().empty());

  // Entries go widest dtype first (the reference's dtype order), then by key,
  // so that every tensor's data is aligned to its element size.
  dt::safetensors_writer order;
  order.add("a", dt::tensor<float, Batch>{1, 2, 3});
  order.add("b", dt::tensor<std::int64_t, Batch>{4});
  order.add("c", dt::tensor<double, Batch>{5});
  order.add("d", dt::tensor<bool, Batch>{true});
  order.add("e", dt::tensor<std::int32_t, Batch>{6, 7});
  order.add("aa", dt::tensor<float, Batch>{8});
  order.add_metadata("z", "last");
  order.add_metadata("y", "\xe2\x98\x83 \"quoted\"\n");
  order.save(tmp() / "order.safetensors");
  std::string const want = R"({"__metadata__":{"y":"☃ \"quoted\"\n","z":"last"},)"
                           R"("b":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
                           R"("c":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},)"
                           R"("a":{"dtype":"F32","shape":[3],"data_offsets":[16,28]},)"
                           R"("aa":{"dtype":"F32","shape":[1],"data_offsets":[28,32]},)"
                           R"("e":{"dtype":"I32","shape":[2],"data_offsets":[32,40]},)"
                           R"("d":{"dtype":"BOOL","shape":[1],"data_offsets":[40,41]}})";
  auto const bytes = read_bytes(tmp() / "order.safetensors");
  std::size_t const n = (want.size() + 7) / 8 * 8;
  REQUIRE(bytes.size() == 8 + n + 41);
  CHECK(bytes.substr(0, 8) == le64(n));
  CHECK(bytes.substr(8, want.size()) == want);
  CHECK(bytes.substr(8 + want.size(), n - want.size()) == std::string(n - want.size(), ' '));
  dt::safetensors_reader const o(tmp() / "order.safetensors");
  CHECK(o.metadata().at("y") == "\xe2\x98\x83 \"quoted\"\n");
  CHECK(o.load<dt::tensor<std::int32_t, Batch>>("e").data()[1] == 7);
}

TEST_CASE("safetensors_reader loads the file Python wrote with the values it wrote", "[io][safetensors]") {
  dt::safetensors_reader const r(data_dir / "golden.safetensors");
  CHECK(r.path() == data_dir / "golden.safetensors");
  CHECK(r.keys() == std::vector<std::string>{"bf16", "bytes", "counts", "embed.weight", "empty", "half", "ids",
                                             "layer.0.bias", "mask", "rank4", "scalar"});
  CHECK(r.contains("mask"));
  CHECK_FALSE(r.contains("__metadata__"));
  CHECK_FALSE(r.contains("masks"));
  // json.dumps escaped the snowman as \u2603 and the emoji as a surrogate pair.
  CHECK(r.metadata() ==
        std::map<std::string, std::string>{{"format", "pt"}, {"note", "snowman \xe2\x98\x83 and \xf0\x9f\x98\x80"}});
  CHECK(r.entry("embed.weight").dtype == "F32");
  CHECK(r.entry("embed.weight").shape == std::vector<dt::index_t>{4, 6});

  // (arange(24) - 8) / 4 as [4, 6]
  auto const embed = r.load<dt::tensor<float, Batch, Hidden::fixed<6>>>("embed.weight");
  REQUIRE(embed.extents() == std::array<dt::index_t, 2>{4, 6});
  for (dt::index_t i = 0; i < 24; ++i) CHECK(embed.data()[i] == static_cast<float>(i - 8) / 4.0f);
  // (arange(5) - 2) * 0.375, float64
  auto const bias = r.load<dt::tensor<double, Hidden>>("layer.0.bias");
  for (dt::index_t i = 0; i < 5; ++i) CHECK(bias(Hidden(i)) == static_cast<double>(i - 2) * 0.375);
  // arange(6) * 10^12 - 3 as [2, 3], int64
  auto const counts = r.load<dt::tensor<std::int64_t, Batch, Queries>>("counts");
  for (dt::index_t i = 0; i < 6; ++i) CHECK(counts.data()[i] == i * 1'000'000'000'000 - 3);
  auto const ids = r.load<dt::tensor<std::int32_t, Batch>>("ids");
  CHECK(ids.extents()[0] == 3);
  CHECK(ids(Batch(0)) == 7);
  CHECK(ids(Batch(1)) == -1);
  CHECK(ids(Batch(2)) == std::numeric_limits<std::int32_t>::max());
  auto const mask = r.load<dt::tensor<bool, Batch, Queries>>("mask");
  CHECK(mask(Batch(0), Queries(0)));
  CHECK_FALSE(mask(Batch(0), Queries(1)));
  CHECK_FALSE(mask(Batch(1), Queries(0)));
  CHECK(mask(Batch(1), Queries(1)));
  CHECK(r.load<dt::tensor<float>>("scalar").data()[0] == 3.5f);
  CHECK(r.load<dt::tensor<float, Batch, Hidden>>("empty").extents() == std::array<dt::index_t, 2>{0, 3});
  auto const rank4 = r.load<dt::tensor<float, Batch, Queries, KVPairs, Hidden>>("rank4");
  REQUIRE(rank4.extents() == std::array<dt::index_t, 4>{1, 2, 1, 3});
  for (dt::index_t i = 0; i < 6; ++i) CHECK(rank4.data()[i] == static_cast<float>(i));

  // F16: 1, -2.5, 65504, 2^-24, inf, nan, -0, 1023 * 2^-24; into float and double alike.
  auto const half = r.load<dt::tensor<float, Batch>>("half");
  auto const half64 = r.load<dt::tensor<double, Batch>>("half");
  std::vector<float> const want_half{1.0f,     -2.5f, 65504.0f, std::ldexp(1.0f, -24),
                                     INFINITY, NAN,   -0.0f,    std::ldexp(1023.0f, -24)};
  for (dt::index_t i = 0; i < 8; ++i) {
    float const want = want_half[static_cast<std::size_t>(i)];
    if (std::isnan(want)) {
      CHECK(std::isnan(half.data()[i]));
      CHECK(std::isnan(half64.data()[i]));
    } else {
      CHECK(half.data()[i] == want);
      CHECK(half64.data()[i] == static_cast<double>(want));
      CHECK(std::signbit(half.data()[i]) == std::signbit(want));
    }
  }
  // BF16: 1, -2.5, the largest finite, the smallest subnormal 2^-133, -inf, nan.
  auto const bf = r.load<dt::tensor<double, Batch>>("bf16");
  CHECK(bf(Batch(0)) == 1.0);
  CHECK(bf(Batch(1)) == -2.5);
  CHECK(bf(Batch(2)) == 3.3895313892515355e38);
  CHECK(bf(Batch(3)) == std::ldexp(1.0, -133));
  CHECK(bf(Batch(4)) == -INFINITY);
  CHECK(std::isnan(bf(Batch(5))));

  // U8 is a dtype of the format, opened fine, refused at load.
  CHECK(r.entry("bytes").dtype == "U8");
  REQUIRE_THROWS_AS((r.load<dt::tensor<std::int32_t, Batch>>("bytes")), dt::io_error);
  REQUIRE_THROWS_WITH((r.load<dt::tensor<std::int32_t, Batch>>("bytes")),
                      Catch::Contains("golden.safetensors: bytes: dtype U8 is not supported by dimtensor") &&
                          Catch::Contains("the tensor holds std::int32_t"));
}

TEST_CASE("F16 and BF16 bit patterns convert exactly", "[io][safetensors]") {
  using dt::detail::bfloat16_to_float;
  using dt::detail::half_to_float;
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0xc100) == -2.5f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));     // smallest subnormal
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));     // smallest normal
  CHECK(half_to_float(0x3555) == 0.333251953125f);
  CHECK(half_to_float(0x7c00) == INFINITY);
  CHECK(half_to_float(0xfc00) == -INFINITY);
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(std::isnan(half_to_float(0xfd01)));
  CHECK(std::bit_cast<std::uint32_t>(half_to_float(0x7e01)) == 0x7fc02000u);  // the payload is kept
  CHECK(std::bit_cast<std::uint32_t>(half_to_float(0x8000)) == 0x80000000u);  // -0
  CHECK(half_to_float(0x8001) == -std::ldexp(1.0f, -24));
  // Every finite half converts to the float of the same value: check by the definition.
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    std::uint32_t const e = (h >> 10) & 0x1f;
    if (e == 0x1f) continue;
    double const m = static_cast<double>(h & 0x3ff);
    double const mag = e == 0 ? std::ldexp(m, -24) : std::ldexp(1.0 + m / 1024.0, static_cast<int>(e) - 15);
    double const want = (h & 0x8000) ? -mag : mag;
    if (static_cast<double>(half_to_float(static_cast<std::uint16_t>(h))) != want) {
      FAIL("half 0x" << std::hex << h);
    }
  }

  CHECK(bfloat16_to_float(0x3f80) == 1.0f);
  CHECK(bfloat16_to_float(0xc020) == -2.5f);
  CHECK(bfloat16_to_float(0x7f7f) == 3.3895313892515355e38f);
  CHECK(bfloat16_to_float(0x0001) == std::ldexp(1.0f, -133));  // smallest subnormal
  CHECK(bfloat16_to_float(0x7f80) == INFINITY);
  CHECK(bfloat16_to_float(0xff80) == -INFINITY);
  CHECK(std::isnan(bfloat16_to_float(0x7fc0)));

  // Through a file: F16 and BF16 into float and double.
  std::string const header = R"({"h": {"dtype": "F16", "shape": [3], "data_offsets": [0, 6]},)"
                             R"( "b": {"dtype": "BF16", "shape": [3], "data_offsets": [6, 12]}})";
  write_bytes(tmp() / "halves.safetensors",
              file_bytes(header, raw16({0x3c00, 0x0001, 0xfc00}) + raw16({0xc020, 0x0001, 0x7f7f})));
  dt::safetensors_reader const r(tmp() / "halves.safetensors");
  auto const h = r.load<dt::tensor<double, Batch>>("h");
  CHECK(h(Batch(0)) == 1.0);
  CHECK(h(Batch(1)) == std::ldexp(1.0, -24));
  CHECK(h(Batch(2)) == -INFINITY);
  auto const b = r.load<dt::tensor<float, Batch>>("b");
  CHECK(b(Batch(0)) == -2.5f);
  CHECK(b(Batch(1)) == std::ldexp(1.0f, -133));
  CHECK(b(Batch(2)) == 3.3895313892515355e38f);
  REQUIRE_THROWS_WITH((r.load<dt::tensor<std::int32_t, Batch>>("h")),
                      Catch::Contains("h: dtype F16 but the tensor holds std::int32_t") &&
                          Catch::Contains("load into a tensor of float or double"));
  // values<T>: the same conversions at a rank known only at run time.
  CHECK(r.values<double>("h") == std::vector<double>{1.0, std::ldexp(1.0, -24), -INFINITY});
  CHECK(r.values<float>("b") == std::vector<float>{-2.5f, std::ldexp(1.0f, -133), 3.3895313892515355e38f});
  REQUIRE_THROWS_WITH(r.values<std::int32_t>("b"),
                      Catch::Contains("safetensors_reader::values: ") &&
                          Catch::Contains("b: dtype BF16 but the tensor holds std::int32_t"));
  REQUIRE_THROWS_WITH(r.values<float>("c"), Catch::Contains("c"));
}

TEST_CASE("safetensors_reader: malformed files are io_errors naming the file and the problem", "[io][safetensors]") {
  auto const name = (tmp() / "open_error.safetensors").string();

  SECTION("missing file") {
    REQUIRE_THROWS_AS(dt::safetensors_reader(tmp() / "nope.safetensors"), dt::io_error);
    REQUIRE_THROWS_WITH(dt::safetensors_reader(tmp() / "nope.safetensors"),
                        Catch::Contains("safetensors_reader: cannot open") && Catch::Contains("nope.safetensors") &&
                            Catch::Contains("No such file"));
    REQUIRE_THROWS_WITH(dt::safetensors_reader(tmp().path()), Catch::Contains("cannot open"));
  }
  SECTION("shorter than 8 bytes") {
    CHECK_THAT(open_error("abcde"), Catch::Contains(name + ": the file has 5 bytes; a safetensors file starts with "
                                                           "an 8-byte header length"));
    CHECK_THAT(open_error(""), Catch::Contains("the file has 0 bytes"));
  }
  SECTION("header length") {
    CHECK_THAT(open_error(le64(100) + "{}"),
               Catch::Contains("the header length 100 is larger than the rest of the file (2 bytes"));
    CHECK_THAT(open_error(le64(~std::uint64_t{0}) + "{}"),
               Catch::Contains("the header length 18446744073709551615 exceeds the limit of 100000000 bytes"));
    CHECK_THAT(open_error(le64(100'000'001) + "{}"), Catch::Contains("exceeds the limit"));
  }
  SECTION("not JSON, or not an object") {
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32",, "shape": []}})", "")),
               Catch::Contains(name + ": the header is not valid JSON: unexpected ',': expected a string key at "
                                      "byte 22 of the header (line 1, column 23), near ") &&
                   Catch::Contains("near `{\"w\": {\"dtype\": \"F32\",, \"shape\": []}}`"));
    CHECK_THAT(open_error(file_bytes("{\"w\": \"\xff\"}", "")), Catch::Contains("invalid UTF-8 byte 0xff"));
    CHECK_THAT(open_error(file_bytes(std::string("{}\0\0", 4), "")),
               Catch::Contains("unexpected byte 0x00 after the JSON value"));
    CHECK_THAT(open_error(file_bytes("", "")), Catch::Contains("not valid JSON: empty text"));
    CHECK_THAT(open_error(file_bytes(std::string(100, '['), "")), Catch::Contains("nested deeper than 64 levels"));
    CHECK_THAT(open_error(file_bytes("[1, 2]", "")),
               Catch::Contains(name + ": the header is an array; it must be a JSON object"));
    CHECK_THAT(open_error(file_bytes(R"({"w": 1, "w": 2})", "")), Catch::Contains("duplicate key \"w\""));
  }
  SECTION("entries missing a field or with fields of the wrong kind") {
    CHECK_THAT(
        open_error(file_bytes(R"({"w": {"shape": [2], "data_offsets": [0, 8]}})", raw(std::vector<float>{1, 2}))),
        Catch::Contains(name + ": w: the entry has no \"dtype\""));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "data_offsets": [0, 8]}})", "")),
               Catch::Contains("w: the entry has no \"shape\""));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [2]}})", "")),
               Catch::Contains("w: the entry has no \"data_offsets\""));
    CHECK_THAT(open_error(file_bytes(R"({"w": [1]})", "")),
               Catch::Contains("w: the entry is an array; it must be an object with \"dtype\", \"shape\" and "
                               "\"data_offsets\""));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": 32, "shape": [], "data_offsets": [0, 4]}})", "")),
               Catch::Contains("w: \"dtype\" is an integer; it must be a string"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": "2", "data_offsets": [0, 4]}})", "")),
               Catch::Contains("w: \"shape\" is a string; it must be an array"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 4]}})", "")),
               Catch::Contains("w: \"shape\" holds the negative integer -2; expected non-negative integers"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}})", "")),
               Catch::Contains("w: \"shape\" holds a number; expected non-negative integers"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4, 8]}})", "")),
               Catch::Contains("w: \"data_offsets\" has 3 elements; it must be [begin, end]"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, null]}})", "")),
               Catch::Contains("w: \"data_offsets\" holds null"));
    CHECK_THAT(open_error(file_bytes(R"({"__metadata__": {"format": 1}})", "")),
               Catch::Contains("\"__metadata__\" maps \"format\" to an integer; its values must be strings"));
    CHECK_THAT(open_error(file_bytes(R"({"__metadata__": ["pt"]})", "")),
               Catch::Contains("\"__metadata__\" is an array; it must be an object of strings"));
    // null metadata and unknown members of an entry are accepted, as by the reference implementation.
    auto const header = R"({"__metadata__": null, "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24],)"
                        R"( "extra": [1]}})";
    CHECK(open_error(file_bytes(header, six_floats)) == "(no io_error)");
  }
  SECTION("unknown dtype") {
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}})", "xxxx")),
               Catch::Contains(name + ": w: unknown dtype \"F33\" (the format defines BOOL, F4,") &&
                   Catch::Contains("BF16, I32, U32, F32, C64, F64, I64, U64)"));
  }
  SECTION("offsets out of the data section, begin > end") {
    CHECK_THAT(
        open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [4, 28]}})", six_floats)),
        Catch::Contains(name + ": w: data_offsets [4, 28] lie outside the data section, which has 24 bytes"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})", "12345678")),
               Catch::Contains(name + ": w: data_offsets [8, 4]: begin > end"));
    CHECK_THAT(open_error(file_bytes(
                   R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 18446744073709551615]}})", "1234")),
               Catch::Contains("w: \"data_offsets\" holds a number; expected non-negative integers"));
  }
  SECTION("size is not the product of the shape times the dtype size") {
    CHECK_THAT(
        open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})",
                              six_floats.substr(0, 20))),
        Catch::Contains(name + ": w: dtype F32 and shape [2, 3] need 24 bytes but data_offsets [0, 20] hold 20"));
    CHECK_THAT(
        open_error(file_bytes(R"({"w": {"dtype": "F64", "shape": [2, 3], "data_offsets": [0, 24]}})", six_floats)),
        Catch::Contains("w: dtype F64 and shape [2, 3] need 48 bytes"));
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F4", "shape": [3], "data_offsets": [0, 1]}})", "x")),
               Catch::Contains("w: dtype F4 and shape [3] do not fill a whole number of bytes"));
    CHECK(open_error(file_bytes(R"({"w": {"dtype": "F4", "shape": [4], "data_offsets": [0, 2]}})", "xy")) ==
          "(no io_error)");
    CHECK_THAT(open_error(file_bytes(R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296, 0],)"
                                     R"( "data_offsets": [0, 0]}})",
                                     "")),
               Catch::Contains("w: dtype F32 and shape [4294967296, 4294967296, 0] hold more elements than memory "
                               "can address"));
  }
  SECTION("overlapping entries, holes, bytes after the last tensor") {
    CHECK_THAT(open_error(file_bytes(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                                     R"( "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}})",
                                     six_floats)),
               Catch::Contains(name + ": b: data_offsets [8, 24] overlap those of a [0, 16] (entries must not "
                                      "overlap)"));
    CHECK_THAT(open_error(file_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
                                     R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [16, 24]}})",
                                     six_floats)),
               Catch::Contains(name + ": bytes [8, 16) of the data section belong to no tensor (a hole before b;"));
    CHECK_THAT(open_error(file_bytes(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})",
                                     six_floats.substr(0, 16))),
               Catch::Contains("bytes [0, 8) of the data section belong to no tensor (a hole before a;"));
    CHECK_THAT(open_error(file_bytes("{" + ok_entry + "}", six_floats + "trailing")),
               Catch::Contains(name + ": bytes [24, 32) at the end of the data section belong to no tensor"));
    CHECK_THAT(open_error(file_bytes("{}", "x")), Catch::Contains("bytes [0, 1) at the end of the data section"));
    // Empty tensors may share an offset, and the order in the header does not matter.
    auto const header = R"({"b": {"dtype": "F32", "shape": [3], "data_offsets": [12, 24]},)"
                        R"( "e": {"dtype": "I64", "shape": [0, 5], "data_offsets": [12, 12]},)"
                        R"( "f": {"dtype": "BOOL", "shape": [0], "data_offsets": [12, 12]},)"
                        R"( "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})";
    auto const p = tmp() / "unordered.safetensors";
    write_bytes(p, file_bytes(header, six_floats));
    dt::safetensors_reader const r(p);
    CHECK(r.load<dt::tensor<float, Batch>>("b")(Batch(2)) == 6.0f);
    CHECK(r.load<dt::tensor<std::int64_t, Batch, Hidden::fixed<5>>>("e").size() == 0);
  }
}

TEST_CASE("safetensors_reader::load and entry: mismatches are io_errors naming the file and the key",
          "[io][safetensors]") {
  dt::safetensors_writer w;
  w.add("W_q.weight", dt::zeros<float>(Hidden(8), KVPairs(20)));
  w.add("W_k.weight", dt::zeros<float>(Hidden(8), KVPairs(2)));
  w.add("W_k.bias", dt::zeros<float>(Hidden(8)));
  w.add("W_v.weight", dt::zeros<double>(Hidden(1), KVPairs(8)));
  w.add("b_o", dt::zeros<float>(Hidden(3)));
  w.add("z", dt::zeros<float>(Hidden(3)));
  auto const p = tmp() / "model.safetensors";
  w.save(p);
  dt::safetensors_reader const r(p);
  std::string const file = p.string();

  REQUIRE_THROWS_AS(r.entry("W_o.weight"), dt::io_error);
  REQUIRE_THROWS_WITH(r.entry("W_o.weight"),
                      Catch::Contains("safetensors_reader::entry: " + file +
                                      ": no tensor named W_o.weight; the file "
                                      "holds 6 tensors, among them W_k.bias, W_k.weight, W_q.weight, W_v.weight, b_o"));
  REQUIRE_THROWS_WITH((r.load<f2>("W_o.weight")),
                      Catch::Contains("safetensors_reader::load: " + file + ": no tensor named W_o.weight"));
  REQUIRE_THROWS_WITH(r.entry(std::string("bad\nkey")), Catch::Contains("no tensor named \"bad\\x0akey\""));
  REQUIRE_THROWS_WITH(
      (r.load<f3>("W_q.weight")),
      Catch::Contains("safetensors_reader::load: " + file +
                      ": W_q.weight: shape [8, 20] but the tensor type has rank 3 (dims [Batch, Queries, KVPairs])"));
  // F32 widens into double exactly; nothing narrows
  auto const wide = r.load<dt::tensor<double, Hidden, KVPairs>>("W_q.weight");
  CHECK(dt::equal(wide, dt::cast<double>(r.load<dt::tensor<float, Hidden, KVPairs>>("W_q.weight"))));
  REQUIRE_THROWS_WITH((r.load<dt::tensor<std::int32_t, Hidden, KVPairs>>("W_q.weight")),
                      Catch::Contains(file + ": W_q.weight: dtype F32 but the tensor holds std::int32_t (dtype I32)") &&
                          Catch::Contains("load into a tensor of float and convert with dimtensor::cast"));
  REQUIRE_THROWS_WITH((r.load<dt::tensor<float, Hidden, KVPairs>>("W_v.weight")),
                      Catch::Contains("W_v.weight: dtype F64 but the tensor holds float (dtype F32)"));
  REQUIRE_THROWS_WITH((r.load<dt::tensor<std::int64_t, Hidden>>("b_o")),
                      Catch::Contains("b_o: dtype F32 but the tensor holds std::int64_t"));
  REQUIRE_THROWS_WITH((r.load<dt::tensor<float, Hidden, KVPairs::fixed<16>>>("W_q.weight")),
                      Catch::Contains("W_q.weight: shape [8, 20]: extent mismatch for dimension ") &&
                          Catch::Contains("KVPairs: 20 (file) vs 16 (static)"));
  CHECK(r.load<dt::tensor<float, Hidden::fixed<8>, KVPairs::fixed<20>>>("W_q.weight").size() == 160);

  // A dtype the format defines but dimtensor lacks opens fine and fails at load.
  std::string const header = R"({"q": {"dtype": "I8", "shape": [4], "data_offsets": [0, 4]},)"
                             R"( "m": {"dtype": "BOOL", "shape": [4], "data_offsets": [4, 8]}})";
  auto const q = tmp() / "int8.safetensors";
  write_bytes(q, file_bytes(header, std::string("\x01\xff\x02\x03", 4) + std::string("\x00\x01\x02\x01", 4)));
  dt::safetensors_reader const r8(q);
  CHECK(r8.keys() == std::vector<std::string>{"m", "q"});
  REQUIRE_THROWS_WITH((r8.load<dt::tensor<std::int32_t, Batch>>("q")),
                      Catch::Contains(q.string() + ": q: dtype I8 is not supported by dimtensor"));
  REQUIRE_THROWS_WITH((r8.load<dt::tensor<bool, Batch>>("m")),
                      Catch::Contains("m: malformed BOOL data: byte 2 at element 2 (BOOL elements must be 0 or 1)"));

  // The file changed between reading the header and loading.
  write_bytes(p, "shorter");
  REQUIRE_THROWS_WITH((r.load<dt::tensor<float, Hidden>>("b_o")),
                      Catch::Contains("b_o: the file changed since its header was read"));
  fs::remove(p);
  REQUIRE_THROWS_WITH((r.load<dt::tensor<float, Hidden>>("b_o")), Catch::Contains("cannot open"));
}

TEST_CASE("safetensors_writer: bad keys are value_errors, unwritable files io_errors", "[io][safetensors]") {
  dt::safetensors_writer w;
  dt::tensor<float, Batch> const x{1, 2};
  w.add("x", x);
  REQUIRE_THROWS_AS(w.add("x", x), dt::value_error);
  REQUIRE_THROWS_WITH(w.add("x", x), Catch::Contains("safetensors_writer::add: the key x was added before"));
  REQUIRE_THROWS_WITH(w.add("__metadata__", x), Catch::Contains("the key \"__metadata__\" is reserved"));
  REQUIRE_THROWS_WITH(w.add("", x), Catch::Contains("safetensors_writer::add: the key is empty"));
  REQUIRE_THROWS_WITH(w.add("bad\xff", x), Catch::Contains("is not valid UTF-8"));
  w.add_metadata("format", "pt");
  REQUIRE_THROWS_WITH(w.add_metadata("format", "np"),
                      Catch::Contains("safetensors_writer::add_metadata: the key format was added before"));
  REQUIRE_THROWS_WITH(w.add_metadata("", "v"), Catch::Contains("the key is empty"));
  REQUIRE_THROWS_WITH(w.add_metadata("k", "\xc0\xaf"), Catch::Contains("the value of k is not valid UTF-8"));
  w.add("\xe2\x98\x83", x);  // any UTF-8 key

  auto const nowhere = tmp() / "no_such_dir" / "out.safetensors";
  REQUIRE_THROWS_AS(w.save(nowhere), dt::io_error);
  REQUIRE_THROWS_WITH(w.save(nowhere), Catch::Contains("safetensors_writer::save: cannot create " + nowhere.string()));

  w.save(tmp() / "keys.safetensors");
  dt::safetensors_reader const r(tmp() / "keys.safetensors");
  CHECK(r.keys() == std::vector<std::string>{"x", "\xe2\x98\x83"});
  CHECK(r.metadata().at("format") == "pt");
}

TEST_CASE("safetensors_reader: random corruptions only ever throw io_error", "[io][safetensors]") {
  dt::safetensors_writer w;
  w.add("a", patterned<f2>({2, 3}));
  w.add("b", patterned<dt::tensor<double, Batch>>({3}));
  w.add("c", patterned<dt::tensor<std::int64_t, Batch, Queries>>({1, 2}));
  w.add("d", patterned<dt::tensor<bool, Batch>>({5}));
  w.add("e", patterned<dt::tensor<std::int32_t>>({}));
  w.add_metadata("format", "pt");
  w.save(tmp() / "fuzz_base.safetensors");
  std::vector<std::string> const bases{read_bytes(tmp() / "fuzz_base.safetensors"),
                                       read_bytes(data_dir / "golden.safetensors")};

  std::mt19937_64 rng(20240607);
  auto const p = tmp() / "fuzz.safetensors";
  int opened = 0;
  int loaded = 0;
  int refused_loads = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    std::string bytes = bases[static_cast<std::size_t>(iter) % bases.size()];
    std::size_t const header_end = std::min<std::size_t>(
        bytes.size(), 8 + dt::detail::read_le_u64(reinterpret_cast<unsigned char const*>(bytes.data())));
    auto const pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
    switch (pick(8)) {
      case 0:
        bytes.resize(pick(bytes.size()));
        break;  // truncate
      case 1:
        bytes[pick(8)] = static_cast<char>(rng());
        break;  // the header length
      case 2:
      case 3:
        bytes[header_end + pick(bytes.size() - header_end)] = static_cast<char>(rng());
        break;  // data
      default: {
        // The header, where a flip changes the meaning.
        std::size_t const flips = 1 + pick(3);
        for (std::size_t f = 0; f < flips; ++f) {
          std::size_t const at = 8 + pick(header_end - 8);
          bytes[at] = pick(2) == 0 ? static_cast<char>(rng()) : static_cast<char>(bytes[at] ^ (1 << pick(8)));
        }
      }
    }
    write_bytes(p, bytes);
    try {
      dt::safetensors_reader const r(p);
      ++opened;
      (void)r.metadata();
      for (auto const& key : r.keys()) {
        (void)r.entry(key);
        auto const attempt = [&](auto tag) {
          using Tensor = typename decltype(tag)::type;
          try {
            auto const t = r.load<Tensor>(key);
            ++loaded;
            (void)t;
          } catch (dt::io_error const&) {
            ++refused_loads;
          }
        };
        attempt(std::type_identity<dt::tensor<float>>{});
        attempt(std::type_identity<dt::tensor<float, Batch>>{});
        attempt(std::type_identity<f2>{});
        attempt(std::type_identity<dt::tensor<double, Batch>>{});
        attempt(std::type_identity<dt::tensor<double, Batch, Queries>>{});
        attempt(std::type_identity<dt::tensor<std::int64_t, Batch, Queries>>{});
        attempt(std::type_identity<dt::tensor<std::int32_t>>{});
        attempt(std::type_identity<dt::tensor<std::int32_t, Batch>>{});
        attempt(std::type_identity<dt::tensor<bool, Batch>>{});
        attempt(std::type_identity<dt::tensor<bool, Batch, Queries>>{});
      }
    } catch (dt::io_error const&) {
    }
  }
  // Both outcomes happened: the loop exercised the loaders, not only the header checks.
  CHECK(opened > 400);
  CHECK(loaded > 1000);
  CHECK(refused_loads > 1000);
}

}  // namespace safetensors_test
