#!/usr/bin/python3
"""Feeds every file of the hostile corpus (tests/hostile, made by scripts/make_hostile_corpus.py)
to the reader it targets and checks the tool refuses it cleanly: the expected exit status, nothing
on stdout, a one- or two-line message naming the file, no backtrace, within a time and address
space limit, the file unchanged, and no code from a pickle run.

usage: run_hostile.py --binary PATH --fixtures DIR [--jobs N]
"""
import argparse
import concurrent.futures
import hashlib
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SECONDS = 30
ADDRESS_SPACE = 8 << 30  # LibTorch alone maps a few GiB of address space
PWNED = "/tmp/vin-hostile-pwned"


def limits():
    # AddressSanitizer reserves terabytes of shadow address space: under it (ASAN_OPTIONS set,
    # scripts/test_sanitizers.sh) the memory bound is ASan's own, not RLIMIT_AS
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# archives damaged only in records that inspect-model does not read (it reads the zip directory,
# data.pkl and code/ headers): it may describe them; capture, which must load them, refuses them
STRUCTURE_READABLE = {"debug_pkl_length_huge.pt"}


def commands(folder, path, fixtures):
    model = os.path.join(fixtures, "convnet.pt")
    if folder == "archive":
        if os.path.basename(path) in STRUCTURE_READABLE:
            return [(["capture", path, "--inputs", path], 1)]
        return [(["inspect-model", path], 1), (["inspect-config", path], 1),
                (["capture", path, "--inputs", path], 1), (["diff", path, path], 2)]
    if folder == "inputs":
        return [(["capture", model, "--inputs", path], 1)]
    if folder == "yaml":
        return [(["inspect-config", path], 1), (["diff", path, path], 2)]
    if folder == "records":
        return [(["diff", path, path], 2)]
    raise ValueError(folder)


def check(binary, args, status, path):
    before = hashlib.sha256(open(path, "rb").read()).hexdigest()
    start = time.monotonic()
    try:
        p = subprocess.run([binary, *args], capture_output=True, timeout=SECONDS, preexec_fn=limits)
    except subprocess.TimeoutExpired:
        return f"no answer within {SECONDS} s"
    elapsed = time.monotonic() - start
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != status:
        return f"exit {p.returncode}, expected {status}: {err.strip()[:300]}"
    if p.stdout:
        return f"stdout not empty: {p.stdout[:200]!r}"
    lines = err.rstrip("\n").split("\n")
    if not 1 <= len(lines) <= 2 or not lines[0].startswith("vin-inspect: error: "):
        return f"not a one-line error: {err[:400]!r}"
    if os.path.basename(path) not in lines[0] and "cannot compare" not in lines[0]:
        return f"the message does not name the file: {lines[0]}"
    for banned in ("Exception raised from", "frame #", "terminate called", "Traceback", "Aborted"):
        if banned in err:
            return f"backtrace-like text: {err[:300]}"
    if hashlib.sha256(open(path, "rb").read()).hexdigest() != before:
        return "the input file changed"
    if elapsed > SECONDS / 2:
        return f"took {elapsed:.1f} s"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if os.path.exists(PWNED):
        os.remove(PWNED)
    runs = []
    for folder in sorted(d for d in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, d))):
        for name in sorted(os.listdir(os.path.join(HERE, folder))):
            path = os.path.join(HERE, folder, name)
            for cmd, status in commands(folder, path, os.path.abspath(args.fixtures)):
                runs.append((f"{folder}/{name}: {cmd[0]}", cmd, status, path))
    binary = os.path.abspath(args.binary)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        problems = list(pool.map(lambda r: check(binary, r[1], r[2], r[3]), runs))
    passed = failed = 0
    for (label, _, _, _), problem in zip(runs, problems):
        if problem:
            failed += 1
            print(f"FAIL {label}: {problem}")
        else:
            passed += 1
            print(f"PASS {label}")
    if os.path.exists(PWNED):
        failed += 1
        print("FAIL a pickle ran code: " + PWNED + " exists")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
