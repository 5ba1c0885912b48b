#include "vin/diagnostics/platform/parallel_for.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace vin::diagnostics;

TEST_CASE("parallel_for calls each item once, on up to the workers asked for") {
  for (const unsigned workers : {1u, 2u, 8u}) {
    CAPTURE(workers);
    std::vector<std::atomic<int>> calls(1000);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    parallel_for(calls.size(), workers, [&](std::size_t i) {
      ++calls[i];
      const std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& c : calls) CHECK(c == 1);
    CHECK(threads.size() <= workers);
    if (workers == 1) CHECK(threads == std::set<std::thread::id>{std::this_thread::get_id()});
  }
  parallel_for(0, 4, [](std::size_t) { FAIL("no item to call"); });
  CHECK(usable_cores() >= 1);
}

TEST_CASE("parallel_for throws the first failed item's exception in order, after all stop") {
  std::atomic<bool> later_thrown{false};
  std::atomic<int> started{0};
  const auto run = [&] {
    parallel_for(50, 2, [&](std::size_t i) {
      ++started;
      if (i == 0) {
        // where two threads run, item 1 fails first (waited for up to a second)
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (!later_thrown && std::chrono::steady_clock::now() < until) std::this_thread::yield();
        throw std::runtime_error("item 0");
      }
      if (i == 1) {
        later_thrown = true;
        throw std::logic_error("item 1");
      }
    });
  };
  CHECK_THROWS_WITH_AS(run(), "item 0", std::runtime_error);
  CHECK(started < 50);  // no item started after a failure
}
