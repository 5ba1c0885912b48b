#!/usr/bin/env bash
# Capture's cost on scripted torchvision models at batch 1 (issues 3 and 12):
#  1. in process: the instrumented forward (default limits, recording) against the plain forward
#     of the same loaded resnet18, medians of 25 interleaved runs after warm-up (bench/);
#  2. whole process: `vin-inspect capture` against a program that only loads the archive, reads
#     the same inputs and runs the forward, wall time and peak RSS, medians of 7 interleaved runs;
#  3. `capture --stats` (every tensor of every call checked for NaN and infinity, statistics per
#     snapshot) against `capture` on resnet50, wall time, medians of 15 interleaved runs.
# usage: bench/bench_capture.sh [WORKDIR]      (default build/bench-work)
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-build/bench-work}
mkdir -p "$work"

cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DVIN_BUILD_TESTS=OFF \
  -DVIN_BUILD_BENCHMARKS=ON >/dev/null
cmake --build build/bench >/dev/null

if [[ ! -f "$work/resnet50.pt" ]]; then
  /usr/bin/python3 - "$work" <<'PY'
import os, sys
import numpy as np, torch, torchvision
out = sys.argv[1]
for name in ("resnet18", "resnet50"):
    torch.manual_seed(0)
    model = getattr(torchvision.models, name)().eval()
    torch.jit.save(torch.jit.script(model), os.path.join(out, name + ".pt"))
np.savez(os.path.join(out, "resnet18_inputs.npz"),
         np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32))
PY
fi
archive="$work/resnet18.pt"
inputs="$work/resnet18_inputs.npz"

echo "== in process (build/bench/bench/vin-capture-bench)"
build/bench/bench/vin-capture-bench "$archive" "$inputs" --runs 25 | tee "$work/in_process.json"

echo "== whole process, 7 interleaved runs each"
/usr/bin/python3 - "$archive" "$inputs" <<'PY'
import statistics, subprocess, sys, time
archive, inputs = sys.argv[1:3]
commands = {
    "vin-inspect capture": ["build/bench/apps/vin-inspect", "capture", archive, "--inputs", inputs,
                            "--eval", "-o", "/dev/null"],
    "load + forward only": ["build/bench/bench/vin-plain-forward", archive, inputs],
}
results = {name: ([], []) for name in commands}
for _ in range(7):
    for name, cmd in commands.items():
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True)
        wall = time.perf_counter() - start
        assert p.returncode == 0, p.stderr
        results[name][0].append(wall)
        results[name][1].append(int(p.stderr.strip().splitlines()[-1]))
med = {n: (statistics.median(w), statistics.median(m)) for n, (w, m) in results.items()}
for n, (w, m) in med.items():
    print(f"{n:22s} wall {w:6.3f} s   peak RSS {m / 1024:7.1f} MiB")
(cw, cm), (pw, pm) = med["vin-inspect capture"], med["load + forward only"]
print(f"ratio                  wall {cw / pw:6.3f}     peak RSS {cm / pm:7.3f}")
PY

echo "== capture --stats against capture, resnet50, 15 interleaved runs each"
/usr/bin/python3 - "$work/resnet50.pt" "$inputs" <<'PY'
import statistics, subprocess, sys, time
archive, inputs = sys.argv[1:3]
base = ["build/bench/apps/vin-inspect", "capture", archive, "--inputs", inputs, "--eval",
        "-o", "/dev/null"]
commands = {"capture": base, "capture --stats": base + ["--stats"]}
walls = {name: [] for name in commands}
for _ in range(15):
    for name, cmd in commands.items():
        start = time.perf_counter()
        subprocess.run(cmd, check=True)
        walls[name].append(time.perf_counter() - start)
# the median, and the fastest run (least disturbed by the machine's neighbours)
med = {n: statistics.median(w) for n, w in walls.items()}
low = {n: min(w) for n, w in walls.items()}
for n in commands:
    print(f"{n:22s} wall median {med[n]:6.3f} s   fastest {low[n]:6.3f} s")
print(f"ratio                  wall median {med['capture --stats'] / med['capture']:6.3f}     "
      f"fastest {low['capture --stats'] / low['capture']:6.3f}")
PY
