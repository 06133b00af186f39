// nn::model_config (dimtensor/io/config.hpp): config.json read once,
// fields fetched by key with their kinds checked; dims-free, compiled once.

#include <dimtensor/io/config.hpp>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/io/detail/json.hpp>

namespace dimtensor::nn {

namespace json = dimtensor::detail::json;

struct model_config::fields {
  json::value root;
};

namespace {

std::filesystem::path config_path(std::filesystem::path const& source) {
  std::error_code ec;
  if (std::filesystem::is_directory(source, ec)) return source / "config.json";
  return source;
}

}  // namespace

model_config::model_config(std::filesystem::path const& source) : path_(config_path(source)) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) throw io_error("model_config: cannot open " + path_.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw io_error("model_config: cannot read " + path_.string());
  auto f = std::make_shared<fields>();
  try {
    f->root = json::parse(text.str());
  } catch (json::parse_error const& e) {
    throw io_error("model_config: " + path_.string() + " is not valid JSON: " + e.what());
  }
  if (f->root.type() != json::kind::object) {
    throw io_error("model_config: " + path_.string() + " holds " + std::string(json::kind_name(f->root.type())) +
                   ", not an object of fields");
  }
  fields_ = std::move(f);
}

namespace {

json::value const* find(json::value const& root, std::string_view key) {
  json::value const* v = root.find(key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

[[noreturn]] void wrong(std::filesystem::path const& path, std::string_view key, std::string_view expected,
                        json::value const* v) {
  throw io_error("model_config: " + path.string() + ": \"" + std::string(key) + "\" " +
                 (v == nullptr ? std::string("is missing") : "is " + json::dump(*v)) + " where " +
                 std::string(expected) + " belongs");
}

}  // namespace

bool model_config::contains(std::string_view key) const { return find(fields_->root, key) != nullptr; }

std::vector<std::string> model_config::keys() const {
  std::vector<std::string> out;
  for (auto const& m : fields_->root.as_object()) out.push_back(m.first);
  return out;
}

std::int64_t model_config::integer(std::string_view key) const {
  json::value const* v = find(fields_->root, key);
  if (v == nullptr || v->type() != json::kind::integer) wrong(path_, key, "an integer", v);
  return v->as_integer();
}

std::int64_t model_config::integer_or(std::string_view key, std::int64_t fallback) const {
  return contains(key) ? integer(key) : fallback;
}

index_t model_config::extent(std::string_view key) const {
  json::value const* v = find(fields_->root, key);
  if (v == nullptr || v->type() != json::kind::integer || v->as_integer() <= 0 ||
      v->as_integer() > std::numeric_limits<index_t>::max()) {
    wrong(path_, key, "a positive integer (an extent)", v);
  }
  return static_cast<index_t>(v->as_integer());
}

index_t model_config::extent_or(std::string_view key, index_t fallback) const {
  return contains(key) ? extent(key) : fallback;
}

double model_config::number(std::string_view key) const {
  json::value const* v = find(fields_->root, key);
  if (v == nullptr || !v->is_numeric()) wrong(path_, key, "a number", v);
  return v->as_number();
}

double model_config::number_or(std::string_view key, double fallback) const {
  return contains(key) ? number(key) : fallback;
}

std::string model_config::string(std::string_view key) const {
  json::value const* v = find(fields_->root, key);
  if (v == nullptr || v->type() != json::kind::string) wrong(path_, key, "a string", v);
  return v->as_string();
}

std::string model_config::string_or(std::string_view key, std::string_view fallback) const {
  return contains(key) ? string(key) : std::string(fallback);
}

bool model_config::boolean(std::string_view key) const {
  json::value const* v = find(fields_->root, key);
  if (v == nullptr || v->type() != json::kind::boolean) wrong(path_, key, "true or false", v);
  return v->as_bool();
}

bool model_config::boolean_or(std::string_view key, bool fallback) const {
  return contains(key) ? boolean(key) : fallback;
}

}  // namespace dimtensor::nn
