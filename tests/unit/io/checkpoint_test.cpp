// nn::load_checkpoint: a checkpoint written under another library's keys
// (GPT-2's layout: a prefix, Conv1D weights stored [in, out], the query, key
// and value projections in one tensor, a buffer that is no parameter, tied
// embeddings), loaded by a checkpoint_schema, from one file and from shards;
// every key accounted for in one error.

#include <catch2/catch.hpp>

#include <dimtensor/dimtensor.hpp>
#include <dimtensor/io/checkpoint.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "unit/support/files.hpp"

namespace checkpoint_test {
namespace {

DIMTENSOR_DIM(Vocab);
DIMTENSOR_DIM(Hidden);
DIMTENSOR_DIM(Inner);
DIMTENSOR_DIM(Rows);
DIMTENSOR_DIM(Cols);

namespace dt = dimtensor;
namespace nn = dimtensor::nn;
namespace fs = std::filesystem;
using namespace test_support;

temp_dir const& tmp() { return program_temp_dir("dimtensor_checkpoint_test_"); }

// The query, key and value projections of one block.
struct attention : nn::module<attention> {
  BOOST_HANA_DEFINE_STRUCT(attention, (nn::linear<Hidden, Inner>, W_q), (nn::linear<Hidden, Inner>, W_k),
                           (nn::linear<Hidden, Inner>, W_v));
  explicit attention(dt::generator& gen)
      : W_q(Hidden(4), Inner(3), true, gen), W_k(Hidden(4), Inner(3), true, gen), W_v(Hidden(4), Inner(3), true, gen) {}
};

// Keys: wte, h.0.W_q.weight, h.0.W_q.bias, …, ln_f.weight, ln_f.bias, lm_head.
struct tiny : nn::module<tiny> {
  BOOST_HANA_DEFINE_STRUCT(tiny, (dt::tensor<float, Vocab, Hidden>, wte), (std::vector<attention>, h),
                           (nn::layer_norm<Hidden>, ln_f), (dt::tensor<float, Vocab, Hidden>, lm_head));
  explicit tiny(dt::generator& gen)
      : wte(dt::zeros<float>(Vocab(5), Hidden(4))), ln_f(Hidden(4)), lm_head(dt::zeros<float>(Vocab(5), Hidden(4))) {
    h.emplace_back(gen);
    wte.requires_grad_();
    lm_head.requires_grad_();
  }
};

// A stored tensor of the given extents whose element n is base + n / 8.
template <class... D>
dt::tensor<float, D...> stored(float base, D... extents) {
  dt::tensor<float, D...> t = dt::empty<float>(extents...);
  for (dt::index_t n = 0; n < t.size(); ++n) t.data()[n] = base + static_cast<float>(n) / 8;
  return t;
}

// What GPT-2's save_pretrained writes for the tiny model, by its keys.
void add_gpt2_tensors(dt::safetensors_writer& w, bool with_buffer = true) {
  w.add("transformer.wte.weight", stored(1, Rows(5), Cols(4)));
  w.add("transformer.h.0.attn.c_attn.weight", stored(100, Rows(4), Cols(9)));  // [in, 3 × out]
  w.add("transformer.h.0.attn.c_attn.bias", stored(200, Rows(9)));
  if (with_buffer) w.add("transformer.h.0.attn.bias", stored(0, Rows(4), Cols(4)));  // the causal mask's buffer
  w.add("transformer.ln_f.weight", stored(300, Rows(4)));
  w.add("transformer.ln_f.bias", stored(400, Rows(4)));
}

nn::checkpoint_schema gpt2_schema() {
  return {.prefixes = {"transformer."},
          .renames = {{".attn.", "."}, {"wte.weight", "wte"}},
          .ignore = {"*.attn.bias"},
          .transposed = {"h.*.W_*.weight"},
          .splits = {{.from = "h.*.c_attn.weight",
                      .to = {"h.*.W_q.weight", "h.*.W_k.weight", "h.*.W_v.weight"},
                      .dim = "Inner"},
                     {.from = "h.*.c_attn.bias", .to = {"h.*.W_q.bias", "h.*.W_k.bias", "h.*.W_v.bias"}, .dim = "Inner"}},
          .tied = {{.to = "lm_head", .from = "wte"}}};
}

// The loaded model holds the stored values where the schema puts them.
void check_gpt2_values(tiny const& m) {
  for (dt::index_t n = 0; n < 20; ++n) {
    CHECK(m.wte.data()[n] == 1 + static_cast<float>(n) / 8);
    CHECK(m.lm_head.data()[n] == m.wte.data()[n]);
  }
  // W_x.weight(i, j), [Inner, Hidden], is c_attn.weight[j][part · 3 + i].
  nn::linear<Hidden, Inner> const* parts[] = {&m.h[0].W_q, &m.h[0].W_k, &m.h[0].W_v};
  for (int part = 0; part < 3; ++part) {
    for (int i = 0; i < 3; ++i) {
      CHECK(parts[part]->bias.data()[i] == 200 + static_cast<float>(part * 3 + i) / 8);
      for (int j = 0; j < 4; ++j) {
        CHECK(parts[part]->weight.data()[i * 4 + j] == 100 + static_cast<float>(j * 9 + part * 3 + i) / 8);
      }
    }
  }
  for (dt::index_t n = 0; n < 4; ++n) {
    CHECK(m.ln_f.weight.data()[n] == 300 + static_cast<float>(n) / 8);
    CHECK(m.ln_f.bias.data()[n] == 400 + static_cast<float>(n) / 8);
  }
}

}  // namespace

TEST_CASE("load_checkpoint: GPT-2's keys and layout through a schema", "[io][checkpoint]") {
  dt::safetensors_writer w;
  add_gpt2_tensors(w);
  auto const file = tmp() / "gpt2.safetensors";
  w.save(file);
  dt::generator gen(3);
  tiny m(gen);
  nn::load_checkpoint(m, file, gpt2_schema());
  check_gpt2_values(m);
  CHECK(m.wte.requires_grad());

  SECTION("from a folder holding model.safetensors") {
    fs::create_directories(tmp() / "folder");
    fs::copy_file(file, tmp() / "folder" / "model.safetensors", fs::copy_options::overwrite_existing);
    tiny again(gen);
    nn::load_checkpoint(again, tmp() / "folder", gpt2_schema());
    check_gpt2_values(again);
  }
  SECTION("a tied parameter the file does store loads its own tensor") {
    dt::safetensors_writer with_head;
    add_gpt2_tensors(with_head);
    with_head.add("lm_head", stored(-7, Rows(5), Cols(4)));
    with_head.save(tmp() / "gpt2_head.safetensors");
    tiny again(gen);
    nn::load_checkpoint(again, tmp() / "gpt2_head.safetensors", gpt2_schema());
    CHECK(again.lm_head.data()[0] == -7);
    CHECK(again.wte.data()[0] == 1);
  }
}

TEST_CASE("load_checkpoint: shards listed by model.safetensors.index.json", "[io][checkpoint]") {
  auto const dir = tmp() / "sharded";
  fs::create_directories(dir);
  dt::safetensors_writer first;
  first.add("transformer.wte.weight", stored(1, Rows(5), Cols(4)));
  first.add("transformer.ln_f.weight", stored(300, Rows(4)));
  first.add("transformer.ln_f.bias", stored(400, Rows(4)));
  first.save(dir / "model-00001-of-00002.safetensors");
  dt::safetensors_writer second;
  second.add("transformer.h.0.attn.c_attn.weight", stored(100, Rows(4), Cols(9)));
  second.add("transformer.h.0.attn.c_attn.bias", stored(200, Rows(9)));
  second.save(dir / "model-00002-of-00002.safetensors");
  std::string const map = R"("transformer.wte.weight": "model-00001-of-00002.safetensors",)"
                          R"( "transformer.ln_f.weight": "model-00001-of-00002.safetensors",)"
                          R"( "transformer.ln_f.bias": "model-00001-of-00002.safetensors",)"
                          R"( "transformer.h.0.attn.c_attn.weight": "model-00002-of-00002.safetensors",)"
                          R"( "transformer.h.0.attn.c_attn.bias": "model-00002-of-00002.safetensors")";
  write_bytes(dir / "model.safetensors.index.json", R"({"metadata": {"total_size": 400}, "weight_map": {)" + map + "}}");

  dt::generator gen(5);
  tiny m(gen);
  nn::load_checkpoint(m, dir, gpt2_schema());
  check_gpt2_values(m);

  nn::checkpoint const c(dir / "model.safetensors.index.json");
  CHECK(c.keys().size() == 5);
  CHECK(c.entry("transformer.h.0.attn.c_attn.weight").shape == std::vector<dt::index_t>{4, 9});
  CHECK(c.values<float>("transformer.ln_f.bias")[3] == 400 + 3.0f / 8);
  CHECK(c.values<double>("transformer.ln_f.bias")[3] == 400 + 3.0 / 8);   // F32 widens exactly
  REQUIRE_THROWS_WITH(c.values<std::int64_t>("transformer.ln_f.bias"),
                      Catch::Contains("transformer.ln_f.bias: dtype F32 but the tensor holds std::int64_t"));
  REQUIRE_THROWS_WITH(c.entry("lm_head"), Catch::Contains("has no tensor lm_head"));

  SECTION("an index that lists a key its shard does not hold") {
    write_bytes(dir / "model.safetensors.index.json",
                R"({"weight_map": {)" + map + R"(, "lm_head": "model-00002-of-00002.safetensors"}})");
    REQUIRE_THROWS_WITH(nn::checkpoint(dir),
                        Catch::Contains("lists lm_head in model-00002-of-00002.safetensors, which has no such tensor"));
  }
  SECTION("a shard that holds a key the index does not give it") {
    write_bytes(dir / "model.safetensors.index.json",
                R"({"weight_map": {"transformer.wte.weight": "model-00001-of-00002.safetensors"}})");
    REQUIRE_THROWS_WITH(nn::checkpoint(dir), Catch::Contains("model-00001-of-00002.safetensors holds transformer.ln_f") &&
                                                 Catch::Contains("which the index does not give to it"));
  }
  SECTION("an index without a weight map, and a shard outside the folder") {
    write_bytes(dir / "model.safetensors.index.json", R"({"metadata": {}})");
    REQUIRE_THROWS_WITH(nn::checkpoint(dir), Catch::Contains("has no \"weight_map\" object"));
    write_bytes(dir / "model.safetensors.index.json", R"({"weight_map": {"a": "../x.safetensors"}})");
    REQUIRE_THROWS_WITH(nn::checkpoint(dir), Catch::Contains("a shard must be a file name beside the index"));
  }
}

TEST_CASE("load_checkpoint: every key accounted for, in one error, and nothing loaded", "[io][checkpoint]") {
  dt::safetensors_writer w;
  add_gpt2_tensors(w);
  auto const file = tmp() / "accounting.safetensors";
  w.save(file);
  dt::generator gen(7);
  tiny m(gen);
  float const before = m.h[0].W_q.weight.data()[0];

  // No tie and no ignore list: lm_head has no tensor, the mask buffer no parameter.
  auto schema = gpt2_schema();
  schema.tied.clear();
  schema.ignore.clear();
  REQUIRE_THROWS_AS(nn::load_checkpoint(m, file, schema), dt::io_error);
  REQUIRE_THROWS_WITH(nn::load_checkpoint(m, file, schema),
                      Catch::Contains("the schema does not account for every key") &&
                          Catch::Contains("1 parameter of the module with no tensor in the file: lm_head;") &&
                          Catch::Contains("1 tensor of the file that no parameter takes: "
                                          "transformer.h.0.attn.bias (as h.0.bias);"));
  // Every missing parameter is listed, not only the first.
  REQUIRE_THROWS_WITH(nn::load_checkpoint(m, file, nn::checkpoint_schema{}),
                      Catch::Contains("10 parameters of the module with no tensor in the file: wte, h.0.W_q.weight, "
                                      "h.0.W_q.bias, h.0.W_k.weight, h.0.W_k.bias, h.0.W_v.weight, h.0.W_v.bias, "
                                      "ln_f.weight, ln_f.bias, lm_head;") &&
                          Catch::Contains("6 tensors of the file that no parameter takes"));
  CHECK(m.h[0].W_q.weight.data()[0] == before);
  CHECK(m.wte.data()[0] == 0);
}

TEST_CASE("load_checkpoint: layouts that do not fit name the key, the source and the dims", "[io][checkpoint]") {
  dt::safetensors_writer w;
  add_gpt2_tensors(w);
  auto const file = tmp() / "layouts.safetensors";
  w.save(file);
  dt::generator gen(9);
  tiny m(gen);

  SECTION("a Conv1D weight not declared transposed") {
    auto schema = gpt2_schema();
    schema.transposed.clear();
    REQUIRE_THROWS_WITH(nn::load_checkpoint(m, file, schema),
                        Catch::Contains("h.0.W_q.weight (from transformer.h.0.attn.c_attn.weight, part 1 of 3 along "
                                        "Inner): stored shape [4, 9] but the parameter's is [Inner 3, Hidden 4]"));
  }
  SECTION("a split along a dim the parameter does not have") {
    auto schema = gpt2_schema();
    schema.splits[0].dim = "Hiden";
    REQUIRE_THROWS_WITH(nn::load_checkpoint(m, file, schema),
                        Catch::Contains("the split of h.0.c_attn.weight along Hiden: the parameter h.0.W_q.weight has "
                                        "no dim Hiden (its dims: [Inner 3, Hidden 4])"));
  }
  SECTION("two tensors that become one key") {
    dt::safetensors_writer twice;
    add_gpt2_tensors(twice);
    twice.add("wte.weight", stored(0, Rows(5), Cols(4)));
    twice.save(tmp() / "twice.safetensors");
    REQUIRE_THROWS_WITH(nn::load_checkpoint(m, tmp() / "twice.safetensors", gpt2_schema()),
                        Catch::Contains("tensors that become the same key under the schema: transformer.wte.weight "
                                        "and wte.weight (both wte)"));
  }
  SECTION("a split's or tie's pattern with two `*`; ignore patterns may have several") {
    auto schema = gpt2_schema();
    schema.tied = {{.to = "*.*", .from = "wte"}};
    REQUIRE_THROWS_AS(nn::load_checkpoint(m, file, schema), dt::value_error);
    REQUIRE_THROWS_WITH(nn::load_checkpoint(m, file, schema),
                        Catch::Contains("the tie pattern *.* has more than one `*`"));
    schema = gpt2_schema();
    schema.ignore = {"transformer.*.attn.*s"};  // the buffer (…attn.bias) and c_attn.bias
    schema.splits.pop_back();
    REQUIRE_THROWS_WITH(nn::load_checkpoint(m, file, schema),
                        Catch::Contains("3 parameters of the module with no tensor in the file: h.0.W_q.bias, "
                                        "h.0.W_k.bias, h.0.W_v.bias;") &&
                            !Catch::Contains("tensors of the file that no parameter takes"));
  }
  SECTION("a folder without a checkpoint") {
    fs::create_directories(tmp() / "empty");
    REQUIRE_THROWS_WITH(nn::load_checkpoint(m, tmp() / "empty", gpt2_schema()),
                        Catch::Contains("holds neither model.safetensors nor model.safetensors.index.json"));
  }
}

}  // namespace checkpoint_test
