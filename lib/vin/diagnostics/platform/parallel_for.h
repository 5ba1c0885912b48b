// Work items on the cores the process may run on: the one small pool of the tool (a weights
// file's checksum pieces, a sharded set's shards). No thread outlives the call.
#pragma once

#include <cstddef>
#include <functional>

namespace vin::diagnostics {

/// The cores the process may run on: its CPU affinity's count (what `taskset` or a container's
/// cpuset leaves it), at least 1.
unsigned usable_cores();

/// Calls `work(i)` for each i in [0, count), items taken in order by up to `workers` threads
/// (this one among them; fewer where the system gives no more). An exception from an item is
/// kept and no item is started after it; once every thread has stopped, the exception of the
/// first failed item in order is thrown (every item before it was started, so that is the same
/// whichever thread failed first).
void parallel_for(std::size_t count, unsigned workers, const std::function<void(std::size_t)>& work);

}  // namespace vin::diagnostics
