#!/usr/bin/python3
"""Compares `vin-inspect inspect-model` with Python's torch.jit.load view, record for record.

usage: compare_inspect_model.py --binary PATH --fixtures DIR [ARCHIVE ...]

For every archive (by default each model fixture in DIR), the tool's jsonl output must equal,
line for line and byte for byte, what jit_load_records.py prints for the same archive.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from jit_load_records import records  # noqa: E402

MODEL_FIXTURES = ["everything", "deep", "wide", "dict_model", "convnet", "transformer",
                  "resnet18", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
                  "traced", "frozen", "quantized", "static_quantized"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("archives", nargs="*")
    args = parser.parse_args()
    archives = args.archives or [os.path.join(args.fixtures, n + ".pt") for n in MODEL_FIXTURES]
    passed = failed = 0
    for archive in archives:
        expected = [json.dumps(r) for r in records(torch.jit.load(archive, map_location="cpu"))]
        run = subprocess.run([args.binary, "inspect-model", archive], capture_output=True, text=True)
        got = run.stdout.splitlines()
        problem = None
        if run.returncode != 0:
            problem = f"exit {run.returncode}: {run.stderr.strip()}"
        elif len(got) != len(expected):
            problem = f"{len(got)} records, Python has {len(expected)}"
        else:
            for i, (e, g) in enumerate(zip(expected, got)):
                if e != g:
                    problem = f"record {i + 1} differs:\n  python: {e}\n  tool:   {g}"
                    break
        name = os.path.basename(archive)
        if problem:
            failed += 1
            print(f"FAIL {name}: {problem}")
        else:
            passed += 1
            print(f"PASS {name} ({len(got)} records)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
