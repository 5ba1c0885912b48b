#include "vin/diagnostics/output/output_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "vin/diagnostics/output/output_sink.h"
#include "vin/diagnostics/records/error.h"

namespace vin::diagnostics {
namespace {

namespace fs = std::filesystem;

// What a path names: the file it reaches now (device and inode, following links), and its
// absolute path with links and dots resolved as far as it exists (for files not there yet).
struct Identity {
  bool exists = false;
  bool character_device = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string resolved;
};

Identity identify(const std::string& path) {
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.character_device = S_ISCHR(st.st_mode);
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
  id.resolved = ec ? path : resolved.string();
  return id;
}

bool same_file(const Identity& a, const Identity& b) {
  if (a.exists && b.exists) return a.device == b.device && a.inode == b.inode;
  return a.resolved == b.resolved;
}

}  // namespace

OutputPlan::OutputPlan(const std::vector<NamedPath>& inputs, const std::vector<Output>& outputs) {
  // 1. names: an empty one is a mistake (a variable that expanded to nothing), never "no file"
  for (const Output& out : outputs)
    if (out.path && out.path->empty())
      throw UsageError(out.option + ": an empty file name; give a file, or - for standard output");
  // 2. at most one output on standard output: "-", the default of the records, or a path that
  //    names the file or pipe standard output writes to
  const auto on_stdout = [](const Output& out) {
    return !out.path || *out.path == "-" || names_standard_output(*out.path);
  };
  const Output* first_on_stdout = nullptr;
  for (const Output& out : outputs) {
    if (!on_stdout(out)) continue;
    if (first_on_stdout) {
      const Output& named = out.path ? out : *first_on_stdout;
      const Output& other = out.path ? *first_on_stdout : out;
      if (!other.path)  // the records, by default
        throw UsageError(named.option + " " + *named.path +
                         " is standard output, where the records go; give it a file of its "
                         "own, or the records one with -o");
      throw UsageError(other.option + " " + *other.path + " and " + named.option + " " +
                       *named.path + " both go to standard output; give one of them a file");
    }
    first_on_stdout = &out;
  }
  // 3. no output onto an input or onto another output, however spelled (a character device
  //    such as /dev/null takes several outputs without harm)
  std::vector<Identity> input_ids;
  input_ids.reserve(inputs.size());
  for (const NamedPath& in : inputs) input_ids.push_back(identify(in.path));
  std::vector<std::pair<const Output*, Identity>> files;
  for (const Output& out : outputs) {
    if (!out.path || *out.path == "-") continue;
    files.emplace_back(&out, identify(*out.path));
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [out, id] = files[i];
    if (id.character_device) continue;
    for (std::size_t k = 0; k < inputs.size(); ++k)
      if (same_file(id, input_ids[k]))
        throw UsageError(out->option + " " + *out->path + " is an input of this command (" +
                         inputs[k].path + "); refusing to overwrite it");
    for (std::size_t j = i + 1; j < files.size(); ++j)
      if (same_file(id, files[j].second))
        throw UsageError(out->option + " and " + files[j].first->option + " name the same file, " +
                         *out->path + "; give each its own");
  }
  // 4. a staging file beside each file output, made now: a folder that cannot be written to is
  //    an error before anything runs
  for (const Output& out : outputs) {
    Planned plan{out.option, out.path.value_or("-"), "-", ""};
    if (plan.target != "-") {
      StagingFile staged = stage_beside(plan.target, plan.target);
      if (staged.temp.empty()) {  // a device or a FIFO: written in place, when its turn comes
        plan.destination = plan.target;
      } else {
        ::close(staged.fd);
        plan.destination = std::move(staged.temp);
        plan.final_path = std::move(staged.final_path);
      }
    }
    planned_.push_back(std::move(plan));
  }
}

OutputPlan::~OutputPlan() { discard(); }

PlannedOutput OutputPlan::destination(const std::string& option) const {
  for (const Planned& plan : planned_)
    if (plan.option == option) return {plan.destination, plan.target};
  throw std::logic_error("OutputPlan: no output named " + option);
}

const std::string& OutputPlan::target(const std::string& option) const {
  for (const Planned& plan : planned_)
    if (plan.option == option) return plan.target;
  throw std::logic_error("OutputPlan: no output named " + option);
}

bool OutputPlan::to_standard_output(const std::string& option) const {
  return destination(option).path == "-";
}

void OutputPlan::commit() {
  for (Planned& plan : planned_) {
    if (plan.final_path.empty()) continue;
    if (::rename(plan.destination.c_str(), plan.final_path.c_str()) != 0) {
      const int error = errno;
      discard();
      throw Error(plan.target + ": write failed: " + std::strerror(error));
    }
    plan.final_path.clear();  // in place now: nothing left to remove
  }
}

void OutputPlan::discard() noexcept {
  for (Planned& plan : planned_) {
    if (plan.final_path.empty()) continue;
    ::unlink(plan.destination.c_str());
    plan.final_path.clear();
  }
}

}  // namespace vin::diagnostics
