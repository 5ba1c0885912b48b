"""What the end-to-end tests of the vin-inspect command line share (tests/cli/test_*.py, one
file per subcommand or concern, each its own CTest entry cli_*): the options every file takes,
running the binary, the checks of its output and errors, and main(), which runs one file's tests
and then checks that no file handed to the tool changed.

usage of each file: test_X.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import argparse
import hashlib
import os
import re
import shlex
import subprocess
import sys
import time
import traceback

# main() parses the command line into this one object, so that each test file's
# `from cli_common import ARGS` sees the values (once main has run)
ARGS = argparse.Namespace()
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
# the tests of the one test file run, in the order its decorators registered them
TESTS = []
# every file a test hands to the tool, with its checksum before the run: none may change
INPUT_CHECKSUMS = {}


def test(fn):
    TESTS.append(fn)
    return fn


def torch_test(fn):
    """A test of what needs LibTorch (capture, --load-with-libtorch): skipped by a build without
    it (--no-torch), which without_libtorch_capture_is_a_usage_error checks instead."""
    fn.needs_torch = True
    return test(fn)


def fixture(name):
    return os.path.join(ARGS.fixtures, name)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def run(*args, cwd=None):
    for a in args:
        if isinstance(a, str) and os.path.isfile(a) and a not in INPUT_CHECKSUMS:
            INPUT_CHECKSUMS[a] = sha256(a)
    return subprocess.run([ARGS.binary, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def run_script(folder, name, source, *args):
    """Writes the Python `source` to FOLDER/NAME and runs it with this Python and `args`
    (TorchScript reads a scripted class's source from its file, so it cannot run from -c)."""
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(source)
    subprocess.run([sys.executable, path, *args], check=True)


def model_source(name):
    """The text of tests/cli/models/NAME: a Python script a test writes to its temporary folder
    and runs with run_script (or hands to `python3 -c`)."""
    with open(os.path.join(MODELS, name)) as f:
        return f.read()


def golden(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return f.read()


def assert_equal(got, expected, what="output"):
    if got != expected:
        raise AssertionError(f"{what} differs:\n--- expected\n{expected}\n--- got\n{got}")


def assert_clean_error(p, status, pattern):
    """Exit `status`, nothing on stdout, one or two lines on stderr matching `pattern`."""
    assert p.returncode == status, f"exit {p.returncode}, expected {status}; stderr: {p.stderr}"
    assert p.stdout == "", f"stdout not empty: {p.stdout!r}"
    lines = p.stderr.rstrip("\n").split("\n")
    assert 1 <= len(lines) <= 2, f"expected a one- or two-line message, got: {p.stderr!r}"
    assert lines[0].startswith("vin-inspect: error: "), p.stderr
    assert re.search(pattern, p.stderr), f"{pattern!r} not in {p.stderr!r}"
    for banned in ("Exception raised from", "frame #", "terminate called", "Traceback"):
        assert banned not in p.stderr, f"backtrace-like text in: {p.stderr}"


def shared_examples():
    """../shared/docs/examples beside the checkout, or None (and a skip line) when absent."""
    examples = os.path.join(ARGS.source, "..", "shared", "docs", "examples")
    if not os.path.isdir(examples):
        print("  (skipped: no ../shared/docs/examples beside the checkout)")
        return None
    return examples


def run_with_pipes(*args):
    """The binary with each argument written `<(FILE)` read through bash's process substitution
    (a pipe, readable once, as files fed from ssh or curl are); stdout with the pipes' /dev/fd
    names put back to the files they carried."""
    words, files = [], []
    for a in args:
        if a.startswith("<(") and a.endswith(")"):
            files.append(a[2:-1])
            words.append(f'<(cat "${{{len(files)}}}")')
        else:
            words.append(shlex.quote(a))
    script = '"$0" ' + " ".join(words)
    p = subprocess.run(["bash", "-c", script, ARGS.binary, *files], capture_output=True,
                       text=True, timeout=120)
    return p


def same_but_file_names(piped, plain):
    """Equal once every file name in them (a pipe's /dev/fd/N, a fixture's path) reads FILE."""
    names = re.compile(r"/dev/fd/\d+|(?<=\")/[^\"]*\.(yaml|pt|npz|jsonl)(?=\")")
    return names.sub("FILE", piped) == names.sub("FILE", plain)


def inputs_are_never_modified():
    # runs last: every file handed to the tool above must be byte-for-byte as before
    assert INPUT_CHECKSUMS, "no inputs recorded"
    for path, digest in INPUT_CHECKSUMS.items():
        if os.path.exists(path):
            assert sha256(path) == digest, f"{path} changed"


def run_one(fn):
    """Runs one test, printing PASS or FAIL with its seconds (a CI log shows where a suite's
    time goes) and a failure's traceback; True when it passed."""
    start = time.monotonic()
    try:
        fn()
        print(f"PASS {fn.__name__} ({time.monotonic() - start:.1f} s)")
        return True
    except Exception:  # noqa: BLE001 - report every failure, keep going
        print(f"FAIL {fn.__name__} ({time.monotonic() - start:.1f} s)")
        print("  " + traceback.format_exc().strip().replace("\n", "\n  "))
        return False


def main(tests):
    """Runs `tests` (one file's, in the order they were registered), or those of them named on
    the command line, then always inputs_are_never_modified; the exit status for sys.exit."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--no-torch", action="store_true", help="the binary was built without LibTorch")
    parser.add_argument("tests", nargs="*", help="run only these tests (default: all)")
    parser.parse_args(namespace=ARGS)
    ARGS.binary = os.path.abspath(ARGS.binary)
    ARGS.fixtures = os.path.abspath(ARGS.fixtures)
    ARGS.source = os.path.abspath(ARGS.source)
    names = [fn.__name__ for fn in tests]
    unknown = [t for t in ARGS.tests if t not in names and t != inputs_are_never_modified.__name__]
    if unknown:
        parser.error(f"no test {', '.join(unknown)} in this file; its tests: {', '.join(names)}")
    passed = failed = 0
    for fn in tests:
        if ARGS.tests and fn.__name__ not in ARGS.tests:
            continue
        if ARGS.no_torch and getattr(fn, "needs_torch", False):
            print(f"SKIP {fn.__name__} (built without LibTorch)")
            continue
        if run_one(fn):
            passed += 1
        else:
            failed += 1
    # last, whichever tests ran: nothing they handed to the tool changed
    if passed + failed == 0:
        print(f"SKIP {inputs_are_never_modified.__name__} (no test ran)")
    elif ARGS.tests and not INPUT_CHECKSUMS:
        print(f"SKIP {inputs_are_never_modified.__name__} (the tests named handed the tool no file)")
    elif run_one(inputs_are_never_modified):
        passed += 1
    else:
        failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
