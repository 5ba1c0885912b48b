#!/usr/bin/env python3
"""diff at scale (issue 43): two saved record files of N modules (inspect-model's jsonl, or
profile's), one module in a thousand changed, diffed by vin-inspect and by the 25-line Python
script a user would write instead (records keyed by path, fields compared). Prints, per size and
kind, the wall time and peak memory of each (the median of RUNS runs; /usr/bin/time's maximum
resident set) and their ratio.

  bench/bench_diff.py --binary build/ci/apps/vin-inspect [--sizes 100000,1000000] [--runs 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

PYTHON_DIFF = r'''
import json, sys
def load(path):
    header, items = None, {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            kind = r.pop("record")
            if kind in ("ModuleMetadata", "ModuleProfile", "OperatorProfile"):
                items[(kind, r.get("path", r.get("module_path", r.get("operator"))))] = r
            else:
                header = r
    return header, items
(old_header, old), (new_header, new) = load(sys.argv[1]), load(sys.argv[2])
changes = []
for key, before in old.items():
    after = new.get(key)
    if after is None:
        changes.append(("removed", key))
        continue
    for field, value in before.items():
        if after.get(field) != value:
            changes.append(("changed", key, field, value, after.get(field)))
changes += [("added", key) for key in new if key not in old]
for c in changes:
    print(json.dumps(c))
sys.exit(1 if changes else 0)
'''


def model_records(n, changed):
    yield {"record": "ModelMetadata", "model_type": "big.Net", "total_parameters": n * 10,
           "trainable_parameters": n * 10}
    for i in range(n):
        yield {"record": "ModuleMetadata", "path": f"blocks.{i // 10}.layer{i % 10}",
               "module_type": "torch.nn.modules.linear.Linear",
               "direct_parameters": 10 + (1 if changed and i % 1000 == 7 else 0),
               "trainable_parameters": 10, "direct_buffers": 0, "training": False}


def profile_records(n, changed):
    for i in range(n):
        flops = 1000 + (10 if changed and i % 1000 == 7 else 0)
        yield {"record": "ModuleProfile", "module_path": f"blocks.{i // 10}.layer{i % 10}",
               "module_type": "torch.nn.modules.linear.Linear", "calls": 1, "parameters": 10,
               "input_shapes": [[1, 16]], "output_shapes": [[1, 16]], "flops": flops,
               "self_flops": flops, "time_ms": 0.01 * (i % 7), "self_time_ms": 0.01,
               "allocated_bytes": 64, "peak_bytes": 64}
    yield {"record": "OperatorProfile", "operator": "aten::linear", "calls": n,
           "flops": 1000 * n, "time_ms": 1.0}
    yield {"record": "ProfileSummary", "device": "cpu", "warmup": 0, "runs": 1,
           "latency_ms": {"min": 1.0, "median": 1.0, "mean": 1.0, "p90": 1.0, "max": 1.0},
           "throughput": 1.0, "flops": 1000 * n, "instrumented_ms": 1.0, "peak_bytes": 64,
           "parameter_bytes": 40 * n, "buffer_bytes": 0, "modules": n, "operators": 1}


def measure(command, runs):
    """Median wall seconds and median peak RSS (MiB) of `command` over `runs` runs."""
    seconds, peaks = [], []
    for _ in range(runs):
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", *command], capture_output=True,
                           text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"{command[0]} failed: {p.stderr[-2000:]}")
        wall, peak_kib = p.stderr.strip().splitlines()[-1].split()
        seconds.append(float(wall))
        peaks.append(int(peak_kib) / 1024)
    return statistics.median(seconds), statistics.median(peaks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--kinds", default="model,profile")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "diff.py")
        with open(script, "w") as f:
            f.write(PYTHON_DIFF)
        print(f"{'kind':8} {'N':>9} {'MB':>6} {'vin-inspect s':>13} {'MiB':>6} "
              f"{'python s':>9} {'MiB':>6} {'time ratio':>10} {'memory ratio':>12}")
        for kind in args.kinds.split(","):
            make = model_records if kind == "model" else profile_records
            for n in (int(s) for s in args.sizes.split(",")):
                old, new = (os.path.join(tmp, f"{kind}{n}{side}.jsonl") for side in "ab")
                for path, changed in ((old, False), (new, True)):
                    with open(path, "w") as f:
                        for r in make(n, changed):
                            f.write(json.dumps(r) + "\n")
                ours = measure([args.binary, "diff", old, new], args.runs)
                theirs = measure([sys.executable, script, old, new], args.runs)
                size = os.path.getsize(old) / 1e6
                print(f"{kind:8} {n:>9,} {size:>6.0f} {ours[0]:>13.2f} {ours[1]:>6.0f} "
                      f"{theirs[0]:>9.2f} {theirs[1]:>6.0f} {ours[0] / theirs[0]:>10.2f} "
                      f"{ours[1] / theirs[1]:>12.2f}", flush=True)
                os.remove(old)
                os.remove(new)


if __name__ == "__main__":
    main()
