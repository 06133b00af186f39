// broadcast_parameters and all_reduce_gradients (dist/data_parallel.hpp).

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <dimtensor/autograd/graph.hpp>

#include <dimtensor/core/error.hpp>
#include <dimtensor/dist/communicator.hpp>
#include <dimtensor/dist/data_parallel.hpp>
#include <dimtensor/optim/parameter_list.hpp>

namespace dimtensor::dist {

namespace {

std::string describe(optim::parameter_ref const& p) {
  return p.key() + " " + p.shape() + " " + (p.is_double() ? "double" : "float");
}

std::uint64_t hash_text(std::string const& s, std::uint64_t h) {
  for (char c : s) h = detail::fnv1a_mix(h, static_cast<unsigned char>(c));
  return detail::fnv1a_mix(h, 0xff);  // a separator no text contains
}

// Checks that every rank gives the same parameters (keys, element types,
// extents, order); on every rank the same value_error otherwise, naming
// the first parameter that differs as rank 0 and the other rank have it.
void agree_on_parameters(transport& t, optim::parameter_list const& params, std::string const& call) {
  std::uint64_t whole = detail::fnv1a_offset;
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

// The gradients of the parameters @p members, one after the other, copied
// into @p buffer, in host memory (the parameter's backend copies).
void gather_gradients(std::vector<optim::parameter_ref> const& entries, std::vector<std::size_t> const& members,
                      unsigned char* buffer) {
  for (std::size_t k : members) {
    optim::parameter_ref const& p = entries[k];
    p.copy_to_host(buffer, p.grad_data());
    buffer += static_cast<std::size_t>(p.size()) * size_of(type_of(p));
  }
}

// The reverse of gather_gradients, each gradient then multiplied by @p factor.
void scatter_gradients(std::vector<optim::parameter_ref> const& entries, std::vector<std::size_t> const& members,
                       unsigned char const* buffer, double factor) {
  for (std::size_t k : members) {
    optim::parameter_ref const& p = entries[k];
    p.copy_from_host(p.grad_data(), buffer);
    if (factor != 1.0) p.scale_grad(factor);
    buffer += static_cast<std::size_t>(p.size()) * size_of(type_of(p));
  }
}

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
  // The buckets' buffer: kept from call to call on this thread, so that a
  // step allocates (and the system maps) nothing.
  thread_local std::unique_ptr<unsigned char[]> buffer;
  thread_local std::size_t capacity = 0;
  auto const flush = [&](bucket& b) {
    if (b.members.empty()) return;
    if (b.members.size() == 1 && entries[b.members[0]].host_accessible()) {
      // One gradient in host memory: reduced where it is.
      optim::parameter_ref const& p = entries[b.members[0]];
      t.all_reduce(p.grad_data(), static_cast<std::size_t>(p.size()), b.type, reduce_op::sum);
      if (factor != 1.0) p.scale_grad(factor);
      p.set_grad_partial(false);
      b.members.clear();
      b.bytes = 0;
      return;
    }
    if (capacity < b.bytes) {
      buffer = std::make_unique_for_overwrite<unsigned char[]>(b.bytes);
      capacity = b.bytes;
    }
    gather_gradients(entries, b.members, buffer.get());
    t.all_reduce(buffer.get(), b.bytes / size_of(b.type), b.type, reduce_op::sum);
    scatter_gradients(entries, b.members, buffer.get(), factor);
    for (std::size_t k : b.members) entries[k].set_grad_partial(false);
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

// ---------------------------------------------------------------------------
// data_parallel: buckets reduced on a communication thread as the backward
// pass finishes them.

namespace dimtensor::dist {

struct data_parallel::impl final : autograd::backward_listener {
  impl(optim::parameter_list p, communicator c, gradient_options o)
      : params(std::move(p)), comm(std::move(c)), options(o) {}

  struct bucket {
    scalar_type type = scalar_type::f32;
    std::vector<std::size_t> members;  // parameter indices
    std::vector<unsigned char> buffer;
    bool in_place = false;    // one gradient in host memory: no copy
    std::size_t waiting = 0;  // members not final yet in this pass
    bool sent = false;
  };

  optim::parameter_list params;
  communicator comm;
  gradient_options options;
  std::vector<bucket> buckets;
  std::vector<std::size_t> bucket_of;  // per parameter
  std::unordered_map<autograd::tensor_state const*, std::size_t> index_of;  // a parameter's state -> its index
  std::vector<std::size_t> uses;      // per parameter: nodes of this pass that still hand it a gradient
  std::size_t next_to_send = 0;       // buckets go in order
  std::size_t sent_in_backward = 0;
  std::size_t sent_last_pass = 0;
  bool in_pass = false;
  int paused = 0;                     // no_sync scopes alive
  autograd::backward_listener* previous = nullptr;

  // The communication thread and its queue of bucket indices.
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::size_t> queue;
  std::size_t done = 0;               // buckets reduced in this round
  std::size_t queued = 0;             // buckets handed over in this round
  bool stopping = false;
  std::exception_ptr failure;
  std::thread worker;

  void begin(std::vector<autograd::tensor_state*> const& order) override {
    if (paused > 0) return;
    in_pass = true;
    std::fill(uses.begin(), uses.end(), 0);
    for (autograd::tensor_state const* s : order) {
      if (!s->grad_fn) continue;
      for (auto const& input : s->grad_fn->inputs) {
        auto const it = index_of.find(input.get());
        if (it != index_of.end()) ++uses[it->second];
      }
    }
    for (bucket& b : buckets) {
      b.waiting = 0;
      for (std::size_t k : b.members) {
        if (uses[k] > 0) ++b.waiting;
      }
    }
    sent_in_backward = 0;
    send_ready();
  }

  void node_done(autograd::node const& n) override {
    if (!in_pass) return;
    for (auto const& input : n.inputs) {
      auto const it = index_of.find(input.get());
      if (it == index_of.end()) continue;
      std::size_t const k = it->second;
      if (uses[k] > 0 && --uses[k] == 0) {
        bucket& b = buckets[bucket_of[k]];
        --b.waiting;
        if (b.waiting == 0) send_ready();
      }
    }
  }

  void end() override {
    if (!in_pass) return;
    in_pass = false;
    sent_last_pass = sent_in_backward;
  }

  // Hands over, in order, every bucket whose gradients are final.
  void send_ready() {
    while (next_to_send < buckets.size() && buckets[next_to_send].waiting == 0) {
      send(next_to_send);
      ++next_to_send;
      if (in_pass) ++sent_in_backward;
    }
  }

  // Copies bucket i's gradients into its buffer and queues it.
  void send(std::size_t i) {
    bucket& b = buckets[i];
    for (std::size_t k : b.members) params.entries()[k].ensure_grad();
    // A bucket of one gradient in host memory is reduced where it is.
    if (!b.in_place) gather_gradients(params.entries(), b.members, b.buffer.data());
    b.sent = true;
    std::lock_guard<std::mutex> const lock(mutex);
    queue.push_back(i);
    ++queued;
    changed.notify_all();
  }

  // The communication thread: reduces the queued buckets, in order (the
  // training thread copies the sums back in wait()).
  void work() {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || !queue.empty(); });
        if (queue.empty()) return;
        i = queue.front();
        queue.pop_front();
      }
      try {
        bucket& b = buckets[i];
        if (b.in_place) {
          optim::parameter_ref const& p = params.entries()[b.members[0]];
          comm.raw().all_reduce(p.grad_data(), static_cast<std::size_t>(p.size()), b.type, reduce_op::sum);
        } else {
          comm.raw().all_reduce(b.buffer.data(), b.buffer.size() / size_of(b.type), b.type, reduce_op::sum);
        }
      } catch (...) {
        std::lock_guard<std::mutex> const lock(mutex);
        if (!failure) failure = std::current_exception();
      }
      std::lock_guard<std::mutex> const lock(mutex);
      ++done;
      changed.notify_all();
    }
  }

  void wait() {
    in_pass = false;
    while (next_to_send < buckets.size()) {
      send(next_to_send);
      ++next_to_send;
    }
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return done == queued; });
    std::exception_ptr const f = failure;
    failure = nullptr;
    done = 0;
    queued = 0;
    next_to_send = 0;
    for (bucket& b : buckets) b.sent = false;
    lock.unlock();
    if (f) std::rethrow_exception(f);
    double const factor = options.op == reduce_op::mean ? 1.0 / comm.size() : 1.0;
    for (bucket const& b : buckets) {
      if (!b.in_place) {
        scatter_gradients(params.entries(), b.members, b.buffer.data(), factor);
      } else if (factor != 1.0) {
        params.entries()[b.members[0]].scale_grad(factor);
      }
    }
    for (optim::parameter_ref const& p : params) p.set_grad_partial(false);
  }
};

data_parallel::data_parallel(optim::parameter_list params, communicator comm, gradient_options options)
    : impl_(std::make_unique<impl>(std::move(params), std::move(comm), options)) {
  impl& m = *impl_;
  if (options.op != reduce_op::sum && options.op != reduce_op::mean) {
    throw value_error("data_parallel: the reduction is sum or mean, got " + std::string(name_of(options.op)));
  }
  broadcast_parameters(m.params, m.comm);
  auto const& entries = m.params.entries();
  m.bucket_of.assign(entries.size(), 0);
  m.uses.assign(entries.size(), 0);
  // Buckets in the reverse of the parameters' order, one element type each.
  std::array<std::ptrdiff_t, 2> open{-1, -1};  // the open bucket of float, of double
  for (std::size_t k = entries.size(); k-- > 0;) {
    optim::parameter_ref const& p = entries[k];
    m.index_of.emplace(p.state(), k);
    scalar_type const type = p.is_double() ? scalar_type::f64 : scalar_type::f32;
    std::size_t const bytes = static_cast<std::size_t>(p.size()) * size_of(type);
    std::ptrdiff_t& o = open[p.is_double() ? 1 : 0];
    if (o < 0 || (!m.buckets[static_cast<std::size_t>(o)].members.empty() &&
                  m.buckets[static_cast<std::size_t>(o)].buffer.size() + bytes > options.bucket_bytes)) {
      m.buckets.emplace_back();
      m.buckets.back().type = type;
      o = static_cast<std::ptrdiff_t>(m.buckets.size() - 1);
    }
    impl::bucket& b = m.buckets[static_cast<std::size_t>(o)];
    b.members.push_back(k);
    b.buffer.resize(b.buffer.size() + bytes);
    m.bucket_of[k] = static_cast<std::size_t>(o);
  }
  for (impl::bucket& b : m.buckets) {
    b.in_place = b.members.size() == 1 && entries[b.members[0]].host_accessible();
    if (b.in_place) b.buffer = {};
  }
  m.worker = std::thread([&m] { m.work(); });
  m.previous = autograd::install_backward_listener(&m);
}

data_parallel::~data_parallel() {
  impl& m = *impl_;
  autograd::install_backward_listener(m.previous);
  {
    std::lock_guard<std::mutex> const lock(m.mutex);
    m.stopping = true;
    m.changed.notify_all();
  }
  m.worker.join();
}

void data_parallel::wait() { impl_->wait(); }

std::size_t data_parallel::bucket_count() const noexcept { return impl_->buckets.size(); }

std::size_t data_parallel::buckets_sent_during_backward() const noexcept { return impl_->sent_last_pass; }

data_parallel::no_sync_scope::no_sync_scope(data_parallel& owner) : owner_(&owner) { ++owner_->impl_->paused; }

data_parallel::no_sync_scope::~no_sync_scope() { --owner_->impl_->paused; }

}  // namespace dimtensor::dist
