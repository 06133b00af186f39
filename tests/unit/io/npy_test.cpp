#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/npy.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "unit/support/files.hpp"

#ifndef DIMTENSOR_PARITY_DATA_DIR
#define DIMTENSOR_PARITY_DATA_DIR "/work/main/tests/parity/data"
#endif

namespace npy_test {
namespace {

DIMTENSOR_DIM(Batch);
DIMTENSOR_DIM(Queries);
DIMTENSOR_DIM(KVPairs);
DIMTENSOR_DIM(Hidden);

namespace dt = dimtensor;
namespace fs = std::filesystem;

using namespace test_support;

// This file's directory, removed at exit.
temp_dir const& tmp() { return program_temp_dir("dimtensor_npy_test_"); }

// An .npy file by hand: preamble of the given version, the dict padded to 64
// bytes as NumPy does, then the raw data bytes.
std::string npy_bytes(std::string const& dict, std::string const& data, int major = 1) {
  std::size_t const pre = major == 1 ? 10 : 12;
  std::size_t len = dict.size() + 1;
  len += (64 - (pre + len) % 64) % 64;
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  for (std::size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) s += static_cast<char>((len >> (8 * i)) & 0xff);
  s += dict;
  s.append(len - dict.size() - 1, ' ');
  s += '\n';
  return s + data;
}

std::string dict(std::string const& descr, std::string const& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': " + shape +
         ", }";
}

template <class Tensor>
void check_round_trip(Tensor const& t, std::string const& file) {
  auto const p = tmp() / file;
  dt::save_npy(p, t);
  auto const bytes = read_bytes(p);
  REQUIRE(bytes.size() >= 10);
  std::size_t const header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  CHECK(bytes.size() == 10 + header_len + static_cast<std::size_t>(t.size()) * sizeof(typename Tensor::value_type));
  auto const u = dt::load_npy<Tensor>(p);
  REQUIRE(u.extents() == t.extents());
  for (dt::index_t i = 0; i < t.size(); ++i) CHECK(u.data()[i] == t.data()[i]);
}

template <class T>
void round_trip_all_ranks(std::string const& tag) {
  dt::tensor<T> r0(std::array<dt::index_t, 0>{});
  fill_pattern(r0);
  check_round_trip(r0, tag + "_r0.npy");
  dt::tensor<T, Batch> r1(Batch(5));
  fill_pattern(r1);
  check_round_trip(r1, tag + "_r1.npy");
  dt::tensor<T, Batch, Queries> r2(Batch(3), Queries(4));
  fill_pattern(r2);
  check_round_trip(r2, tag + "_r2.npy");
  dt::tensor<T, Batch, Queries, KVPairs> r3(Batch(2), Queries(3), KVPairs(5));
  fill_pattern(r3);
  check_round_trip(r3, tag + "_r3.npy");
  dt::tensor<T, Batch, Queries, KVPairs, Hidden::fixed<2>> r4(Batch(2), Queries(1), KVPairs(3), Hidden::fixed<2>{});
  fill_pattern(r4);
  check_round_trip(r4, tag + "_r4.npy");
  dt::tensor<T, Batch, Queries> empty(Batch(0), Queries(3));
  check_round_trip(empty, tag + "_empty.npy");
}

template <class Tensor>
std::string load_error(std::string const& file, std::string const& bytes) {
  auto const p = tmp() / file;
  write_bytes(p, bytes);
  try {
    (void)dt::load_npy<Tensor>(p);
  } catch (dt::io_error const& e) {
    return e.what();
  }
  return "(no io_error)";
}

// A stream that cannot seek or tell its size, as a pipe.
class pipe_buf : public std::streambuf {
 public:
  explicit pipe_buf(std::string data) : data_(std::move(data)) {}

 protected:
  int_type underflow() override {
    if (pos_ >= data_.size()) return traits_type::eof();
    // One byte at a time, like a slow pipe.
    ch_ = data_[pos_++];
    setg(&ch_, &ch_, &ch_ + 1);
    return traits_type::to_int_type(ch_);
  }

 private:
  std::string data_;
  std::size_t pos_ = 0;
  char ch_ = 0;
};

using f3 = dt::tensor<float, Batch, Queries, KVPairs>;
using f2 = dt::tensor<float, Batch, Queries>;
using f3_kv8 = dt::tensor<float, Batch, Queries, KVPairs::fixed<8>>;
using i4 = dt::tensor<std::int32_t, Batch>;
using b1 = dt::tensor<bool, Batch>;

}  // namespace

TEST_CASE("save_npy/load_npy round trip every dtype at ranks 0 to 4", "[io][npy]") {
  SECTION("float32") { round_trip_all_ranks<float>("f4"); }
  SECTION("float64") { round_trip_all_ranks<double>("f8"); }
  SECTION("int32") { round_trip_all_ranks<std::int32_t>("i4"); }
  SECTION("int64") { round_trip_all_ranks<std::int64_t>("i8"); }
  SECTION("bool") { round_trip_all_ranks<bool>("b1"); }
}

TEST_CASE("save_npy writes NumPy's header byte for byte", "[io][npy]") {
  auto const x = dt::tensor<float, Batch, Queries, KVPairs>(Batch(2), Queries(2), KVPairs(4));
  dt::save_npy(tmp() / "layout.npy", x);
  auto const bytes = read_bytes(tmp() / "layout.npy");
  // What numpy.save writes for np.zeros((2, 2, 4), np.float32) (compare the golden files).
  std::string const golden = read_bytes(fs::path(DIMTENSOR_PARITY_DATA_DIR) / "masked_softmax_d2l_1d_X.npy");
  REQUIRE(bytes.size() == golden.size());
  CHECK(bytes.substr(0, 128) == golden.substr(0, 128));
  CHECK(bytes.substr(128) == std::string(64, '\0'));

  dt::tensor<std::int64_t, Batch> v{2, 3};
  std::ostringstream out;
  dt::save_npy(out, v);
  CHECK(out.str() == read_bytes(fs::path(DIMTENSOR_PARITY_DATA_DIR) / "masked_softmax_d2l_1d_valid_lens.npy"));

  std::ostringstream scalar;
  dt::save_npy(scalar, dt::tensor<double>(std::array<dt::index_t, 0>{}));
  CHECK(scalar.str().substr(10, 56) == "{'descr': '<f8', 'fortran_order': False, 'shape': (), } ");
  CHECK(scalar.str().size() == 128 + sizeof(double));
}

TEST_CASE("save_npy evaluates expressions and writes views in C order", "[io][npy]") {
  dt::tensor<float, Batch, Queries> x{{1, 2, 3}, {4, 5, 6}};
  dt::save_npy(tmp() / "expr.npy", x * 2.0f + 1.0f);
  auto const y = dt::load_npy<dt::tensor<float, Batch, Queries>>(tmp() / "expr.npy");
  std::vector<float> const want{3, 5, 7, 9, 11, 13};
  REQUIRE(y.size() == 6);
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(y.data()[i] == want[i]);

  // A transposed view of x: [Queries=3, Batch=2] with strides (1, 3).
  dt::tensor<float, Queries, Batch> xt(x.storage(), x.data(), {3, 2}, {1, 3});
  REQUIRE_FALSE(xt.is_contiguous());
  dt::save_npy(tmp() / "view.npy", xt);
  auto const z = dt::load_npy<dt::tensor<float, Queries, Batch>>(tmp() / "view.npy");
  std::vector<float> const want_t{1, 4, 2, 5, 3, 6};
  for (std::size_t i = 0; i < want_t.size(); ++i) CHECK(z.data()[i] == want_t[i]);
}

TEST_CASE("load_npy reads the committed PyTorch goldens", "[io][npy]") {
  fs::path const dir = DIMTENSOR_PARITY_DATA_DIR;
  auto const x = dt::load_npy<f3>(dir / "masked_softmax_d2l_1d_X.npy");
  CHECK(x.extents() == std::array<dt::index_t, 3>{2, 2, 4});
  CHECK(x(Batch(0), Queries(0), KVPairs(0)) == 0.4962566f);

  // Static extents that match are accepted.
  auto const xs = dt::load_npy<dt::tensor<float, Batch::fixed<2>, Queries, KVPairs::fixed<4>>>(
      dir / "masked_softmax_d2l_1d_X.npy");
  CHECK(xs.data()[0] == 0.4962566f);

  auto const lens = dt::load_npy<dt::tensor<std::int64_t, Batch>>(dir / "masked_softmax_d2l_1d_valid_lens.npy");
  REQUIRE(lens.size() == 2);
  CHECK(lens(Batch(0)) == 2);
  CHECK(lens(Batch(1)) == 3);

  // A softmax output: every row over KVPairs sums to 1, masked entries are 0.
  auto const out = dt::load_npy<f3>(dir / "masked_softmax_d2l_1d_out.npy");
  for (dt::index_t b = 0; b < 2; ++b) {
    for (dt::index_t q = 0; q < 2; ++q) {
      double sum = 0;
      for (dt::index_t k = 0; k < 4; ++k) sum += out(Batch(b), Queries(q), KVPairs(k));
      CHECK(sum == Approx(1.0).epsilon(1e-6));
      for (dt::index_t k = lens(Batch(b)); k < 4; ++k) CHECK(out(Batch(b), Queries(q), KVPairs(k)) == 0.0f);
    }
  }

  auto const a64 = dt::load_npy<f3>(dir / "bmm_random_A.npy");
  auto const a = dt::load_npy<dt::tensor<double, Batch, Queries, KVPairs>>(dir / "bmm_random_A_f64.npy");
  REQUIRE(a.extents() == std::array<dt::index_t, 3>{3, 5, 7});
  for (dt::index_t i = 0; i < a.size(); ++i) CHECK(static_cast<float>(a.data()[i]) == Approx(a64.data()[i]));
}

TEST_CASE("load_npy from streams: arrays one after another, and streams that cannot seek", "[io][npy]") {
  dt::tensor<std::int32_t, Batch> a{1, 2, 3};
  dt::tensor<double, Batch, Queries> b{{0.5, 1.5}};
  std::stringstream ss;
  dt::save_npy(ss, a);
  dt::save_npy(ss, b);
  auto const a2 = dt::load_npy<dt::tensor<std::int32_t, Batch>>(ss, "two.npy");
  auto const b2 = dt::load_npy<dt::tensor<double, Batch, Queries>>(ss, "two.npy");
  CHECK(a2(Batch(2)) == 3);
  CHECK(b2(Batch(0), Queries(1)) == 1.5);

  pipe_buf pb(ss.str());
  std::istream pipe(&pb);
  auto const a3 = dt::load_npy<dt::tensor<std::int32_t, Batch>>(pipe, "pipe");
  auto const b3 = dt::load_npy<dt::tensor<double, Batch, Queries>>(pipe, "pipe");
  CHECK(a3(Batch(0)) == 1);
  CHECK(b3(Batch(0), Queries(0)) == 0.5);

  // A huge shape on a pipe: reported as truncated, without allocating for it.
  pipe_buf huge(npy_bytes(dict("<f8", "(1000000000, 1000000000)"), "12345678"));
  std::istream huge_pipe(&huge);
  REQUIRE_THROWS_WITH((dt::load_npy<dt::tensor<double, Batch, Queries>>(huge_pipe, "pipe")),
                      Catch::Contains("pipe: truncated data: the shape (1000000000, 1000000000) of <f8 needs "
                                      "8000000000000000000 bytes of data but the file has 8"));
  pipe_buf bools(npy_bytes(dict("|b1", "(3,)"), std::string("\1\0\1", 3)));
  std::istream bool_pipe(&bools);
  auto const c = dt::load_npy<dt::tensor<bool, Batch>>(bool_pipe, "pipe");
  CHECK(c(Batch(0)));
  CHECK_FALSE(c(Batch(1)));
  CHECK(c(Batch(2)));
}

TEST_CASE("load_npy survives random corruption of a valid file", "[io][npy]") {
  dt::tensor<float, Batch, Queries> x{{1, 2, 3}, {4, 5, 6}};
  std::ostringstream out;
  dt::save_npy(out, x);
  std::string const good = out.str();
  std::mt19937 rng(12345);  // fixed: the same corruptions on every run
  int loaded = 0;
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = good;
    int const edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      std::size_t const pos = rng() % bytes.size();
      switch (rng() % 3) {
        case 0: bytes[pos] = static_cast<char>(rng() & 0xff); break;
        case 1: bytes.resize(pos); break;
        default: bytes.insert(pos, 1, "0123456789(), '"[rng() % 15]); break;
      }
      if (bytes.empty()) break;
    }
    std::istringstream in(bytes);
    try {
      auto const y = dt::load_npy<dt::tensor<float, Batch, Queries>>(in, "fuzz.npy");
      CHECK(y.size() == y.extents()[0] * y.extents()[1]);
      ++loaded;
    } catch (dt::io_error const& e) {
      CHECK_THAT(e.what(), Catch::StartsWith("load_npy: fuzz.npy: "));
      ++rejected;
    }
  }
  CHECK(loaded + rejected == 3000);
  CHECK(rejected > 1000);
}

TEST_CASE("read_npy_header parses the header and leaves the stream at the data", "[io][npy]") {
  std::istringstream in(npy_bytes(dict("<i4", "(3, 0, 2)"), ""));
  auto const h = dt::read_npy_header(in, "mem.npy");
  CHECK(h.major_version == 1);
  CHECK(h.minor_version == 0);
  CHECK(h.descr == "<i4");
  CHECK_FALSE(h.fortran_order);
  CHECK(h.shape == std::vector<dt::index_t>{3, 0, 2});
  CHECK(h.element_count() == 0);
  CHECK(h.data_offset == 128);  // 10 + 70 bytes, padded to 64
  CHECK(static_cast<std::size_t>(in.tellg()) == h.data_offset);

  SECTION("keys in any order, double quotes, no trailing comma, Python 2 longs") {
    std::istringstream in2(npy_bytes("{\"shape\": (4L,), \"fortran_order\": True, \"descr\": \"<f8\"}", ""));
    auto const h2 = dt::read_npy_header(in2, "mem.npy");
    CHECK(h2.shape == std::vector<dt::index_t>{4});
    CHECK(h2.fortran_order);
    CHECK(h2.descr == "<f8");
  }
  SECTION("errors are prefixed with the call and the name") {
    std::istringstream bad("garbage!");
    REQUIRE_THROWS_WITH(dt::read_npy_header(bad, "mem.npy"),
                        Catch::Contains("read_npy_header: mem.npy: not an .npy file: bad magic"));
  }
}

TEST_CASE("load_npy reads format versions 2.0 and 3.0", "[io][npy]") {
  std::vector<float> const data{1.5f, -2.0f, 0.25f};
  for (int major : {2, 3}) {
    auto const p = tmp() / ("v" + std::to_string(major) + ".npy");
    write_bytes(p, npy_bytes(dict("<f4", "(3,)"), raw(data), major));
    auto const t = dt::load_npy<dt::tensor<float, Hidden>>(p);
    REQUIRE(t.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) CHECK(t.data()[i] == data[i]);
  }
}

TEST_CASE("write_npy_header switches to version 2.0 for long headers", "[io][npy]") {
  std::vector<dt::index_t> const shape(8000, 1000000);  // "1000000, " x 8000 > 65535 bytes
  std::ostringstream out;
  dt::write_npy_header(out, "<f4", shape);
  auto const s = out.str();
  REQUIRE(s.size() > 12);
  CHECK(s[6] == 2);
  CHECK(s[7] == 0);
  CHECK(s.size() % 64 == 0);
  std::size_t len = 0;
  for (int i = 3; i >= 0; --i) len = (len << 8) | static_cast<unsigned char>(s[8 + static_cast<std::size_t>(i)]);
  CHECK(len + 12 == s.size());
  CHECK(s.back() == '\n');
  // ... which the readers refuse: the header is over npy_max_header_bytes.
  std::istringstream in(s);
  REQUIRE_THROWS_WITH(dt::read_npy_header(in, "long.npy"), Catch::Contains("long.npy: header length") &&
                                                               Catch::Contains("exceeds the limit of 65536 bytes"));
}

TEST_CASE("load_npy rejects malformed files with io_error naming the file and the problem", "[io][npy]") {
  std::vector<float> const f16(16, 1.0f);
  std::string const good = npy_bytes(dict("<f4", "(2, 2, 4)"), raw(f16));

  SECTION("missing file") {
    auto const p = tmp() / "does_not_exist.npy";
    REQUIRE_THROWS_AS(dt::load_npy<f3>(p), dt::io_error);
    REQUIRE_THROWS_WITH(dt::load_npy<f3>(p), Catch::Contains("load_npy: cannot open") &&
                                                 Catch::Contains("does_not_exist.npy: No such file or directory"));
  }
  SECTION("a directory") {
    REQUIRE_THROWS_WITH(dt::load_npy<f3>(tmp().path()), Catch::Contains("load_npy: cannot open") &&
                                                           Catch::Contains("Is a directory"));
  }
  SECTION("empty file") {
    CHECK_THAT(load_error<f3>("empty.npy", ""), Catch::Contains("empty.npy: not an .npy file: bad magic"));
  }
  SECTION("bad magic") {
    std::string bytes = good;
    bytes[1] = 'X';
    CHECK_THAT(load_error<f3>("magic.npy", bytes), Catch::Contains("load_npy: ") &&
                                                        Catch::Contains("magic.npy: not an .npy file: bad magic"));
    CHECK_THAT(load_error<f3>("text.npy", "hello, world\n"), Catch::Contains("text.npy: not an .npy file"));
  }
  SECTION("unsupported version") {
    std::string bytes = good;
    bytes[6] = 4;
    CHECK_THAT(load_error<f3>("v4.npy", bytes), Catch::Contains("v4.npy: unsupported .npy format version 4.0"));
    CHECK_THAT(load_error<f3>("v_short.npy", good.substr(0, 7)),
               Catch::Contains("v_short.npy: truncated header: the file ends inside the format version"));
  }
  SECTION("truncated header length") {
    CHECK_THAT(load_error<f3>("len.npy", good.substr(0, 9)),
               Catch::Contains("len.npy: truncated header: the file ends inside the header length"));
  }
  SECTION("truncated header") {
    CHECK_THAT(load_error<f3>("trunc_header.npy", good.substr(0, 50)),
               Catch::Contains("trunc_header.npy: truncated header: the header length says 118 bytes but the file has 40"));
  }
  SECTION("header length over the cap") {
    std::string bytes = npy_bytes(dict("<f4", "(2, 2, 4)"), raw(f16), 2);
    bytes[8] = 0;
    bytes[9] = 0;
    bytes[10] = 0;
    bytes[11] = 0x40;  // 1 GiB
    CHECK_THAT(load_error<f3>("cap.npy", bytes),
               Catch::Contains("cap.npy: header length 1073741824 exceeds the limit of 65536 bytes"));
  }
  SECTION("truncated data") {
    CHECK_THAT(load_error<f3>("trunc_data.npy", good.substr(0, good.size() - 4)),
               Catch::Contains("trunc_data.npy: truncated data: the shape (2, 2, 4) of <f4 needs 64 bytes of data "
                               "but the file has 60 after the 128-byte header"));
  }
  SECTION("trailing bytes") {
    CHECK_THAT(load_error<f3>("trailing.npy", good + "xyz"),
               Catch::Contains("trailing.npy: trailing bytes after the data: the shape (2, 2, 4) of <f4 needs 64 "
                               "bytes of data but the file has 67"));
  }
  SECTION("a header claiming a huge shape") {
    CHECK_THAT(load_error<f3>("huge.npy", npy_bytes(dict("<f4", "(1000000000, 1000000000, 4)"), raw(f16))),
               Catch::Contains("huge.npy: truncated data: the shape (1000000000, 1000000000, 4) of <f4 needs "
                               "16000000000000000000") ||
                   Catch::Contains("huge.npy: the shape (1000000000, 1000000000, 4) holds too many elements"));
    CHECK_THAT(load_error<f3>("huge2.npy", npy_bytes(dict("<f4", "(10000000, 10000000, 10000000)"), raw(f16))),
               Catch::Contains("huge2.npy: the shape (10000000, 10000000, 10000000) holds too many elements to address"));
    CHECK_THAT(load_error<f3>("huge3.npy", npy_bytes(dict("<f4", "(1000, 1000, 1000)"), raw(f16))),
               Catch::Contains("huge3.npy: truncated data: the shape (1000, 1000, 1000) of <f4 needs 4000000000 "
                               "bytes of data but the file has 64"));
    CHECK_THAT(load_error<f3>("huge4.npy", npy_bytes(dict("<f4", "(99999999999999999999, 1, 1)"), raw(f16))),
               Catch::Contains("huge4.npy: malformed .npy header: an extent in 'shape' is too large"));
  }
  SECTION("wrong dtype") {
    std::vector<double> const d16(16, 1.0);
    CHECK_THAT(load_error<f3>("x.npy", npy_bytes(dict("<f8", "(2, 2, 4)"), raw(d16))),
               Catch::Contains("load_npy: ") &&
                   Catch::Contains("x.npy: dtype <f8 (float64) but the tensor holds float32 (<f4); load_npy does "
                                   "not convert"));
    CHECK_THAT(load_error<i4>("i8.npy", npy_bytes(dict("<i8", "(2,)"), raw(d16))),
               Catch::Contains("i8.npy: dtype <i8 (int64) but the tensor holds int32 (<i4)"));
    CHECK_THAT(load_error<f3>("f2.npy", npy_bytes(dict("<f2", "(2, 2, 4)"), std::string(32, '\0'))),
               Catch::Contains("f2.npy: dtype <f2 is not supported") && Catch::Contains("tensor holds float32"));
    CHECK_THAT(load_error<f3>("be.npy", npy_bytes(dict(">f4", "(2, 2, 4)"), raw(f16))),
               Catch::Contains("be.npy: dtype >f4 is big-endian; only little-endian files are supported"));
  }
  SECTION("wrong rank") {
    CHECK_THAT(load_error<f2>("rank.npy", good),
               Catch::Contains("rank.npy: the file holds shape (2, 2, 4) (rank 3) but the tensor has dims "
                               "[Batch, Queries] (rank 2)"));
    CHECK_THAT(load_error<dt::tensor<float>>("rank0.npy", good),
               Catch::Contains("the file holds shape (2, 2, 4) (rank 3) but the tensor has dims [] (rank 0)"));
  }
  SECTION("wrong static extent") {
    CHECK_THAT(load_error<f3_kv8>("static.npy", good),
               Catch::Contains("static.npy: extent mismatch for dimension KVPairs: 4 (file, shape (2, 2, 4)) vs 8 "
                               "(static)"));
  }
  SECTION("fortran order") {
    CHECK_THAT(load_error<f3>("fortran.npy", npy_bytes(dict("<f4", "(2, 2, 4)", true), raw(f16))),
               Catch::Contains("fortran.npy: fortran_order is True (column-major data); only C order is supported"));
  }
  SECTION("malformed header dicts") {
    auto const check = [&](std::string const& d, std::string const& what) {
      CHECK_THAT(load_error<f3>("dict.npy", npy_bytes(d, raw(f16))),
                 Catch::Contains("dict.npy: malformed .npy header: " + what));
    };
    check("", "the header must be a dict");
    check("[1, 2]", "the header must be a dict");
    check("{'descr': '<f4', 'fortran_order': False}", "the key 'shape' is missing");
    check("{'fortran_order': False, 'shape': (2, 2, 4)}", "the key 'descr' is missing");
    check("{'descr': '<f4', 'shape': (2, 2, 4)}", "the key 'fortran_order' is missing");
    check("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4)}",
          "the key 'descr' appears twice");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4), 'extra': 1}", "unexpected key 'extra'");
    check("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 2, 4)}", "True or False expected");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 2, 4]}", "a tuple expected");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -2, 4)}", "negative extent");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x, 4)}", "an integer expected");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (2 2 4)}", "',' or ')' expected");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (16)}", "'shape' must be a tuple");
    check("{'descr': '<f4' 'fortran_order': False}", "',' or '}' expected after the value of 'descr'");
    check("{'descr' '<f4', 'fortran_order': False, 'shape': (2,)}", "':' after the key 'descr'");
    check("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", "structured dtypes");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4)} trailing", "unexpected text after the dict");
    check("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4)", "',' or '}' expected");
    CHECK_THAT(load_error<f3>("ctl.npy", npy_bytes("{\x01\xff", raw(f16))),
               Catch::Contains("of \"{\\x01\\xff"));
  }
  SECTION("bool bytes other than 0 and 1") {
    CHECK_THAT(load_error<b1>("bool.npy", npy_bytes(dict("|b1", "(3,)"), std::string("\1\0\2", 3))),
               Catch::Contains("bool.npy: malformed bool data: byte 2 at element 2"));
  }
  SECTION("save_npy into a missing directory") {
    auto const p = tmp() / "no_such_dir" / "out.npy";
    REQUIRE_THROWS_AS(dt::save_npy(p, dt::zeros<float>(Batch(2))), dt::io_error);
    REQUIRE_THROWS_WITH(dt::save_npy(p, dt::zeros<float>(Batch(2))),
                        Catch::Contains("save_npy: cannot create") && Catch::Contains("out.npy"));
  }
}

TEST_CASE("load_npy: a shape with an extent of 0 is checked like any other", "[io][npy]") {
  // The product of the other extents used to go unchecked when one was 0:
  // (9166104370767928434, 3, 0) overflowed in npy_header::element_count()
  // (UBSan), and (0, 2^62) reached the tensor, whose value_error escaped
  // instead of an io_error naming the file.
  CHECK_THAT(load_error<f3>("zero_huge.npy", npy_bytes(dict("<f4", "(9166104370767928434, 3, 0)"), "")),
             Catch::Contains("zero_huge.npy: the shape (9166104370767928434, 3, 0) holds too many elements to "
                             "address"));
  CHECK_THAT(load_error<f2>("zero_wide.npy", npy_bytes(dict("<f4", "(0, 4611686018427387904)"), "")),
             Catch::Contains("zero_wide.npy: the shape (0, 4611686018427387904) holds too many elements to "
                             "address"));
  std::istringstream in(npy_bytes(dict("<f4", "(0, 4611686018427387904)"), ""));
  REQUIRE_THROWS_AS(dt::read_npy_header(in, "stream"), dt::io_error);

  // Empty arrays whose other extents fit still load, with the extents they say.
  auto const p = tmp() / "zero_ok.npy";
  write_bytes(p, npy_bytes(dict("<f4", "(0, 1000000, 1000)"), ""));
  auto const t = dt::load_npy<f3>(p);
  CHECK(t.extents() == std::array<dt::index_t, 3>{0, 1000000, 1000});
  std::istringstream ok(npy_bytes(dict("<i4", "(3, 0, 2)"), ""));
  CHECK(dt::read_npy_header(ok, "stream").element_count() == 0);
}

}  // namespace npy_test
