// broadcast_parameters and all_reduce_gradients (dist/data_parallel.hpp).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/data_parallel.hpp>
#include <dimtensor/optim/parameter_list.hpp>

namespace dimtensor::dist {

namespace {

std::string describe(optim::parameter_ref const& p) {
  return p.key() + " " + p.shape() + " " + (p.is_double() ? "double" : "float");
}

std::uint64_t hash_text(std::string const& s, std::uint64_t h = 1469598103934665603ULL) {
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  h ^= 0xff;
  h *= 1099511628211ULL;
  return h;
}

// Checks that every rank gives the same parameters (keys, element types,
// extents, order); on every rank the same value_error otherwise, naming
// the first parameter that differs as rank 0 and the other rank have it.
void agree_on_parameters(transport& t, optim::parameter_list const& params, std::string const& call) {
  std::uint64_t whole = 1469598103934665603ULL;
  std::string listing;
  for (optim::parameter_ref const& p : params) {
    std::string const d = describe(p);
    whole = hash_text(d, whole);
    listing += d;
    listing += '\n';
  }
  std::array<std::int64_t, 2> const mine{static_cast<std::int64_t>(params.size()), static_cast<std::int64_t>(whole)};
  auto const ranks = static_cast<std::size_t>(t.size());
  std::vector<std::array<std::int64_t, 2>> all(ranks);
  t.all_gather(mine.data(), all.data(), std::vector<std::size_t>(ranks, sizeof(mine)));
  std::size_t bad = 0;
  for (std::size_t r = 1; r < ranks && bad == 0; ++r) {
    if (all[r] != all[0]) bad = r;
  }
  if (bad == 0) return;
  std::vector<std::string> const listings = detail::gather_text(t, listing);
  auto const lines = [](std::string const& text) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at < text.size()) {
      std::size_t const end = text.find('\n', at);
      out.push_back(text.substr(at, end - at));
      at = end + 1;
    }
    return out;
  };
  std::vector<std::string> const first = lines(listings[0]);
  std::vector<std::string> const other = lines(listings[bad]);
  std::string const other_rank = "rank " + std::to_string(bad);
  std::size_t i = 0;
  while (i < first.size() && i < other.size() && first[i] == other[i]) ++i;
  std::string what;
  if (i < first.size() && i < other.size()) {
    what = "parameter " + std::to_string(i) + " is " + first[i] + " on rank 0 but " + other[i] + " on " + other_rank;
  } else if (i < first.size()) {
    what = "rank 0 has " + std::to_string(first.size()) + " parameters but " + other_rank + " has " +
           std::to_string(other.size()) + "; the first missing on " + other_rank + " is " + first[i];
  } else {
    what = "rank 0 has " + std::to_string(first.size()) + " parameters but " + other_rank + " has " +
           std::to_string(other.size()) + "; the first missing on rank 0 is " + other[i];
  }
  throw value_error(call + ": the ranks' models differ: " + what +
                    " (every rank builds the same model, with the same configuration)");
}

scalar_type type_of(optim::parameter_ref const& p) { return p.is_double() ? scalar_type::f64 : scalar_type::f32; }

}  // namespace

void broadcast_parameters(optim::parameter_list const& params, communicator const& comm, int root) {
  if (root < 0 || root >= comm.size()) {
    throw value_error("broadcast_parameters: the root is rank " + std::to_string(root) +
                      ", but the group has ranks 0 to " + std::to_string(comm.size() - 1));
  }
  transport& t = comm.raw();
  agree_on_parameters(t, params, "broadcast_parameters");
  std::vector<unsigned char> staging;
  for (optim::parameter_ref const& p : params) {
    std::size_t const bytes = static_cast<std::size_t>(p.size()) * size_of(type_of(p));
    if (p.host_accessible()) {
      t.broadcast(p.data(), bytes, root);
    } else {
      staging.resize(bytes);
      p.copy_to_host(staging.data(), p.data());
      t.broadcast(staging.data(), bytes, root);
      p.copy_from_host(p.data(), staging.data());
    }
    p.set_replicated(true);
    p.set_grad_partial(false);
  }
}

void all_reduce_gradients(optim::parameter_list const& params, communicator const& comm,
                          gradient_options const& options) {
  if (options.op != reduce_op::sum && options.op != reduce_op::mean) {
    throw value_error("all_reduce_gradients: the reduction is sum or mean, got " + std::string(name_of(options.op)));
  }
  transport& t = comm.raw();
  agree_on_parameters(t, params, "all_reduce_gradients");
  auto const& entries = params.entries();
  // Which parameters have a gradient on some rank.
  std::vector<std::uint8_t> has(entries.size());
  for (std::size_t k = 0; k < entries.size(); ++k) has[k] = entries[k].has_grad() ? 1 : 0;
  if (!has.empty()) t.all_reduce(has.data(), has.size(), scalar_type::u8, reduce_op::max);

  double const factor = options.op == reduce_op::mean ? 1.0 / comm.size() : 1.0;
  // One open bucket per element type; each holds whole gradients, in the
  // reverse of the parameters' order.
  struct bucket {
    scalar_type type;
    std::vector<std::size_t> members;
    std::size_t bytes = 0;
  };
  std::vector<unsigned char> buffer;
  auto const flush = [&](bucket& b) {
    if (b.members.empty()) return;
    buffer.resize(b.bytes);
    std::size_t at = 0;
    for (std::size_t k : b.members) {
      optim::parameter_ref const& p = entries[k];
      std::size_t const bytes = static_cast<std::size_t>(p.size()) * size_of(b.type);
      if (p.host_accessible()) {
        std::memcpy(buffer.data() + at, p.grad_data(), bytes);
      } else {
        p.copy_to_host(buffer.data() + at, p.grad_data());
      }
      at += bytes;
    }
    t.all_reduce(buffer.data(), b.bytes / size_of(b.type), b.type, reduce_op::sum);
    at = 0;
    for (std::size_t k : b.members) {
      optim::parameter_ref const& p = entries[k];
      std::size_t const bytes = static_cast<std::size_t>(p.size()) * size_of(b.type);
      if (p.host_accessible()) {
        std::memcpy(p.grad_data(), buffer.data() + at, bytes);
      } else {
        p.copy_from_host(p.grad_data(), buffer.data() + at);
      }
      if (factor != 1.0) p.scale_grad(factor);
      p.set_grad_partial(false);
      at += bytes;
    }
    b.members.clear();
    b.bytes = 0;
  };
  bucket floats{scalar_type::f32, {}, 0};
  bucket doubles{scalar_type::f64, {}, 0};
  for (std::size_t k = entries.size(); k-- > 0;) {
    if (has[k] == 0) continue;
    optim::parameter_ref const& p = entries[k];
    p.ensure_grad();
    bucket& b = p.is_double() ? doubles : floats;
    std::size_t const bytes = static_cast<std::size_t>(p.size()) * size_of(b.type);
    if (!b.members.empty() && b.bytes + bytes > options.bucket_bytes) flush(b);
    b.members.push_back(k);
    b.bytes += bytes;
  }
  flush(floats);
  flush(doubles);
}

}  // namespace dimtensor::dist
