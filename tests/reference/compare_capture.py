#!/usr/bin/python3
"""Parity test of `vin-inspect capture` (scripted archive) against capture_reference.py (eager
model with real forward hooks), case by case.

usage: compare_capture.py --binary PATH --fixtures DIR [--examples DIR] [--jobs N] [CASE ...]

DIR is what tests/fixtures/make_capture_fixtures.py wrote (capture_manifest.json lists the cases). The
eager model of a case is tests/fixtures/capture_models.build(model) with the archive's parameters,
buffers and training flags loaded on top. The worked example (../shared/docs/examples from the
repository root, or --examples; skipped when absent) adds cases on tinynet.py/tinynet.pt, and
there the reference must also reproduce the committed expected jsonl.

Lines are compared in order: same number, same keys in the same order, every field exactly equal
(JSON types included: 1 is not 1.0 nor true) except the `values` of floating dtypes, which agree
within rel 1e-5 / abs 1e-6 (non-finite strings exactly); every tool line must also be laid out
as Python's json.dumps would print it. The exit status must be the expected one (1 when the
forward raises). Prints `PASS name` / `FAIL name: first difference`, then `N passed, M failed`;
exits 0 only when every case passes.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "fixtures"))

import torch  # noqa: E402

import capture_reference as ref  # noqa: E402
from case_runner import count_difference, run_cases, timed_run  # noqa: E402

FLOAT_DTYPES = {"torch.float16", "torch.bfloat16", "torch.float32", "torch.float64"}
REL, ABS = 1e-5, 1e-6
MANIFEST = "capture_manifest.json"
DEFAULT_EXAMPLES = os.path.normpath(os.path.join(REPO, "..", "shared", "docs", "examples"))


def strict_equal(a, b) -> bool:
    """Equality that tells JSON types apart (bool/int/float)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(strict_equal(a[k], b[k]) for k in a)
    return a == b


def values_difference(expected: list, got: list):
    if not isinstance(got, list) or len(expected) != len(got):
        return f"{len(expected)} values expected, got {got!r:.200}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if isinstance(e, str) or isinstance(g, str):
            ok = e == g
        elif type(e) is not float or type(g) is not float:
            ok = False  # an integer or bool among floating values
        else:
            ok = math.isclose(e, g, rel_tol=REL, abs_tol=ABS)
        if not ok:
            return f"values[{i}]: expected {e!r}, got {g!r}"
    return None


def record_difference(expected: dict, got: dict):
    if list(expected) != list(got):
        return f"keys: expected {list(expected)}, got {list(got)}"
    floating = expected.get("record") == "TensorSnapshot" and expected.get("dtype") in FLOAT_DTYPES
    for key in expected:
        if key == "values" and floating and strict_equal(expected["dtype"], got["dtype"]):
            problem = values_difference(expected[key], got[key])
            if problem:
                return problem
        elif not strict_equal(expected[key], got[key]):
            return f"{key}: expected {json.dumps(expected[key])}, got {json.dumps(got[key])}"
    return None


def lines_difference(expected: list, got_lines: list, check_layout: bool = True):
    """First difference between reference records and the tool's jsonl lines, or None."""
    got = []
    for n, line in enumerate(got_lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            return f"line {n} is not JSON ({exc}): {line[:200]}"
        if check_layout and json.dumps(record) != line:
            return f"line {n} is not in json.dumps layout:\n  got:      {line[:300]}\n" \
                   f"  json.dumps: {json.dumps(record)[:300]}"
        got.append(record)
    for n, (e, g) in enumerate(zip(expected, got), 1):
        problem = record_difference(e, g)
        if problem:
            return f"line {n}: {problem}\n  expected: {json.dumps(e)[:400]}\n" \
                   f"  got:      {json.dumps(g)[:400]}"
    return count_difference([json.dumps(e) for e in expected], [json.dumps(g) for g in got])


def load_cases(fixtures: str, examples: str):
    cases = []
    with open(os.path.join(fixtures, MANIFEST)) as f:
        for c in json.load(f)["cases"]:
            cases.append(dict(c, dir=fixtures, factory=None, expected_file=None))
    if examples and os.path.isfile(os.path.join(examples, "tinynet.pt")):
        factory = os.path.join(examples, "tinynet.py") + ":build"

        def example(name, flags, expected_file=None):
            cases.append({"name": name, "model": "tinynet", "archive": "tinynet.pt",
                          "inputs": ["tinynet_inputs.npz"], "flags": flags, "expect_exit": 0,
                          "dir": examples, "factory": factory, "expected_file": expected_file})

        example("example_capture", [], "capture.jsonl")
        example("example_capture_limited", ["--max-samples-per-tensor", "2", "--max-bytes", "40"],
                "capture-limited.jsonl")
        example("example_both_quotas", ["--max-tensors", "1", "--max-bytes", "24"])
        example("example_act_head", ["--module", "head", "--module", "blocks.0.act",
                                     "--max-samples-per-tensor", "3"])
    return cases


def run_tool(binary: str, case: dict):
    d = case["dir"]
    cmd = [binary, "capture", os.path.join(d, case["archive"])]
    for name in case["inputs"]:
        cmd += ["--inputs", os.path.join(d, name)]
    rc, stdout, stderr, seconds = timed_run(cmd + case["flags"], 120)
    return rc, stdout.decode("utf-8", errors="replace").splitlines(), stderr.strip(), seconds


def run_reference(case: dict):
    import capture_models

    d = case["dir"]
    if case["factory"]:
        model = ref.load_factory(case["factory"])()
    else:
        model = capture_models.build(case["model"])
    ref.sync_with_archive(model, os.path.join(d, case["archive"]))
    limits, module_paths, eval_mode = ref.limits_from_flags(case["flags"])
    if eval_mode:
        model.eval()
    return ref.capture_run(model, [os.path.join(d, n) for n in case["inputs"]], module_paths, limits)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--examples", default=DEFAULT_EXAMPLES)
    parser.add_argument("--jobs", type=int, default=2, help="tool runs in parallel")
    parser.add_argument("--skip-unloadable", action="store_true",
                        help="cases whose archive this torch cannot load (written by a newer "
                             "PyTorch, with operators it lacks) are skipped with the reason "
                             "instead of failing (the cross-version checks cover them)")
    parser.add_argument("cases", nargs="*", help="only these case names")
    args = parser.parse_args()
    torch.set_num_threads(1)  # the expected outputs come from a single-threaded CPU forward

    cases = load_cases(args.fixtures, args.examples)
    if args.cases:
        cases = [c for c in cases if c["name"] in args.cases]
    if args.skip_unloadable:
        loadable = []
        for case in cases:
            try:
                torch.jit.load(os.path.join(case["dir"], case["archive"]))
            except Exception as exc:  # noqa: BLE001 (an operator this torch lacks, most often)
                reason = next((line for line in str(exc).splitlines() if line.strip()), repr(exc))
                print(f"SKIP {case['name']}: torch {torch.__version__} cannot load "
                      f"{case['archive']} ({reason.strip()})")
                continue
            loadable.append(case)
        cases = loadable

    def check(case, result):
        problems = []
        try:
            expected, error = run_reference(case)
        except Exception as exc:  # noqa: BLE001 - a broken fixture is a failure, not a crash
            expected, error = None, None
            problems.append(f"reference could not run: {type(exc).__name__}: {exc}")
        expected_exit = case["expect_exit"]
        if expected is not None and (1 if error is not None else 0) != expected_exit:
            problems.append(f"reference exit {1 if error is not None else 0}, manifest says "
                            f"{expected_exit} ({error})")
        if expected is not None and case["expected_file"]:
            with open(os.path.join(case["dir"], case["expected_file"])) as f:
                committed = [json.loads(line) for line in f.read().splitlines()]
            # the reference against the committed example (floats within 1e-6)
            diff = lines_difference(committed, [ref.dumps(r) for r in expected],
                                    check_layout=False)
            if diff:
                problems.append(f"reference differs from {case['expected_file']}: {diff}")
        rc, lines, stderr, seconds = result
        if rc != expected_exit:
            problems.append(f"tool exit {rc}, expected {expected_exit}; stderr: {stderr[:500]}")
        if expected is not None:
            diff = lines_difference(expected, lines)
            if diff:
                problems.append(diff)
        return problems, f"{len(lines)} lines, tool {seconds:.1f} s"

    return run_cases(cases, lambda case: run_tool(args.binary, case), check, args.jobs)

if __name__ == "__main__":
    sys.exit(main())
