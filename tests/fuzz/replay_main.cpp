// A main() for fuzz targets built without libFuzzer (gcc, the ordinary test build): runs
// LLVMFuzzerTestOneInput once on every file named, or on every file under a named folder. CTest
// replays the committed crash regressions and the hostile corpus this way, so every input that
// once crashed a target is checked by the normal suite, with or without sanitizers.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void replay(const std::filesystem::path& file) {
  std::cout << "replay " << file.string() << std::endl;  // flushed: names the input of a crash
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (!std::filesystem::exists(arg)) continue;  // e.g. a target with no regressions yet
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) {
          replay(entry.path());
          ++count;
        }
    } else {
      replay(arg);
      ++count;
    }
  }
  std::cout << argv[0] << ": " << count << " inputs replayed without a crash\n";
  return count > 0 ? 0 : 1;  // an empty replay is a broken test, not a pass
}
