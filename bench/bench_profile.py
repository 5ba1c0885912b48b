#!/usr/bin/python3
"""profile's costs (issue 28), measured interleaved on one machine, medians of --repeat runs:

1. the timed runs' median latency against a plain LibTorch loop over the same archive and inputs
   (vin-plain-forward ARCHIVE INPUTS 3 10: the same warm-up and runs, nothing observed): the
   measurement must not distort what it measures (goal: within 5%);
2. the instrumented forward (`instrumented_ms`) against the plain forward (`latency_ms.median`
   of the same profile run): goal at most 1.5x on resnet50; the module-heavy models reported;
3. the whole `vin-inspect profile` (default warm-up and runs) against a Python script that does
   the same with torch.jit.load, the same warm-up and timed runs and one
   torch.profiler.profile(record_shapes=True, profile_memory=True, with_flops=True) forward,
   printing its table: goals at most 0.5x on mobilenet_v3_small and the 5,000-module model
   (fixed costs dominate), at most 1.0x on resnet50.

With --overhead, instead: the instrumented forward against the timed median on the five
models of issue 42 (resnet18, mobilenet_v3_small, an LSTM, an MLP, a model with loops and a
branch), one intra-op thread, 20 timed runs, medians over --repeat profiles: the raw ratio
(`instrumented_ms` / `latency_ms.median`, the clock's), the instrumentation's measured cost
(`overhead`), and the ratio after it is subtracted (the root module's `time_ms` / the median):
goal at most 1.3x.

usage: bench/bench_profile.py [--work DIR] [--repeat N] [--models a,b] [--overhead] [--tool PATH]
Builds build/bench (Release, benchmarks on) first; prints one table row per model and check.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

PEER = r'''
import sys, time
import numpy as np, torch
archive, inputs = sys.argv[1], sys.argv[2]
model = torch.jit.load(archive)
args = [torch.from_numpy(a) for a in np.load(inputs).values()]
with torch.no_grad():
    for _ in range(3):
        model(*args)
    times = []
    for _ in range(10):
        start = time.perf_counter()
        model(*args)
        times.append((time.perf_counter() - start) * 1000)
    with torch.profiler.profile(record_shapes=True, profile_memory=True, with_flops=True) as prof:
        model(*args)
print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=15))
print("median", sorted(times)[len(times) // 2])
'''


def build():
    subprocess.run(["cmake", "-S", ROOT, "-B", os.path.join(ROOT, "build/bench"), "-G", "Ninja",
                    "-DCMAKE_BUILD_TYPE=Release", "-DVIN_BUILD_TESTS=OFF",
                    "-DVIN_BUILD_BENCHMARKS=ON"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", os.path.join(ROOT, "build/bench")], check=True,
                   stdout=subprocess.DEVNULL)


def prepare(work, name):
    import numpy as np
    import torch
    from bench_models import MODELS
    archive = os.path.join(work, name + ".pt")
    inputs = os.path.join(work, name + "_inputs.npz")
    if not os.path.exists(archive):
        make, shape = MODELS[name]
        torch.manual_seed(0)
        model = make().eval()
        torch.jit.save(torch.jit.script(model), archive)
    if not os.path.exists(inputs):
        make, shape = MODELS[name]
        np.savez(inputs, np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    return archive, inputs


def wall(command):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{command}: {done.stderr}")
    return time.perf_counter() - start, done.stdout


def overhead(tool, args):
    from bench_models import OVERHEAD_MODELS
    print("| model | timed median | instrumented forward | raw ratio | overhead measured "
          "(per module / operator event) | root module's time | ratio after it |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in OVERHEAD_MODELS:
        archive, inputs = prepare(args.work, name)
        rows = []
        for _ in range(args.repeat):
            _, out = wall([tool, "profile", archive, "--inputs", inputs, "--threads", "1",
                           "--runs", "20"])
            records = [json.loads(line) for line in out.splitlines()]
            summary = records[-1]
            root = next(r for r in records if r.get("module_path") == "<root>")
            median = summary["latency_ms"]["median"]
            rows.append((median, summary["instrumented_ms"], summary["overhead"],
                         root["time_ms"]))
        m = statistics.median
        median = m(r[0] for r in rows)
        instrumented = m(r[1] for r in rows)
        root = m(r[3] for r in rows)
        cost = m(r[2]["ms"] for r in rows)
        module_us = m(r[2]["module_event_us"] for r in rows)
        operator_us = m(r[2]["operator_event_us"] for r in rows)
        print(f"| {name} | {median:.3f} ms | {instrumented:.3f} ms | "
              f"{m(r[1] / r[0] for r in rows):.2f}x | {cost:.3f} ms ({module_us:.2f} / "
              f"{operator_us:.2f} us) | {root:.3f} ms | {m(r[3] / r[0] for r in rows):.2f}x |",
              flush=True)
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=os.path.join(ROOT, "build/bench-work"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", default="resnet50,mobilenet_v3_small,many_5000,deep_200")
    parser.add_argument("--overhead", action="store_true")
    parser.add_argument("--tool", help="this vin-inspect (an optimised build with the benchmarks "
                                       "on, such as build/ci's) instead of building build/bench")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    if not args.tool:
        build()
    tool = args.tool or os.path.join(ROOT, "build/bench/apps/vin-inspect")
    if args.overhead:
        return overhead(tool, args)
    # the plain loop of the same build
    plain = os.path.join(os.path.dirname(os.path.dirname(tool)), "bench", "vin-plain-forward")
    peer = os.path.join(args.work, "profile_peer.py")
    with open(peer, "w") as f:
        f.write(PEER)
    print("| model | profile's median latency | plain loop's | ratio | instrumented forward | "
          "its ratio to the plain median | profile command | Python peer | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in args.models.split(","):
        archive, inputs = prepare(args.work, name)
        latency, plain_latency, instrumented, ratio, tool_wall, peer_wall = [], [], [], [], [], []
        for _ in range(args.repeat):
            seconds, out = wall([tool, "profile", archive, "--inputs", inputs])
            summary = json.loads(out.splitlines()[-1])
            tool_wall.append(seconds)
            latency.append(summary["latency_ms"]["median"])
            instrumented.append(summary["instrumented_ms"])
            ratio.append(summary["instrumented_ms"] / summary["latency_ms"]["median"])
            _, out = wall([plain, archive, inputs, "3", "10"])
            plain_latency.append(statistics.median(float(t) for t in out.split()))
            seconds, _ = wall(["/usr/bin/python3", peer, archive, inputs])
            peer_wall.append(seconds)
        m = statistics.median
        print(f"| {name} | {m(latency):.3f} ms | {m(plain_latency):.3f} ms | "
              f"{m(latency) / m(plain_latency):.3f}x | {m(instrumented):.3f} ms | {m(ratio):.2f}x | "
              f"{m(tool_wall):.3f} s | {m(peer_wall):.3f} s | {m(tool_wall) / m(peer_wall):.3f}x |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
