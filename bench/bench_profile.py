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

usage: bench/bench_profile.py [--work DIR] [--repeat N] [--models a,b]
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", default=os.path.join(ROOT, "build/bench-work"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", default="resnet50,mobilenet_v3_small,many_5000,deep_200")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    build()
    tool = os.path.join(ROOT, "build/bench/apps/vin-inspect")
    plain = os.path.join(ROOT, "build/bench/bench/vin-plain-forward")
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
