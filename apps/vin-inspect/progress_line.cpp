#include "progress_line.h"

#include <unistd.h>

#include <iostream>

namespace vin::cli {
namespace {

std::atomic<ProgressLine*> g_progress_line{nullptr};  // the one on the terminal now

}  // namespace

ProgressLine::ProgressLine() : on_(isatty(STDERR_FILENO) == 1) {
  if (on_) g_progress_line = this;
}

ProgressLine::~ProgressLine() {
  if (on_) g_progress_line = nullptr;
  clear();
}

void ProgressLine::clear() {
  if (on_ && shown_.exchange(false)) std::cerr << "\r\033[K" << std::flush;
}

void ProgressLine::show(diagnostics::ProfilePhase phase, std::int64_t done, std::int64_t total) {
  if (!on_) return;
  std::cerr << "\r\033[K"
            << "vin-inspect: "
            << (phase == diagnostics::ProfilePhase::warmup ? "warm-up forward " : "timed forward ")
            << done << "/" << total << std::flush;
  shown_ = true;
}

void clear_progress_line() {
  if (ProgressLine* line = g_progress_line.load()) line->clear();
}

}  // namespace vin::cli
