// d2l's translation Transformer trained data-parallel on MPI's ranks: every
// rank takes its rows of each batch, the gradients are summed over the
// ranks before clipping and Adam (dist::all_reduce_gradients), so the
// ranks train one model, the one a single process trains on the whole
// batches.  Rank 0 prints the book's four translations with their BLEU.
//
//   mpirun -np 2 example_distributed_translation [output dir] [corpus] [--exact]
//   example_distributed_translation [output dir] [corpus] [--exact] --threads=2
//
// d2l's settings (dropout 0.1, 200 epochs; 20 with DIMTENSOR_EXAMPLE_QUICK
// set, as CTest sets it), in float.  Dropout draws each rank's masks from a
// generator seeded with seed + rank, so with dropout the ranks' run is not
// one process's; and in float, the order of the batch's sums (one process
// adds all rows, the ranks add their halves, then the halves) changes the
// last bits, and Adam's steps grow them (in double too: from 1.4e-13 after
// two epochs to 0.14 after thirteen).  --exact trains without dropout, in
// double, and then 2 processes print what one process prints when it runs
// the same 2 ranks as threads (--threads=2: dist::run_threads, the same
// sums in the same order); CTest compares them.
#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <dimtensor/dist/mpi.hpp>

#include "training.hpp"

#ifndef DIMTENSOR_EXAMPLES_DATA_DIR
#define DIMTENSOR_EXAMPLES_DATA_DIR "examples/data"
#endif

namespace dtr = distributed_translation;
namespace dt = dimtensor;
namespace dist = dimtensor::dist;

namespace {

// d2l's predict_seq2seq of one sentence.
template <class Net>
std::string translate(Net& net, dtr::dataset_t const& data, std::string const& sentence) {
  auto const& src_vocab = data.src_vocab();
  auto const& tgt_vocab = data.tgt_vocab();
  std::vector<std::string> tokens;
  std::istringstream words(sentence);
  for (std::string w; words >> w;) tokens.push_back(w);
  auto indices = src_vocab.indices(tokens);
  indices.push_back(src_vocab["<eos>"]);
  auto const valid_len = static_cast<dt::index_t>(std::min(indices.size(), data.num_steps()));
  auto const src = dt::data::truncate_pad(indices, data.num_steps(), src_vocab["<pad>"]);
  auto const out = dt::nn::predict_seq2seq(net, src, valid_len, tgt_vocab["<bos>"], tgt_vocab["<eos>"],
                                           static_cast<dt::index_t>(data.num_steps()));
  std::string text;
  for (auto const& t : tgt_vocab.to_tokens(out.tokens)) text += (text.empty() ? "" : " ") + t;
  return text;
}

// Trains and evaluates in element type T; returns the number of failed checks (on rank 0).
template <class T>
int run(dist::communicator const& comm, std::string const& corpus, double p, bool quick) {
  bool const lead = comm.rank() == 0;
  dtr::dataset_t const data(corpus, {.num_steps = 10, .num_examples = 600});
  dtr::SrcVocab const src(static_cast<dt::index_t>(data.src_vocab().size()));
  dtr::TgtVocab const tgt(static_cast<dt::index_t>(data.tgt_vocab().size()));
  std::uint64_t const seed = 0;
  // Each rank builds the model from seed + rank: its dropout modules copy
  // that generator, so each rank draws its own masks.  The weights are then
  // rank 0's, broadcast (after a check, key by key, that the models agree).
  dt::generator gen(seed + static_cast<std::uint64_t>(comm.rank()));
  dtr::transformer_t<T> net({src, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, p, false, gen},
                            {tgt, dtr::Hidden(32), dtr::FFNHidden(64), 4, 2, p, gen});
  dtr::init_weights(net, gen);
  dist::broadcast_parameters(net, comm);

  int const num_epochs = quick ? 20 : 200;
  if (lead) {
    std::cout << "Transformer (" << (sizeof(T) == 8 ? "double" : "float") << ") on " << comm.size() << " ranks ("
              << comm.transport_name() << "): " << data.size()
              << " training pairs in batches of 64, each rank its rows of every batch; " << num_epochs
              << " epochs, dropout " << p << '\n';
  }
  dt::optim::adam optimizer(net, 0.005);
  dt::generator shuffle(seed + 1);  // the same on every rank: the same batches
  net.train();
  double first = 0;
  double last = 0;
  for (int epoch = 1; epoch <= num_epochs; ++epoch) {
    last = dtr::train_epoch(net, optimizer, data, 64, shuffle, comm);
    if (epoch == 1) first = last;
    if (lead && (epoch % 10 == 0 || epoch == 1)) {
      std::cout << "epoch " << epoch << ": loss " << std::setprecision(6) << last << '\n';
    }
  }
  net.eval();
  if (!lead) return 0;
  int failures = 0;
  std::vector<std::string> const engs{"go .", "i lost .", "he's calm .", "i'm home ."};
  std::vector<std::string> const fras{"va !", "j'ai perdu .", "il est calme .", "je suis chez moi ."};
  double mean = 0;
  for (std::size_t i = 0; i < engs.size(); ++i) {
    std::string const text = translate(net, data, engs[i]);
    double const b = dt::data::bleu(text, fras[i], 2);
    mean += b / static_cast<double>(engs.size());
    std::cout << engs[i] << " => " << text << ", bleu " << std::fixed << std::setprecision(3) << b << '\n';
  }
  std::cout << "mean bleu " << std::fixed << std::setprecision(3) << mean << '\n';
  if (!(last < 0.75 * first)) {
    std::cerr << "FAILED: the loss did not fall by a quarter (" << first << " to " << last << ")\n";
    ++failures;
  }
  if (!quick && mean < 0.9) {
    std::cerr << "FAILED: the book's sentences average bleu " << mean << '\n';
    ++failures;
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> positional;
  bool exact = false;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view const a = argv[i];
    if (a == "--exact") {
      exact = true;
    } else if (a.starts_with("--threads=")) {
      threads = std::atoi(argv[i] + 10);
    } else {
      positional.push_back(a);
    }
  }
  std::string const corpus =
      positional.size() > 1 ? std::string(positional[1]) : DIMTENSOR_EXAMPLES_DATA_DIR "/fra-eng/fra.txt";
  bool const quick = std::getenv("DIMTENSOR_EXAMPLE_QUICK") != nullptr;
  auto const body = [&](dist::communicator const& comm) {
    return exact ? run<double>(comm, corpus, 0.0, quick) : run<float>(comm, corpus, 0.1, quick);
  };
  if (threads > 0) {  // the ranks as threads of this process
    int failures = 0;
    dist::run_threads(threads, [&](dist::communicator comm) {
      int const f = body(comm);
      if (comm.rank() == 0) failures = f;
    });
    return failures == 0 ? 0 : 1;
  }
  dist::mpi_world mpi(argc, argv);
  dist::communicator const comm = mpi.world();
  dt::tensor<std::int32_t, dtr::Pair> verdict{body(comm)};
  dist::broadcast(verdict, comm);
  return verdict.item() == 0 ? 0 : 1;
}
