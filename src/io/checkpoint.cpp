// nn::checkpoint (a safetensors file or its shards) and the plan that maps a
// checkpoint's keys to a module's under a checkpoint_schema
// (dimtensor/io/checkpoint.hpp): dims-free, compiled once.

#include <dimtensor/io/checkpoint.hpp>

#include <algorithm>
#include <cstddef>
#include <fstream>
#include <iterator>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/io/detail/json.hpp>

namespace dimtensor::nn {

namespace {

constexpr std::string_view op_open = "nn::checkpoint";
constexpr std::string_view op_load = "load_checkpoint";

std::string read_text(std::filesystem::path const& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw io_error(std::string(op_open) + ": cannot open " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) throw io_error(std::string(op_open) + ": cannot read " + file.string());
  return text.str();
}

bool is_index(std::filesystem::path const& file) {
  std::string const name = file.filename().string();
  std::string_view constexpr suffix = ".index.json";
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Whether @p key matches @p pattern whole, `*` standing for any run of
// characters: the usual matcher that backs up to the last `*` (linear for
// one `*`, never recursive, so a long key is no danger).
bool glob(std::string_view pattern, std::string_view key) {
  std::size_t p = 0, k = 0, star = std::string_view::npos, mark = 0;
  while (k < key.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = k;
    } else if (p < pattern.size() && pattern[p] == key[k]) {
      ++p;
      ++k;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      k = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// Whether @p key matches @p pattern, which has one `*` at most; the run
// the `*` matched goes to @p star.
bool glob_capture(std::string_view pattern, std::string_view key, std::string& star) {
  std::size_t const s = pattern.find('*');
  if (s == std::string_view::npos) {
    star.clear();
    return pattern == key;
  }
  std::string_view const before = pattern.substr(0, s);
  std::string_view const after = pattern.substr(s + 1);
  if (key.size() < before.size() + after.size() || !key.starts_with(before) || !key.ends_with(after)) return false;
  star = std::string(key.substr(before.size(), key.size() - before.size() - after.size()));
  return true;
}

// A split's or tie's pattern carries one `*` at most (the run it stands for
// goes to the other side).
void check_capture_pattern(std::string const& where, std::string_view what, std::string const& pattern) {
  if (std::count(pattern.begin(), pattern.end(), '*') > 1) {
    throw value_error(where + "the " + std::string(what) + " pattern " + pattern +
                      " has more than one `*` (a split's or a tie's keys carry one)");
  }
}

// @p pattern with its first `*` replaced by @p star.
std::string substitute(std::string const& pattern, std::string const& star) {
  std::size_t const s = pattern.find('*');
  if (s == std::string::npos) return pattern;
  return pattern.substr(0, s) + star + pattern.substr(s + 1);
}

bool matches_any(std::vector<std::string> const& patterns, std::string_view key) {
  return std::any_of(patterns.begin(), patterns.end(), [&](std::string const& p) { return glob(p, key); });
}

std::string shape_text(std::vector<index_t> const& shape) { return dimtensor::detail::safetensors_shape_string(shape); }

std::string target_text(detail::checkpoint_target const& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < t.dims.size(); ++i) {
    out += (i ? ", " : "") + t.dims[i] + " " + std::to_string(t.extents[i]);
  }
  return out + "]";
}

std::string join(std::vector<std::string> const& items) {
  std::string out;
  for (auto const& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

checkpoint::checkpoint(std::filesystem::path source) {
  std::error_code ec;
  if (std::filesystem::is_directory(source, ec)) {
    if (std::filesystem::exists(source / "model.safetensors", ec)) {
      source /= "model.safetensors";
    } else if (std::filesystem::exists(source / "model.safetensors.index.json", ec)) {
      source /= "model.safetensors.index.json";
    } else {
      throw io_error(std::string(op_open) + ": " + source.string() +
                     " holds neither model.safetensors nor model.safetensors.index.json");
    }
  } else if (ec) {
    throw io_error(std::string(op_open) + ": cannot read " + source.string() + ": " + ec.message());
  }
  path_ = source;
  if (!is_index(source)) {
    shards_.emplace_back(source);
    for (auto& key : shards_.back().keys()) shard_of_.emplace(key, 0);
  } else {
    std::string const where = std::string(op_open) + ": " + source.string() + ": ";
    dimtensor::detail::json::value index;
    try {
      index = dimtensor::detail::json::parse(read_text(source));
    } catch (dimtensor::detail::json::parse_error const& e) {
      throw io_error(where + "not valid JSON: " + e.what());
    }
    dimtensor::detail::json::value const* map = index.type() == dimtensor::detail::json::kind::object ? index.find("weight_map") : nullptr;
    if (map == nullptr || map->type() != dimtensor::detail::json::kind::object) {
      throw io_error(where + "has no \"weight_map\" object (an index of shards maps each key to its file)");
    }
    std::map<std::string, std::size_t> shard_index;
    std::vector<std::pair<std::string, std::size_t>> listed;
    for (auto const& [key, file] : map->as_object()) {
      if (file.type() != dimtensor::detail::json::kind::string) {
        throw io_error(where + "\"weight_map\"." + key + " is " + std::string(dimtensor::detail::json::kind_name(file.type())) +
                       "; expected a shard's file name");
      }
      std::filesystem::path const name(file.as_string());
      if (name.empty() || name.has_parent_path() || name.is_absolute()) {
        throw io_error(where + "\"weight_map\"." + key + " names " + file.as_string() +
                       ": a shard must be a file name beside the index");
      }
      auto [it, added] = shard_index.emplace(file.as_string(), shard_index.size());
      if (added) shards_.emplace_back(source.parent_path() / name);
      listed.emplace_back(key, it->second);
    }
    for (auto const& [key, shard] : listed) {
      if (!shards_[shard].contains(key)) {
        throw io_error(where + "lists " + key + " in " + shards_[shard].path().filename().string() +
                       ", which has no such tensor");
      }
      shard_of_.emplace(key, shard);
    }
    for (std::size_t s = 0; s < shards_.size(); ++s) {
      for (auto const& key : shards_[s].keys()) {
        auto const it = shard_of_.find(key);
        if (it == shard_of_.end() || it->second != s) {
          throw io_error(where + shards_[s].path().filename().string() + " holds " + key +
                         ", which the index does not give to it");
        }
      }
    }
  }
  keys_.reserve(shard_of_.size());
  for (auto const& entry : shard_of_) keys_.push_back(entry.first);
}

safetensors_reader const& checkpoint::reader_of(std::string_view key) const {
  auto const it = shard_of_.find(key);
  if (it == shard_of_.end()) {
    throw io_error(std::string(op_open) + ": " + path_.string() + " has no tensor " + std::string(key));
  }
  return shards_[it->second];
}

safetensors_entry const& checkpoint::entry(std::string_view key) const { return reader_of(key).entry(key); }

namespace detail {

checkpoint_plan::checkpoint_plan(checkpoint const& file, checkpoint_schema const& schema,
                                 std::vector<checkpoint_target> targets)
    : file_(&file), targets_(std::move(targets)), sources_(targets_.size()) {
  std::string const where = std::string(op_load) + ": " + file.path().string() + ": ";
  for (auto const& split : schema.splits) {
    check_capture_pattern(where, "split", split.from);
    for (auto const& to : split.to) check_capture_pattern(where, "split", to);
  }
  for (auto const& tie : schema.tied) {
    check_capture_pattern(where, "tie", tie.to);
    check_capture_pattern(where, "tie", tie.from);
  }

  // The file's keys as the module spells them.
  std::map<std::string, std::string> by_name;  // renamed key -> file key
  std::vector<std::string> clashes;
  for (auto const& key : file.keys()) {
    if (matches_any(schema.ignore, key)) continue;
    std::string name = key;
    for (auto const& prefix : schema.prefixes) {
      if (!prefix.empty() && name.starts_with(prefix)) {
        name.erase(0, prefix.size());
        break;
      }
    }
    for (auto const& rename : schema.renames) {
      if (rename.from.empty()) continue;
      for (std::size_t at = name.find(rename.from); at != std::string::npos;
           at = name.find(rename.from, at + rename.to.size())) {
        name.replace(at, rename.from.size(), rename.to);
      }
    }
    if (matches_any(schema.ignore, name)) continue;
    auto const [it, added] = by_name.emplace(name, key);
    if (!added) clashes.push_back(it->second + " and " + key + " (both " + name + ")");
  }
  if (!clashes.empty()) {
    throw io_error(where + "tensors that become the same key under the schema: " + join(clashes));
  }
  auto const described = [&](std::string const& name) {
    std::string const& key = by_name.at(name);
    return key == name ? key : key + " (as " + name + ")";
  };

  std::set<std::string> used;
  std::vector<char> found(targets_.size(), 0);
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < targets_.size(); ++i) index_of.emplace(targets_[i].key, i);

  // Each target's stored tensor: its own, else a part of a split.
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    checkpoint_target const& t = targets_[i];
    source& s = sources_[i];
    if (by_name.contains(t.key)) {
      s.file_key = by_name.at(t.key);
      used.insert(t.key);
      found[i] = 1;
    } else {
      for (auto const& split : schema.splits) {
        for (std::size_t part = 0; part < split.to.size(); ++part) {
          std::string star;
          if (!glob_capture(split.to[part], t.key, star)) continue;
          std::string const from = substitute(split.from, star);
          if (!by_name.contains(from)) continue;
          auto const axis = std::find(t.dims.begin(), t.dims.end(), split.dim);
          if (axis == t.dims.end()) {
            throw io_error(where + "the split of " + from + " along " + split.dim + ": the parameter " + t.key +
                           " has no dim " + split.dim + " (its dims: " + target_text(t) + ")");
          }
          s.file_key = by_name.at(from);
          s.split_axis = static_cast<int>(axis - t.dims.begin());
          s.split_offset = static_cast<index_t>(part) * t.extents[static_cast<std::size_t>(s.split_axis)];
          s.split_parts = static_cast<index_t>(split.to.size());
          s.how = ", part " + std::to_string(part + 1) + " of " + std::to_string(split.to.size()) + " along " +
                  split.dim;
          used.insert(from);
          found[i] = 1;
          break;
        }
        if (found[i]) break;
      }
    }
  }
  // Ties: a parameter without a tensor of its own takes another's.
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (found[i]) continue;
    for (auto const& tie : schema.tied) {
      std::string star;
      if (!glob_capture(tie.to, targets_[i].key, star)) continue;
      auto const other = index_of.find(substitute(tie.from, star));
      if (other == index_of.end() || !found[other->second]) continue;
      sources_[i] = sources_[other->second];
      sources_[i].how += ", tied to " + other->first;
      found[i] = 1;
      break;
    }
  }

  std::vector<std::string> missing;
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    if (!found[i]) missing.push_back(targets_[i].key);
  }
  std::vector<std::string> unused;
  for (auto const& [name, key] : by_name) {
    if (!used.contains(name)) unused.push_back(described(name));
  }
  if (!missing.empty() || !unused.empty()) {
    std::string text = where + "the schema does not account for every key:";
    if (!missing.empty()) {
      text += " " + std::to_string(missing.size()) + " parameter" + (missing.size() == 1 ? "" : "s") +
              " of the module with no tensor in the file: " + join(missing) + ";";
    }
    if (!unused.empty()) {
      text += " " + std::to_string(unused.size()) + " tensor" + (unused.size() == 1 ? "" : "s") +
              " of the file that no parameter takes: " + join(unused) + ";";
    }
    text += " (rename, ignore, split or tie them in the checkpoint_schema)";
    throw io_error(text);
  }

  // Layouts: transposition, the parts' extents, and the shapes.
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    checkpoint_target const& t = targets_[i];
    source& s = sources_[i];
    std::vector<index_t> const& stored = file.entry(s.file_key).shape;
    bool const transposed = matches_any(schema.transposed, t.key);
    std::vector<index_t> shape = stored;
    s.perm.resize(stored.size());
    std::iota(s.perm.begin(), s.perm.end(), 0);
    if (transposed) {
      std::reverse(s.perm.begin(), s.perm.end());
      std::reverse(shape.begin(), shape.end());
      s.how = ", transposed" + s.how;
    }
    std::string const from =
        s.file_key == t.key && s.how.empty() ? std::string() : " (from " + s.file_key + s.how + ")";
    bool fits = shape == t.extents;
    if (s.split_axis >= 0 && shape.size() == t.extents.size()) {
      auto const a = static_cast<std::size_t>(s.split_axis);
      fits = true;
      for (std::size_t d = 0; d < shape.size(); ++d) {
        if (d != a && shape[d] != t.extents[d]) fits = false;
      }
      // the parts lie side by side, each as long as this parameter
      if (shape[a] != s.split_parts * t.extents[a]) fits = false;
    }
    if (!fits && s.split_axis < 0) {
      // a scalar parameter takes shape [1], a [1] parameter a scalar
      index_t const stored_count = std::accumulate(shape.begin(), shape.end(), index_t{1}, std::multiplies<>());
      bool const scalar_like = (t.extents.empty() && shape == std::vector<index_t>{1}) ||
                               (shape.empty() && t.extents == std::vector<index_t>{1});
      if (scalar_like && stored_count == 1) {
        fits = true;
        s.perm.clear();
      }
    }
    if (!fits) {
      throw io_error(where + t.key + from + ": stored shape " + shape_text(stored) +
                     (transposed ? " (transposed " + shape_text(shape) + ")" : std::string()) +
                     " but the parameter's is " + target_text(t));
    }
  }
}

template <class T>
void checkpoint_plan::values(std::size_t i, T* out) const {
  checkpoint_target const& t = targets_.at(i);
  source const& s = sources_.at(i);
  std::vector<T> const stored = file_->values<T>(s.file_key);
  std::vector<index_t> const& shape = file_->entry(s.file_key).shape;
  std::size_t const rank = t.extents.size();
  if (s.perm.empty() || rank == 0) {  // scalar to scalar, or [1] to a scalar and back
    if (!stored.empty()) out[0] = stored[0];
    return;
  }
  // The stored tensor's strides, seen along the target's axes.
  std::vector<index_t> stride(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  std::vector<index_t> along(rank);
  for (std::size_t d = 0; d < rank; ++d) along[d] = stride[static_cast<std::size_t>(s.perm[d])];
  index_t base = 0;
  if (s.split_axis >= 0) base = s.split_offset * along[static_cast<std::size_t>(s.split_axis)];
  index_t const count = std::accumulate(t.extents.begin(), t.extents.end(), index_t{1}, std::multiplies<>());
  std::vector<index_t> at(rank, 0);
  index_t offset = base;
  for (index_t n = 0; n < count; ++n) {
    out[n] = stored[static_cast<std::size_t>(offset)];
    for (std::size_t d = rank; d-- > 0;) {
      if (++at[d] < t.extents[d]) {
        offset += along[d];
        break;
      }
      offset -= along[d] * (t.extents[d] - 1);
      at[d] = 0;
    }
  }
}

template void checkpoint_plan::values<float>(std::size_t, float*) const;
template void checkpoint_plan::values<double>(std::size_t, double*) const;

}  // namespace detail

}  // namespace dimtensor::nn
