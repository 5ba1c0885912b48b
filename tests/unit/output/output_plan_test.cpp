// OutputPlan (contract 9.1): every output resolved and checked before anything runs, staged beside
// its target, put in place only by commit(); a plan destroyed without one leaves no new file and
// every old one as it was.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "vin/diagnostics/output/output_plan.h"
#include "vin/diagnostics/output/output_sink.h"
#include "vin/diagnostics/records/error.h"

using namespace vin::diagnostics;
namespace fs = std::filesystem;

namespace {

// A fresh folder for one test case, removed at its end.
struct Folder {
  fs::path path;
  Folder() {
    char name[] = "/tmp/vin-output-plan-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path = name;
  }
  ~Folder() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  // the names in the folder, hidden staging files included
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(path), {}));
  }
};

void write_file(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string refusal(const std::vector<NamedPath>& inputs,
                    const std::vector<OutputPlan::Output>& outputs) {
  try {
    OutputPlan plan(inputs, outputs);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("outputs are staged beside their targets and put in place by commit") {
  Folder dir;
  write_file(dir / "old.jsonl", "the old records\n");
  ::chmod((dir / "old.jsonl").c_str(), 0640);
  {
    OutputPlan plan({{"ARCHIVE", dir / "net.pt"}},
                    {{"--output", dir / "old.jsonl"}, {"--trace", dir / "new.json"}});
    const PlannedOutput records = plan.destination("--output");
    const PlannedOutput trace = plan.destination("--trace");
    CHECK(records.shown == dir / "old.jsonl");
    CHECK(fs::path(records.path).parent_path() == dir.path);
    CHECK(fs::path(records.path).filename().string().rfind(".old.jsonl.vin-inspect-", 0) == 0);
    CHECK(dir.entries() == 3);  // old.jsonl and the two staging files
    {
      // the staging file is written in place: no second temporary beside it
      OutputFile file(records);
      file.write("the new records\n");
      CHECK(dir.entries() == 3);
      file.commit();
    }
    CHECK(read_file(records.path) == "the new records\n");
    write_output(trace, "{}");
    // nothing in place before the commit
    CHECK(read_file(dir / "old.jsonl") == "the old records\n");
    CHECK_FALSE(fs::exists(dir / "new.json"));
    plan.commit();
  }
  CHECK(read_file(dir / "old.jsonl") == "the new records\n");
  CHECK(read_file(dir / "new.json") == "{}");
  struct stat st {};
  REQUIRE(::stat((dir / "old.jsonl").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);  // the old file's permissions kept
  CHECK(dir.entries() == 2);            // no staging file left
}

TEST_CASE("a plan destroyed without a commit leaves no new file and the old ones as they were") {
  Folder dir;
  write_file(dir / "old.jsonl", "the old records\n");
  {
    OutputPlan plan({}, {{"--output", dir / "old.jsonl"}, {"--save", dir / "new.npz"}});
    write_output(plan.destination("--output"), "half of the new records");
    write_output(plan.destination("--save"), "PK");
  }  // the command failed
  CHECK(read_file(dir / "old.jsonl") == "the old records\n");
  CHECK_FALSE(fs::exists(dir / "new.npz"));
  CHECK(dir.entries() == 1);
  {
    OutputPlan plan({}, {{"--output", dir / "old.jsonl"}});
    plan.discard();  // a failure reported from another thread, before the process ends
    CHECK(dir.entries() == 1);
  }
}

TEST_CASE("an output onto an input or another output is refused, however it is spelled") {
  Folder dir;
  write_file(dir / "in.npz", "PK");
  const std::string in = dir / "in.npz";
  // not existing yet, spelled two ways: capture m.pt --inputs in.npz --save X -o ./X
  const std::string cwd = fs::current_path().string();
  fs::current_path(dir.path);
  CHECK(refusal({{"ARCHIVE", "m.pt"}}, {{"--output", "./X"}, {"--save", "X"}}) ==
        "--output and --save name the same file, ./X; give each its own");
  CHECK(refusal({{"ARCHIVE", "m.pt"}}, {{"--output", "sub/../X"}, {"--trace", dir / "X"}})
            .find("name the same file") != std::string::npos);
  fs::current_path(cwd);
  // an input, relative, absolute, through a link
  fs::create_symlink(in, dir / "link.npz");
  for (const std::string& spelling : {in, dir / "./in.npz", dir / "link.npz"})
    CHECK(refusal({{"--inputs", in}}, {{"--output", std::nullopt}, {"--save", spelling}}) ==
          "--save " + spelling + " is an input of this command (" + in +
              "); refusing to overwrite it");
  CHECK(refusal({{"--load-library", dir / "link.npz"}}, {{"--output", in}})
            .find("is an input of this command") != std::string::npos);
  // /dev/null takes several outputs without harm
  CHECK(refusal({}, {{"--output", "/dev/null"}, {"--trace", "/dev/null"}}).empty());
  CHECK(dir.entries() == 2);  // nothing staged by a refused plan
}

TEST_CASE("an empty name, and two outputs on standard output, are usage errors") {
  CHECK(refusal({}, {{"--output", std::nullopt}, {"--trace", ""}}) ==
        "--trace: an empty file name; give a file, or - for standard output");
  CHECK(refusal({}, {{"--output", ""}}).find("--output: an empty file name") == 0);
  CHECK(refusal({}, {{"--output", std::nullopt}, {"--trace", "-"}}) ==
        "--trace - is standard output, where the records go; give it a file of its own, or the "
        "records one with -o");
  CHECK(refusal({}, {{"--output", "-"}, {"--save", "-"}}) ==
        "--output - and --save - both go to standard output; give one of them a file");
  Folder dir;
  {  // the records to a file, the trace to standard output: one output there
    OutputPlan plan({}, {{"--output", dir / "r.jsonl"}, {"--trace", "-"}});
    CHECK(plan.to_standard_output("--trace"));
    CHECK_FALSE(plan.to_standard_output("--output"));
  }
}

TEST_CASE("an output that cannot be written is an error naming it before anything runs") {
  Folder dir;
  CHECK_THROWS_WITH_AS(OutputPlan({}, {{"--output", dir.path.string()}}),
                       (dir.path.string() + ": cannot write: Is a directory").c_str(), Error);
  CHECK_THROWS_WITH_AS(
      OutputPlan({}, {{"--save", dir / "missing/x.npz"}}),
      (dir / "missing/x.npz" + ": cannot write: No such file or directory").c_str(), Error);
}
