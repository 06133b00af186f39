// The agreement check of the collectives (dist/communicator.hpp: agree),
// the refusal of recorded tensors and the parts of a scattered dim.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/core/error.hpp>
#include <dimtensor/core/shape.hpp>
#include <dimtensor/dist/collectives.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/sampler.hpp>

namespace dimtensor::dist::detail {

namespace {

// What one rank sends: the call, the element type, the operation, the
// root, the gathered dim, a hash of the dim names, the rank of the tensor
// and its extents.
constexpr std::size_t max_rank = 16;
enum field : std::size_t { f_call, f_type, f_op, f_root, f_along, f_names, f_rank, f_extents };
constexpr std::size_t record_size = f_extents + max_rank;
using record = std::array<std::int64_t, record_size>;

std::string_view collective_name(std::int64_t c) {
  switch (static_cast<collective>(c)) {
    case collective::all_reduce: return "all_reduce";
    case collective::broadcast: return "broadcast";
    case collective::all_gather: return "all_gather";
    case collective::reduce_scatter: return "reduce_scatter";
    case collective::barrier: return "barrier";
    case collective::split: return "split";
    case collective::gradients: return "all_reduce_gradients";
  }
  return "?";
}

std::int64_t names_hash(std::span<std::string_view const> names) {
  std::uint64_t h = fnv1a_offset;
  for (std::string_view n : names) {
    for (char c : n) h = fnv1a_mix(h, static_cast<unsigned char>(c));
    h = fnv1a_mix(h, 0xff);  // a separator no name contains
  }
  return static_cast<std::int64_t>(h);
}

std::string rank_text(std::size_t r) { return "rank " + std::to_string(r); }

}  // namespace

std::vector<std::string> gather_text(transport& t, std::string const& mine) {
  auto const p = static_cast<std::size_t>(t.size());
  std::vector<std::int64_t> lengths(p);
  std::int64_t const length = static_cast<std::int64_t>(mine.size());
  t.all_gather(&length, lengths.data(), std::vector<std::size_t>(p, sizeof(std::int64_t)));
  std::vector<std::size_t> bytes(p);
  std::size_t total = 0;
  for (std::size_t r = 0; r < p; ++r) {
    bytes[r] = static_cast<std::size_t>(lengths[r]);
    total += bytes[r];
  }
  std::string all(total, '\0');
  t.all_gather(mine.data(), all.data(), bytes);
  std::vector<std::string> out(p);
  std::size_t at = 0;
  for (std::size_t r = 0; r < p; ++r) {
    out[r] = all.substr(at, bytes[r]);
    at += bytes[r];
  }
  return out;
}

std::vector<index_t> agree(transport& t, call_signature const& mine) {
  if (mine.extents.size() > max_rank) {
    throw value_error(std::string(mine.call_text) + ": the collectives take tensors of at most " +
                      std::to_string(max_rank) + " dims, got " + std::to_string(mine.extents.size()));
  }
  bool const has_shape = mine.names.size() == mine.extents.size() && !mine.names.empty();
  record own{};
  own[f_call] = static_cast<std::int64_t>(mine.call);
  own[f_type] = static_cast<std::int64_t>(mine.type);
  own[f_op] = static_cast<std::int64_t>(mine.op);
  own[f_root] = mine.root;
  own[f_along] = mine.along;
  own[f_names] = has_shape ? names_hash(mine.names) : 0;
  own[f_rank] = static_cast<std::int64_t>(mine.extents.size());
  for (std::size_t k = 0; k < mine.extents.size(); ++k) own[f_extents + k] = mine.extents[k];

  auto const p = static_cast<std::size_t>(t.size());
  std::vector<record> all(p);
  t.all_gather(own.data(), all.data(), std::vector<std::size_t>(p, sizeof(record)));

  std::string const call(mine.call_text);
  record const& first = all[0];
  for (std::size_t r = 1; r < p; ++r) {
    record const& other = all[r];
    if (other[f_call] != first[f_call]) {
      throw value_error("dist: " + rank_text(0) + " called " + std::string(collective_name(first[f_call])) +
                        " where " + rank_text(r) + " called " + std::string(collective_name(other[f_call])) +
                        ": every rank makes the same collectives in the same order");
    }
    if (other[f_type] != first[f_type]) {
      throw value_error(call + ": " + rank_text(0) + " gives " +
                        std::string(name_of(static_cast<scalar_type>(first[f_type]))) + " elements but " +
                        rank_text(r) + " gives " + std::string(name_of(static_cast<scalar_type>(other[f_type]))));
    }
    if (other[f_op] != first[f_op] &&
        (mine.call == collective::all_reduce || mine.call == collective::reduce_scatter)) {
      throw value_error(call + ": " + rank_text(0) + " asks for " +
                        std::string(name_of(static_cast<reduce_op>(first[f_op]))) + " but " + rank_text(r) +
                        " for " + std::string(name_of(static_cast<reduce_op>(other[f_op]))));
    }
    if (other[f_root] != first[f_root]) {
      throw value_error(call + ": " + rank_text(0) + " names root " + std::to_string(first[f_root]) + " but " +
                        rank_text(r) + " names root " + std::to_string(other[f_root]));
    }
  }
  if (has_shape) {
    // The first rank whose dims or extents differ from rank 0's, and the first such dim.
    std::size_t bad = 0;
    std::int64_t bad_dim = -1;
    for (std::size_t r = 1; r < p && bad == 0; ++r) {
      record const& other = all[r];
      if (other[f_names] != first[f_names] || other[f_rank] != first[f_rank] || other[f_along] != first[f_along]) {
        bad = r;
        break;
      }
      for (std::int64_t k = 0; k < first[f_rank]; ++k) {
        if (k != first[f_along] && other[f_extents + static_cast<std::size_t>(k)] !=
                                       first[f_extents + static_cast<std::size_t>(k)]) {
          bad = r;
          bad_dim = k;
          break;
        }
      }
    }
    if (bad != 0) {
      std::vector<std::string> const shapes = gather_text(t, dimtensor::detail::shape_text(mine.names, mine.extents));
      std::string const both = rank_text(0) + " gives " + shapes[0] + " but " + rank_text(bad) + " gives " +
                               shapes[bad];
      if (bad_dim < 0) {
        throw shape_error(call + ": the ranks' tensors have different dims: " + both);
      }
      std::string const dim(mine.names[static_cast<std::size_t>(bad_dim)]);
      if (mine.along >= 0) {
        std::string const along(mine.names[static_cast<std::size_t>(mine.along)]);
        throw shape_error(call + ": the extents other than " + along + " must agree, and " + dim + "'s differ: " +
                          both);
      }
      throw shape_error(call + ": the extent of " + dim + " differs between the ranks: " + both);
    }
  }
  std::vector<index_t> along;
  if (mine.along >= 0 && has_shape) {
    along.reserve(p);
    for (record const& r : all) along.push_back(r[f_extents + static_cast<std::size_t>(mine.along)]);
  }
  return along;
}

void refuse_recorded(std::string_view call, std::string_view shape) {
  throw value_error(std::string(call) + ": the tensor " + std::string(shape) +
                    " requires grad, and collectives are not recorded by autograd; give x.detach(), or call it "
                    "under autograd::no_grad");
}

std::vector<index_t> scatter_parts(index_t n, int p) {
  std::vector<index_t> parts(static_cast<std::size_t>(p));
  for (int r = 0; r < p; ++r) parts[static_cast<std::size_t>(r)] = n / p + (r < n % p ? 1 : 0);
  return parts;
}

void check_same_batches(transport& t, std::uint64_t order_hash, std::size_t batch_size, std::size_t count) {
  std::array<std::int64_t, 3> const mine{static_cast<std::int64_t>(order_hash), static_cast<std::int64_t>(batch_size),
                                         static_cast<std::int64_t>(count)};
  auto const p = static_cast<std::size_t>(t.size());
  std::vector<std::array<std::int64_t, 3>> all(p);
  t.all_gather(mine.data(), all.data(), std::vector<std::size_t>(p, sizeof(mine)));
  for (std::size_t r = 1; r < p; ++r) {
    if (all[r][1] != all[0][1] || all[r][2] != all[0][2]) {
      throw value_error("shard_batches: rank 0 has " + std::to_string(all[0][2]) + " batches of " +
                        std::to_string(all[0][1]) + " but rank " + std::to_string(r) + " has " +
                        std::to_string(all[r][2]) + " batches of " + std::to_string(all[r][1]));
    }
    if (all[r][0] != all[0][0]) {
      throw value_error("shard_batches: rank " + std::to_string(r) +
                        " drew another order of the examples than rank 0: seed the generator that shuffles the "
                        "batches the same on every rank (and seed dropout's with seed + rank)");
    }
  }
}

}  // namespace dimtensor::dist::detail
