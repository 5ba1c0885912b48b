#!/usr/bin/python3
"""End-to-end tests of the vin-inspect command line: golden outputs, errors, exit statuses, and
the docs (README, man page) in step with --help.

usage: test_cli.py --binary PATH --fixtures DIR --source REPO_ROOT
"""
import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import traceback

ARGS = None
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
TESTS = []
# every file a test hands to the tool, with its checksum before the run: none may change
INPUT_CHECKSUMS = {}


def test(fn):
    TESTS.append(fn)
    return fn


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


# --- inspect-model output ---------------------------------------------------------------------

@test
def jsonl_is_the_default_and_matches_golden():
    p = run("inspect-model", fixture("everything.pt"))
    assert p.returncode == 0, p.stderr
    assert_equal(p.stdout, golden("everything.jsonl"))
    assert p.stderr == "", p.stderr


@test
def json_document_matches_golden():
    p = run("inspect-model", fixture("everything.pt"), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert_equal(p.stdout, golden("everything.json"))


@test
def table_matches_golden():
    p = run("inspect-model", fixture("everything.pt"), "--format", "table")
    assert p.returncode == 0, p.stderr
    assert_equal(p.stdout, golden("everything.table"))


@test
def model_is_an_alias():
    a = run("model", fixture("convnet.pt"))
    b = run("inspect-model", fixture("convnet.pt"))
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout


@test
def table_stays_readable_for_5000_modules():
    p = run("model", fixture("wide.pt"), "--format", "table")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 5054 + 4 + 5, len(lines)  # title, rules, header + modules + 4 totals
    widths = {len(l) for l in lines[1:5054 + 4]}
    assert max(widths) <= 100, max(widths)
    assert re.search(r"^Modules: +5,054$", p.stdout, re.M), p.stdout[-300:]
    assert "      lin  torch.nn.modules.linear.Linear" in p.stdout


@test
def shared_worked_example_is_reproduced():
    examples = os.path.join(ARGS.source, "..", "shared", "docs", "examples")
    if not os.path.isdir(examples):
        print("  (skipped: no ../shared/docs/examples beside the checkout)")
        return
    p = run("inspect-model", "tinynet.pt", cwd=examples)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(examples, "inspect-model.jsonl")) as f:
        assert_equal(p.stdout, f.read())


@test
def output_file_gets_the_records_and_stdout_stays_empty():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "records.jsonl")
        p = run("inspect-model", fixture("everything.pt"), "-o", out)
        assert p.returncode == 0 and p.stdout == "", (p.returncode, p.stdout, p.stderr)
        with open(out) as f:
            assert_equal(f.read(), golden("everything.jsonl"))
        p = run("inspect-model", fixture("everything.pt"), "--output", out, "--format", "table")
        with open(out) as f:
            assert_equal(f.read(), golden("everything.table"))


@test
def output_onto_the_input_is_refused():
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "net.pt")
        shutil.copy(fixture("convnet.pt"), archive)
        before = sha256(archive)
        p = run("inspect-model", archive, "-o", archive)
        assert_clean_error(p, 2, "is an input file; refusing to overwrite it")
        assert sha256(archive) == before


@test
def unwritable_output_is_an_error():
    p = run("inspect-model", fixture("convnet.pt"), "-o", "/nonexistent-dir/x.jsonl")
    assert_clean_error(p, 1, r"/nonexistent-dir/x\.jsonl: cannot write")


# --- bad input: exit 1, one line naming the file ---------------------------------------------

BAD_INPUTS = [
    ("missing.pt", r"missing\.pt: no such file$"),
    ("", r": is a directory, not a TorchScript archive"),  # the fixture directory itself
    ("empty.pt", r"empty\.pt: empty file, not a TorchScript archive"),
    ("text.pt", r"text\.pt: not a zip file, so not a TorchScript archive"),
    ("truncated.pt", r"truncated\.pt: truncated or damaged zip archive"),
    ("plain.zip", r"plain\.zip: a zip archive without data\.pkl, not a PyTorch archive"),
    ("state_dict.pt", r"state_dict\.pt: a torch\.save file \(tensors or a state dict\), not a "
                      r"TorchScript archive; export the model with torch\.jit\.save"),
    ("newer_version.pt", r"newer_version\.pt: archive file format version 99 is newer than "
                         r"LibTorch [0-9.]+ can read \(at most 10\)"),
]


@test
def each_bad_input_gets_a_clear_one_line_error():
    for name, pattern in BAD_INPUTS:
        path = fixture(name) if name else ARGS.fixtures
        p = run("inspect-model", path)
        try:
            assert_clean_error(p, 1, pattern)
            assert p.stderr.startswith(f"vin-inspect: error: {path}"), p.stderr
        except AssertionError as e:
            raise AssertionError(f"{name or 'directory'}: {e}") from None


@test
def a_damaged_member_is_reported_without_a_backtrace():
    with open(fixture("everything.pt"), "rb") as f:
        data = bytearray(f.read())
    # corrupt the stored bytes of data.pkl (stored uncompressed, so the CRC check fails)
    start = data.find(b"everything/data.pklFB")
    assert start > 0
    for i in range(start + 200, start + 260):
        data[i] ^= 0x5A
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bitflip.pt")
        with open(bad, "wb") as f:
            f.write(data)
        p = run("inspect-model", bad)
        assert_clean_error(p, 1, r"bitflip\.pt: LibTorch [0-9.]+ cannot load this archive: ")


@test
def an_unreadable_file_is_reported():
    if os.geteuid() == 0:
        print("  (skipped: root reads every file)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "secret.pt")
        shutil.copy(fixture("convnet.pt"), path)
        os.chmod(path, 0)
        assert_clean_error(run("inspect-model", path), 1, r"secret\.pt: cannot open")


# --- usage errors: exit 2 --------------------------------------------------------------------

@test
def usage_errors_exit_2():
    cases = [
        ((), r"A subcommand is required"),
        (("inspect-model",), r"ARCHIVE is required"),
        (("inspect-model", fixture("convnet.pt"), "--format", "xml"), r"xml"),
        (("--log-level", "loud", "model", fixture("convnet.pt")), r"loud"),
        (("inspect-model", fixture("convnet.pt"), "--bogus"), r"--bogus"),
    ]
    for args, pattern in cases:
        p = run(*args)
        assert p.returncode == 2, f"{args}: exit {p.returncode}"
        assert p.stdout == "", f"{args}: {p.stdout}"
        assert p.stderr.startswith("vin-inspect: error: "), f"{args}: {p.stderr}"
        assert re.search(pattern, p.stderr), f"{args}: {pattern!r} not in {p.stderr!r}"


@test
def a_mistyped_subcommand_gets_a_suggestion():
    p = run("modle", fixture("convnet.pt"))
    assert p.returncode == 2, p.returncode
    assert "unknown subcommand 'modle'; did you mean 'model'?" in p.stderr, p.stderr
    p = run("inspect-modle", fixture("convnet.pt"))
    assert "did you mean 'inspect-model'?" in p.stderr, p.stderr


# --- version, help, logging, docs ------------------------------------------------------------

@test
def version_names_the_tool_and_libtorch():
    p = run("--version")
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"vin-inspect \d+\.\d+\.\d+ \(LibTorch \d+\.\d+\.\d+\)\n", p.stdout), p.stdout


def subcommands_from_help():
    p = run("--help")
    assert p.returncode == 0, p.stderr
    section = p.stdout.split("Subcommands:")[1].split("Examples:")[0]
    return p.stdout, re.findall(r"^  ([a-z-]+)(?:, ([a-z-]+))? ", section, re.M)


@test
def help_lists_each_subcommand_with_an_example():
    text, commands = subcommands_from_help()
    assert commands, text
    for name, alias in commands:
        assert re.search(rf"^  vin-inspect {name} ", text, re.M), f"no example for {name}"
        sub = run(name, "--help")
        assert sub.returncode == 0 and "--format" in sub.stdout and "--output" in sub.stdout, sub.stdout


@test
def readme_and_man_page_cover_every_subcommand_and_option():
    _, commands = subcommands_from_help()
    with open(os.path.join(ARGS.source, "README.md")) as f:
        readme = f.read()
    with open(os.path.join(ARGS.source, "man", "vin-inspect.1")) as f:
        man = f.read().replace("\\-", "-")
    for name, alias in commands:
        for doc, label in ((readme, "README.md"), (man, "man page")):
            assert name in doc and (alias or name) in doc, f"{label} does not mention {name} / {alias}"
    for option in ("--format", "--output", "--log-level", "--version", "--help"):
        assert option in man, f"man page does not mention {option}"
        assert option in readme, f"README does not mention {option}"


@test
def man_page_renders_without_warnings():
    groff = shutil.which("groff")
    if not groff:
        print("  (skipped: groff is not installed)")
        return
    page = os.path.join(ARGS.source, "man", "vin-inspect.1")
    p = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", page], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = subprocess.run([groff, "-man", "-Tutf8", "-P-cbu", page], capture_output=True, text=True)
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES"):
        assert re.search(rf"^{heading}", p.stdout, re.M), f"man page lacks {heading}"


@test
def log_level_debug_goes_to_stderr_only():
    quiet = run("inspect-model", fixture("convnet.pt"))
    loud = run("--log-level", "debug", "inspect-model", fixture("convnet.pt"))
    after = run("inspect-model", fixture("convnet.pt"), "--log-level", "debug")
    assert loud.returncode == 0 and loud.stdout == quiet.stdout
    assert "vin-inspect: debug: inspecting" in loud.stderr, loud.stderr
    assert after.stderr == loud.stderr
    assert quiet.stderr == ""


@test
def inputs_are_never_modified():
    # runs last: every file handed to the tool above must be byte-for-byte as before
    assert INPUT_CHECKSUMS, "no inputs recorded"
    for path, digest in INPUT_CHECKSUMS.items():
        if os.path.exists(path):
            assert sha256(path) == digest, f"{path} changed"


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--source", required=True)
    ARGS = parser.parse_args()
    ARGS.binary = os.path.abspath(ARGS.binary)
    passed = failed = 0
    for fn in TESTS:
        try:
            fn()
            passed += 1
            print(f"PASS {fn.__name__}")
        except Exception:  # noqa: BLE001 - report every failure, keep going
            failed += 1
            print(f"FAIL {fn.__name__}")
            print("  " + traceback.format_exc().strip().replace("\n", "\n  "))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
