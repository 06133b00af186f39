// Harness of docs/data.md's program `data`. The page reads the shipped corpus
// as examples/data/fra-eng/fra.txt (a path from the repository's root) and
// d2l's file as fra.txt (in the current folder). The program runs in a folder
// of its own: the shipped corpus is copied there from the repository this
// file is in, and fra.txt holds the first lines of d2l's file, those the
// page's comments show.
#include <filesystem>
#include <fstream>
// @main
{
  namespace fs = std::filesystem;
  fs::path const corpus =
      fs::path(__FILE__).parent_path().parent_path().parent_path() / "examples" / "data" / "fra-eng" / "fra.txt";
  fs::create_directories("examples/data/fra-eng");
  fs::copy_file(corpus, "examples/data/fra-eng/fra.txt", fs::copy_options::overwrite_existing);
  std::ofstream("fra.txt") << "Go.\tVa !\nHi.\tSalut !\nRun!\tCours !\nRun!\tCourez !\nWho?\tQui ?\nWow!\tÇa alors !\n";
}
