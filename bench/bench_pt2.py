#!/usr/bin/env python3
"""The .pt2 interpreter's cost (issue 65, contract 12.4): the forward of an exported program on
the tool's interpreter against the forward of the same model's TorchScript twin on LibTorch's
TorchScript interpreter, in the same build (bench/plain_forward.cpp runs either plainly: loaded
and read as capture does, no observers), medians of interleaved runs; and, with --python, the
whole `vin-inspect capture FILE.pt2` against the Python script a user would write instead
(torch.export.load, unflatten, forward hooks: tests/reference/export_capture_reference.py).

  bench/bench_pt2.py --plain build/bench/bench/vin-plain-forward DIR [--rounds 5] [--runs 20]
                     [--binary build/ci/apps/vin-inspect --python /usr/bin/python3]

DIR holds NAME.pt2, NAME.pt (the twin, same weights) and NAME.inputs.npz for each model (resnet18
and mobilenet_v3_small at 1x3x224x224: bench/export_bench_models.py writes them under a torch
with torch.export). Prints one line per model: each side's median forward in ms and the ratio.
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import time


def forward_times(plain, archive, inputs, warmup, runs):
    p = subprocess.run([plain, archive, inputs, str(warmup), str(runs)], capture_output=True,
                       text=True, check=True)
    return [float(line) for line in p.stdout.split()]


def wall(command):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plain", required=True, help="vin-plain-forward")
    parser.add_argument("dir")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--binary", help="vin-inspect, for the whole-capture comparison")
    parser.add_argument("--python", help="a Python with torch.export, for the same")
    args = parser.parse_args()
    for pt2 in sorted(glob.glob(os.path.join(args.dir, "*.pt2"))):
        name = os.path.basename(pt2)[:-4]
        twin = os.path.join(args.dir, name + ".pt")
        inputs = os.path.join(args.dir, name + ".inputs.npz")
        if not os.path.exists(twin) or not os.path.exists(inputs):
            continue
        program, script = [], []
        for _ in range(args.rounds):  # interleaved: a round of each, in turn
            program += forward_times(args.plain, pt2, inputs, 3, args.runs)
            script += forward_times(args.plain, twin, inputs, 3, args.runs)
        a, b = statistics.median(program), statistics.median(script)
        print(f"{name:24s} forward: .pt2 {a:8.2f} ms  TorchScript twin {b:8.2f} ms  "
              f"ratio {a / b:.3f}")
        if args.binary and args.python:
            reference = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                     "reference", "export_capture_reference.py")
            tool, python = [], []
            for _ in range(args.rounds):
                tool.append(wall([args.binary, "capture", pt2, "--inputs", inputs]))
                python.append(wall([args.python, reference, pt2, "--inputs", inputs]))
            a, b = statistics.median(tool), statistics.median(python)
            print(f"{name:24s} capture: vin-inspect {a:6.2f} s  Python unflatten+hooks "
                  f"{b:6.2f} s  ratio {a / b:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
