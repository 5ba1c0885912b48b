#!/usr/bin/python3
"""Feeds every file of the hostile corpus (tests/hostile, made by tests/fixtures/make_hostile_corpus.py)
and of the attack corpus (made at test time by tests/hostile/make_attacks.py, with a manifest) to
the readers it targets and checks the tool handles it cleanly: the expected exit status, nothing
on stdout (or, for files that are harmless read as data, well-formed records), a one- or
two-line message naming the file, no backtrace, within 30 s, a 4 GiB address space and a 1 MiB
stack (so that recursion an input controls fails here first), the file unchanged, no file
created by code inside an input, and no code from a pickle run.

Besides errors, the manifest holds runs that must succeed in a given way ("records": that exit
status and records only on stdout, holding given text; "repeatable": the same, and a second run
prints the same bytes) and usage errors ("usage": exit 2, one line naming the option, not the
file); a run with "stream" feeds its file through a pipe, again and again, up to a GiB.

usage: run_hostile.py --binary PATH --fixtures DIR [--attacks DIR] [--jobs N] [--no-torch]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SECONDS = 30
ADDRESS_SPACE = 4 << 30  # LibTorch itself maps about 2 GiB of address space
STACK = 1 << 20
PWNED = "/tmp/vin-hostile-pwned"


def limits():
    resource.setrlimit(resource.RLIMIT_STACK, (STACK, STACK))
    # AddressSanitizer reserves terabytes of shadow address space: under it (ASAN_OPTIONS set,
    # scripts/test_sanitizers.sh) the memory bound is ASan's own, not RLIMIT_AS
    if "ASAN_OPTIONS" not in os.environ:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


# archives damaged only in records that inspect-model does not read (it reads the zip directory,
# data.pkl and code/ headers): it may describe them; capture, which must load them, refuses them
STRUCTURE_READABLE = {"debug_pkl_length_huge.pt"}
# a torch.save state dict among the archives: inspect-model and diff describe it as a weights
# file (contract 11); the commands that want an archive or a configuration refuse it
WEIGHTS_FILES = {"state_dict.pt"}


def commands(folder, path, fixtures):
    model = os.path.join(fixtures, "convnet.pt")
    if folder == "archive":
        if os.path.basename(path) in STRUCTURE_READABLE:
            return [(["capture", path, "--inputs", path], 1)]
        if os.path.basename(path) in WEIGHTS_FILES:
            return [(["inspect-model", path], 0, "safe"), (["inspect-model", path, "--all"], 0, "safe"),
                    (["inspect-config", path], 1), (["capture", path, "--inputs", path], 1),
                    (["diff", path, path], 0, "safe")]
        return [(["inspect-model", path], 1), (["inspect-model", path, "--all"], 1),
                (["inspect-config", path], 1),
                (["capture", path, "--inputs", path], 1), (["diff", path, path], 2)]
    if folder == "inputs":
        return [(["capture", model, "--inputs", path], 1)]
    if folder == "yaml":
        return [(["inspect-config", path], 1), (["diff", path, path], 2)]
    if folder == "records":
        return [(["diff", path, path], 2)]
    if folder == "weights":
        return [(["inspect-model", path], 1), (["inspect-model", path, "--tensors"], 1),
                (["diff", path, path], 2)]
    if folder == "scan_published":
        # other scanners' test files (scan's verdicts: cli_scan): read as data, they are
        # described or refused cleanly, and nothing in them runs
        if path.endswith((".md", ".tsv")):
            return []
        return [(["inspect-model", path, "--all"], 0, "safe")]
    raise ValueError(folder)


def attack_runs(folder, fixtures):
    """The attack corpus: (label, args, expectation, status, path, stderr_has) from its
    manifest."""
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    model = os.path.join(fixtures, "convnet.pt")
    single = os.path.join(fixtures, "inputs", "single.npy")
    runs = []
    for entry in manifest["files"]:
        path = os.path.join(folder, entry["file"])
        for run in entry["runs"]:
            args = [a.replace("{file}", path).replace("{dir}", folder).replace("{model}", model)
                    .replace("{input}", single) for a in run["args"]]
            flags = [a for a in run["args"] if a.startswith("--") and a != "--inputs"]
            runs.append((f"attacks/{entry['file']}: {' '.join(run['args'][:1] + flags)}",
                         args, run["expect"], run["status"], path, run.get("stderr_has"),
                         run.get("stdout_has"), run.get("stream", False)))
    return runs, manifest["never_created"]


def records_only(stdout, summaries=("ModelMetadata", "DiffSummary")):
    """Whether stdout is jsonl records and nothing else (code inside an input printed nothing),
    at most one of `summaries` among them."""
    try:
        lines = [json.loads(l) for l in stdout.decode().splitlines()]
    except (ValueError, UnicodeDecodeError):
        return False
    return bool(lines) and all(isinstance(l, dict) and "record" in l for l in lines) and \
        (summaries is None or sum(l["record"] in summaries for l in lines) <= 1)


def feed(pipe, path, total=1 << 30):
    """Writes the file into `pipe` again and again, `total` bytes in all or until the reader
    closes it (a stream refused from its first bytes is not read to its end)."""
    data = open(path, "rb").read()
    try:
        for _ in range(max(1, total // max(1, len(data)))):
            pipe.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def run_once(binary, args, path, stream):
    if not stream:
        return subprocess.run([binary, *args], capture_output=True, timeout=SECONDS,
                              preexec_fn=limits)
    # stdout and stderr into files: communicate() would close the pipe the feeder writes to
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([binary, *args], stdin=subprocess.PIPE, stdout=out, stderr=err,
                             preexec_fn=limits)
        writer = threading.Thread(target=feed, args=(p.stdin, path), daemon=True)
        writer.start()
        try:
            p.wait(timeout=SECONDS)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            raise
        finally:
            writer.join(timeout=5)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(p.args, p.returncode, out.read(), err.read())


def check(binary, args, status, path, expect="error", stderr_has=None, stdout_has=None,
          stream=False):
    before = hashlib.sha256(open(path, "rb").read()).hexdigest()
    start = time.monotonic()
    try:
        p = run_once(binary, args, path, stream)
    except subprocess.TimeoutExpired:
        return f"no answer within {SECONDS} s"
    elapsed = time.monotonic() - start
    err = p.stderr.decode("utf-8", "replace")
    if hashlib.sha256(open(path, "rb").read()).hexdigest() != before:
        return "the input file changed"
    if elapsed > SECONDS / 2:
        return f"took {elapsed:.1f} s"
    if expect in ("records", "repeatable"):
        # it must work: the exit status, records only, the text they must hold
        if p.returncode != status:
            return f"exit {p.returncode}, expected {status}: {err.strip()[:300]}"
        if not records_only(p.stdout, summaries=None):
            return f"stdout is not records only: {p.stdout[:300]!r}"
        if stdout_has is not None and stdout_has.encode() not in p.stdout:
            return f"{stdout_has!r} not in the records: {p.stdout[:400]!r}"
        if expect == "repeatable" and run_once(binary, args, path, stream).stdout != p.stdout:
            return "a second run printed other records"
        return None
    if expect == "safe" and p.returncode == 0:
        # read as data: records on stdout, and nothing else
        if not records_only(p.stdout):
            return f"stdout is not records only: {p.stdout[:300]!r}"
        return None
    if expect == "safe":  # or a clean refusal
        status = 2 if args[0] == "diff" else 1
    if p.returncode != status:
        return f"exit {p.returncode}, expected {status}: {err.strip()[:300]}"
    if expect == "forward_error":
        # a forward that raised: the records so far may precede the error (docs/capture.md)
        if p.stdout and not records_only(p.stdout):
            return f"stdout is not records only: {p.stdout[:300]!r}"
    elif p.stdout:
        return f"stdout not empty: {p.stdout[:200]!r}"
    if stderr_has is not None and stderr_has not in err:
        return f"{stderr_has!r} not in the error: {err[:400]!r}"
    lines = err.rstrip("\n").split("\n")
    if not 1 <= len(lines) <= 2 or not lines[0].startswith("vin-inspect: error: "):
        return f"not a one-line error: {err[:400]!r}"
    if expect == "usage":  # an option's value is wrong: the message names the option
        pass
    elif stream:
        if "/dev/stdin" not in lines[0]:
            return f"the message does not name the stream: {lines[0]}"
    elif os.path.basename(path) not in lines[0] and "cannot compare" not in lines[0]:
        return f"the message does not name the file: {lines[0]}"
    for banned in ("Exception raised from", "frame #", "terminate called", "Traceback", "Aborted"):
        if banned in err:
            return f"backtrace-like text: {err[:300]}"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--attacks", help="where make_attacks.py writes the attack corpus")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-torch", action="store_true",
                        help="the binary was built without LibTorch: capture runs are left out")
    args = parser.parse_args()
    runs = []
    for folder in sorted(d for d in os.listdir(HERE)
                         if os.path.isdir(os.path.join(HERE, d)) and d != "__pycache__"):
        for name in sorted(os.listdir(os.path.join(HERE, folder))):
            path = os.path.join(HERE, folder, name)
            for cmd, status, *expect in commands(folder, path, os.path.abspath(args.fixtures)):
                runs.append((f"{folder}/{name}: {cmd[0]}", cmd, (expect or ["error"])[0], status,
                             path, None, None, False))
    never_created = [PWNED]
    if args.attacks:
        subprocess.run([sys.executable, os.path.join(HERE, "make_attacks.py"), args.attacks],
                       check=True, stdout=subprocess.DEVNULL)
        attacks, created = attack_runs(args.attacks, os.path.abspath(args.fixtures))
        runs += attacks
        never_created += created
    for path in never_created:
        if os.path.exists(path):
            os.remove(path)
    if args.no_torch:
        runs = [r for r in runs if r[1][0] not in ("capture", "profile", "compare")]
    binary = os.path.abspath(args.binary)
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        problems = list(pool.map(lambda r: check(binary, r[1], r[3], r[4], r[2], *r[5:]), runs))
    passed = failed = 0
    for (label, *_), problem in zip(runs, problems):
        label = label.encode("utf-8", "backslashreplace").decode()  # names that are not UTF-8
        if problem:
            failed += 1
            print(f"FAIL {label}: {problem}")
        else:
            passed += 1
            print(f"PASS {label}")
    for path in never_created:
        if os.path.exists(path):
            failed += 1
            print(f"FAIL code inside an input ran: {path} exists")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
