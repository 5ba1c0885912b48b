#include "vin/diagnostics/platform/parallel_for.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace vin::diagnostics {

unsigned usable_cores() {
  static const unsigned cores = [] {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
      return static_cast<unsigned>(CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return cores;
}

void parallel_for(std::size_t count, unsigned workers,
                  const std::function<void(std::size_t)>& work) {
  std::vector<std::exception_ptr> errors(count);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto worker = [&] {
    for (std::size_t i; !failed && (i = next.fetch_add(1)) < count;) {
      try {
        work(i);
      } catch (...) {  // never out of a thread: thrown below, in order
        errors[i] = std::current_exception();
        failed = true;
      }
    }
  };
  workers = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(workers, count)));
  std::vector<std::thread> helpers;
  helpers.reserve(workers - 1);
  for (unsigned w = 1; w < workers; ++w) {
    try {
      helpers.emplace_back(worker);
    } catch (const std::system_error&) {  // no thread to be had: fewer workers do it all
      break;
    }
  }
  worker();
  for (std::thread& helper : helpers) helper.join();
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace vin::diagnostics
