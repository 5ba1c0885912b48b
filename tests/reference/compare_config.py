#!/usr/bin/python3
"""Parity test of `vin-inspect inspect-config` against the expected records of each case.

usage: compare_config.py --binary PATH --fixtures DIR [--examples DIR] [--jobs N] [CASE ...]

DIR is what tests/fixtures/make_config_fixtures.py wrote (config_manifest.json lists the cases: input
file, expected jsonl, expected exit status, stderr regex). The worked example (config.yaml and
inspect-config.jsonl in ../shared/docs/examples from the repository root, or --examples; skipped
when absent) is one more case. Each case runs `PATH COMMAND DIR/INPUT [ARGS]`.

- Exit status 0 cases: stdout must be the expected records. jsonl: the same number of lines,
  each a JSON object strictly equal to the expected one (same keys in the same order, JSON types
  told apart: 1 is not 1.0 nor true, "1" is not 1), each line laid out exactly as Python's
  json.dumps prints it, and stdout ending in a newline. json: one document strictly equal to
  {"config_type", "target_type", "fields": [...]} built from the expected records.
- Error cases: the expected exit status, nothing on stdout, one or two lines on stderr, the first
  starting with `vin-inspect: error: `, the case's regex found in stderr, no backtrace.
Prints `PASS name` / `FAIL name: first difference`, then `N passed, M failed`; exits 0 only
when every case passes. Needs nothing beyond the standard library.
"""
import argparse
import json
import os
import re
import sys

from case_runner import count_difference, run_cases, timed_run

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MANIFEST = "config_manifest.json"
DEFAULT_EXAMPLES = os.path.normpath(os.path.join(REPO, "..", "shared", "docs", "examples"))
TIMEOUT_S = 60
BACKTRACE_MARKS = ("Exception raised from", "frame #", "terminate called", "Traceback",
                   "Segmentation fault", "AddressSanitizer")


def strict_equal(a, b) -> bool:
    """Equality that tells JSON types apart (bool/int/float/str) and key order."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b  # NaN (only if a bare NaN ever appears; docs/records.md writes "NaN")
    return a == b


def first_difference(expected, got, where="") -> str:
    """Where two JSON values first differ (for the FAIL message)."""
    if type(expected) is not type(got):
        return f"{where or 'value'}: expected {json.dumps(expected)} " \
               f"({type(expected).__name__}), got {json.dumps(got)} ({type(got).__name__})"
    if isinstance(expected, dict):
        if list(expected) != list(got):
            return f"{where or 'keys'}: expected keys {list(expected)}, got {list(got)}"
        for k in expected:
            if not strict_equal(expected[k], got[k]):
                return first_difference(expected[k], got[k], f"{where}.{k}" if where else k)
    if isinstance(expected, list):
        if len(expected) != len(got):
            return f"{where}: expected {len(expected)} items, got {len(got)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            if not strict_equal(e, g):
                return first_difference(e, g, f"{where}[{i}]")
    return f"{where or 'value'}: expected {json.dumps(expected)}, got {json.dumps(got)}"


def read_jsonl(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f.read().splitlines()]


def json_document(records: list) -> dict:
    """The `--format json` document of inspect-config for these jsonl records."""
    head = records[0]
    return {"config_type": head["config_type"], "target_type": head["target_type"],
            "fields": [{k: v for k, v in r.items() if k != "record"} for r in records[1:]]}


def jsonl_difference(expected: list, stdout: str):
    """First difference between expected records and the tool's jsonl stdout, or None."""
    if stdout and not stdout.endswith("\n"):
        return "stdout does not end with a newline"
    lines = stdout.split("\n")[:-1] if stdout else []
    for n, line in enumerate(lines, 1):
        try:
            got = json.loads(line)
        except json.JSONDecodeError as exc:
            return f"line {n} is not JSON ({exc}): {line[:300]}"
        if n <= len(expected) and not strict_equal(expected[n - 1], got):
            return f"line {n}: {first_difference(expected[n - 1], got)}\n" \
                   f"  expected: {json.dumps(expected[n - 1])[:400]}\n  got:      {line[:400]}"
        if json.dumps(got) != line:
            return f"line {n} is not in json.dumps layout:\n  got:        {line[:400]}\n" \
                   f"  json.dumps: {json.dumps(got)[:400]}"
    return count_difference([json.dumps(e) for e in expected], lines)


def json_difference(expected: list, stdout: str):
    try:
        got = json.loads(stdout)
    except json.JSONDecodeError as exc:
        return f"stdout is not one JSON document ({exc}): {stdout[:300]}"
    document = json_document(expected)
    if not strict_equal(document, got):
        return first_difference(document, got)
    return None


def error_difference(case: dict, stdout: str, stderr: str):
    if stdout:
        return f"stdout not empty: {stdout[:300]!r}"
    lines = stderr.rstrip("\n").split("\n")
    if not 1 <= len(lines) <= 2 or not stderr.strip():
        return f"expected a one- or two-line message, got: {stderr[:500]!r}"
    if not lines[0].startswith("vin-inspect: error: "):
        return f"message does not start with 'vin-inspect: error: ': {stderr[:500]!r}"
    for mark in BACKTRACE_MARKS:
        if mark in stderr:
            return f"backtrace-like text in: {stderr[:500]!r}"
    regex = case.get("stderr_regex")
    if regex and not re.search(regex, stderr):
        return f"{regex!r} not found in {stderr[:500]!r}"
    return None


def load_cases(fixtures: str, examples: str) -> list:
    with open(os.path.join(fixtures, MANIFEST)) as f:
        cases = [dict(c, dir=fixtures) for c in json.load(f)["cases"]]
    if examples and os.path.isfile(os.path.join(examples, "config.yaml")) and \
            os.path.isfile(os.path.join(examples, "inspect-config.jsonl")):
        cases.append({"name": "shared_example", "input": "config.yaml", "command": "inspect-config",
                      "args": [], "format": "jsonl", "expected": "inspect-config.jsonl",
                      "expect_exit": 0, "stderr_regex": None, "dir": examples})
    return cases


def run_tool(binary: str, case: dict):
    cmd = [binary, case.get("command", "inspect-config"), os.path.join(case["dir"], case["input"]),
           *case.get("args", [])]
    rc, stdout, stderr, seconds = timed_run(cmd, TIMEOUT_S)
    # the records are ASCII (bytes not UTF-8 as \udcXX); anything else fails the layout check as U+FFFD
    return rc, stdout.decode("utf-8", errors="replace"), stderr, seconds


def check(case: dict, rc, stdout: str, stderr: str):
    """The problems of one run (empty when it passes)."""
    problems = []
    expected_exit = case["expect_exit"]
    if rc != expected_exit:
        problems.append(f"exit {rc}, expected {expected_exit}; stderr: {stderr.strip()[:500]}")
    if expected_exit == 0:
        try:
            expected = read_jsonl(os.path.join(case["dir"], case["expected"]))
        except (OSError, ValueError) as exc:
            return problems + [f"expected output unreadable: {exc}"]
        diff = json_difference(expected, stdout) if case.get("format") == "json" \
            else jsonl_difference(expected, stdout)
        if diff:
            problems.append(diff)
    elif rc is not None:
        diff = error_difference(case, stdout, stderr)
        if diff:
            problems.append(diff)
    return problems


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--examples", default=DEFAULT_EXAMPLES)
    parser.add_argument("--jobs", type=int, default=4, help="tool runs in parallel")
    parser.add_argument("cases", nargs="*", help="only these case names")
    args = parser.parse_args()

    cases = load_cases(args.fixtures, args.examples)
    if args.cases:
        unknown = set(args.cases) - {c["name"] for c in cases}
        if unknown:
            print(f"unknown cases: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        cases = [c for c in cases if c["name"] in args.cases]

    def check_run(case, result):
        rc, stdout, stderr, seconds = result
        return check(case, rc, stdout, stderr), f"{seconds:.2f} s"

    return run_cases(cases, lambda case: run_tool(args.binary, case), check_run, args.jobs)

if __name__ == "__main__":
    sys.exit(main())
