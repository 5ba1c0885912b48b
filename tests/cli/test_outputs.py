#!/usr/bin/python3
"""What any command writes: -o, outputs that would overwrite an input (-o, --save, a loaded
library) refused, unwritable outputs, failed writes that leave no partial file (-o,
stdout, --save), a closed pipe, running out of memory, and terminal output free of the
control bytes its inputs carry.

usage: test_outputs.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

import cli_common
from cli_common import (ARGS, assert_clean_error, assert_equal, fixture, golden, run, sha256, test,
                        torch_test)


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
        assert_clean_error(p, 2, "is an input of this command .*; refusing to overwrite it")
        assert sha256(archive) == before


@test
def unwritable_output_is_an_error():
    p = run("inspect-model", fixture("convnet.pt"), "-o", "/nonexistent-dir/x.jsonl")
    assert_clean_error(p, 1, r"/nonexistent-dir/x\.jsonl: cannot write")


@test
def failed_writes_are_errors_and_leave_no_partial_file():
    # a full device: stdout and -o; diff's status for trouble is 2, as diff(1)'s
    p = subprocess.run(f"'{ARGS.binary}' model '{fixture('convnet.pt')}' > /dev/full", shell=True,
                       capture_output=True, text=True)
    assert_clean_error(p, 1, r"^vin-inspect: error: standard output: write failed: No space left")
    assert_clean_error(run("model", fixture("convnet.pt"), "-o", "/dev/full"), 1,
                       r"/dev/full: write failed: No space left on device")
    assert_clean_error(run("diff", fixture("convnet.pt"), fixture("deep.pt"), "-o", "/dev/full"), 2,
                       r"/dev/full: write failed: No space left on device")
    # a write that fails halfway (the file size limit): the old file stays, no temporary is left
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "records.jsonl")
        with open(out, "w") as f:
            f.write("old\n")

        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

        p = subprocess.run([ARGS.binary, "model", fixture("wide.pt"), "-o", out],
                           capture_output=True, text=True, preexec_fn=small_files)
        assert_clean_error(p, 1, r"records\.jsonl: write failed: File too large")
        assert open(out).read() == "old\n"
        assert os.listdir(tmp) == ["records.jsonl"], os.listdir(tmp)
        # and a complete write replaces it, keeping its permissions
        os.chmod(out, 0o640)
        assert run("model", fixture("convnet.pt"), "-o", out).returncode == 0
        assert os.stat(out).st_mode & 0o777 == 0o640
        assert open(out).read() == run("model", fixture("convnet.pt")).stdout


def closed_pipe_run(*args):
    """The tool with SIGPIPE ignored (as some CI runners and Python programs have it) writing to
    a pipe whose reader is gone: every write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([ARGS.binary, *args], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120,
                              preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    finally:
        os.close(write)


@test
def a_closed_pipe_is_a_failed_write_named_by_every_command():
    # the output is incomplete: never exit 0, and (issue 64) never a silent exit either: the
    # message names what was being written, as coreutils' do
    p = subprocess.Popen([ARGS.binary, "model", fixture("wide.pt")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    p.stdout.readline()
    p.stdout.close()
    assert p.wait(timeout=60) == 1
    assert p.stderr.read() == b"vin-inspect: error: standard output: write failed: Broken pipe\n"
    commands = [(1, ["--help"]), (1, ["--version"]), (1, ["inspect-model", "--help"]),
                (1, ["inspect-model", fixture("convnet.pt")]),
                (1, ["inspect-config", os.path.join(ARGS.source, "configs", "net.yaml")]),
                (2, ["diff", fixture("convnet.pt"), fixture("deep.pt")])]
    if not ARGS.no_torch:
        shape = ["--shape", "images=1x3x8x8"]
        commands += [(1, ["capture", fixture("convnet.pt"), *shape]),
                     (1, ["profile", fixture("convnet.pt"), *shape, "--warmup", "0", "--runs", "1"]),
                     (2, ["compare", fixture("convnet.pt"), fixture("convnet.pt"), *shape])]
    for status, args in commands:
        p = closed_pipe_run(*args)
        assert p.returncode == status, (args, p.returncode, p.stderr)
        # profile's --warmup 0 warning may come first; the error is the last line
        assert p.stderr.endswith(
            "vin-inspect: error: standard output: write failed: Broken pipe\n"), (args, p.stderr)
    for args in (["--help"], ["--version"], ["diff", "--help"]):
        p = subprocess.run([ARGS.binary, *args], stdout=open("/dev/full", "w"),
                           stderr=subprocess.PIPE, text=True, timeout=60)
        assert (p.returncode, p.stderr) == (
            1, "vin-inspect: error: standard output: write failed: No space left on device\n"), (
            args, p.returncode, p.stderr)


@test
def running_out_of_memory_names_the_file_and_the_stage():
    if "ASAN_OPTIONS" in os.environ:
        print("  (skipped: AddressSanitizer reserves its own address space)")
        return
    # a shrinking address space: below some size the archive no longer fits; the message says
    # which file and what the tool was doing, never just "out of memory"
    # malloc as a user has it: scripts/test.sh's GLIBC_TUNABLES pad each heap extension by
    # 64 MiB, so under a small address space every malloc fails before main
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    named = 0
    for mib in range(8, 80, 4):
        def limit(mib=mib):
            resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
        p = subprocess.run([ARGS.binary, "model", fixture("wide.pt")], capture_output=True,
                           text=True, preexec_fn=limit, env=env)
        if p.returncode == 0:
            break
        if not p.stderr.startswith("vin-inspect:"):
            continue  # too small for the program to start at all
        assert_clean_error(p, 1, r"wide\.pt: out of memory while reading the archive's structure$")
        named += 1
    assert named > 0 and p.returncode == 0, (named, p.returncode, p.stderr)


@test
def terminal_output_never_carries_control_bytes_from_inputs():
    # names and values from a file reach --format table and stderr escaped (issue 26): an OSC
    # sequence, BEL, a newline and a byte that is not UTF-8 in a key
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "esc.yaml")
        with open(config, "wb") as f:
            f.write(b'model: !vin.M\n  "a\\e]0;pwned\\aname\\nforged\\xff": 1\n')
        p = subprocess.run([ARGS.binary, "inspect-config", config, "--format", "table"],
                           capture_output=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert not any(b < 0x20 and b != 0x0A for b in p.stdout), p.stdout
        assert p.stdout.decode("utf-8")  # valid UTF-8 throughout
        assert b"a\\x1b]0;pwned\\x07name\\x0aforged" in p.stdout, p.stdout
        # a file name holding a newline stays on the error's one line
        forged = os.path.join(tmp, "bad\nvin-inspect: error: forged.pt")
        p = run("inspect-model", forged)
        assert_clean_error(p, 1, r"bad\\x0avin-inspect: error: forged\.pt: no such file")
        assert len(p.stderr.splitlines()) == 1, p.stderr


@torch_test
def a_save_that_fails_leaves_no_file_and_exits_1():
    args = ["capture", fixture("everything.pt"), "--inputs", fixture("inputs/everything_positional.npz")]
    if os.access("/dev/full", os.W_OK):
        p = run(*args, "--save", "/dev/full")
        assert_clean_error(p, 1, r"/dev/full: write failed: No space left on device")
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "big.npz")
        # a file size limit that the .npz passes halfway: the write fails, nothing is left
        def small_files():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))
        p = subprocess.run([ARGS.binary, *args, "--save", target], capture_output=True, text=True,
                           preexec_fn=small_files)
        assert p.returncode == 1 and "big.npz: write failed: File too large" in p.stderr, p.stderr
        assert os.listdir(tmp) == [], os.listdir(tmp)
        p = run(*args, "--save", fixture("everything.pt"))
        assert_clean_error(p, 2, r"--save .*everything\.pt is an input of this command")


@torch_test
def capture_output_onto_an_inputs_file_is_refused():
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "in.npz")
        shutil.copy(fixture("inputs/everything_positional.npz"), inputs)
        before = sha256(inputs)
        p = run("capture", fixture("everything.pt"), "--inputs", inputs, "-o", inputs)
        assert_clean_error(p, 2, "is an input of this command .*; refusing to overwrite it")
        assert sha256(inputs) == before
        # a library it loads is an input too, for -o and --save alike (issue 26)
        library = os.path.join(tmp, "libops.so")
        with open(library, "wb") as f:  # refused before anything is loaded
            f.write(b"\x7fELF: not a library, never loaded")
        before = sha256(library)
        for flag in ("-o", "--save"):
            p = run("capture", fixture("everything.pt"), "--inputs", inputs, "--load-library",
                    library, flag, library)
            assert_clean_error(p, 2, re.escape(library) + " is an input of this command")
            assert sha256(library) == before
        # -o and --save naming one file that does not exist yet
        both = os.path.join(tmp, "out.npz")
        p = run("capture", fixture("everything.pt"), "--inputs", inputs, "-o", both, "--save",
                both)
        assert_clean_error(p, 2, "--output and --save name the same file")
        assert not os.path.exists(both)
        # --save onto standard output while the records go there
        p = run("capture", fixture("everything.pt"), "--inputs", inputs, "--save", "/dev/stdout")
        assert_clean_error(p, 2, "--save /dev/stdout is standard output, where the records go")


# --- outputs planned once (contract 9.1): every output against the inputs and each other, before
# anything runs; a failed command leaves none of its new files -------------------------------

def leftovers(folder):
    """The staging files a command left in `folder` (it must leave none)."""
    return [n for n in os.listdir(folder) if ".vin-inspect-" in n]


@torch_test
def an_output_spelled_as_another_output_or_an_input_is_refused_before_anything_runs():
    with tempfile.TemporaryDirectory() as tmp:
        inputs = os.path.join(tmp, "in.npz")
        shutil.copy(fixture("inputs/everything_positional.npz"), inputs)
        before = sha256(inputs)
        archive = fixture("everything.pt")
        # X does not exist yet: -o ./X and --save X are one file however spelled
        for command, option in (("capture", "--save"), ("profile", "--trace")):
            p = run(command, archive, "--inputs", "in.npz", option, "X", "-o", "./X", cwd=tmp)
            assert_clean_error(p, 2, r"name the same file")
            assert not os.path.exists(os.path.join(tmp, "X")), os.listdir(tmp)
            # the same through a folder and back, and as an absolute path
            p = run(command, archive, "--inputs", inputs, option, os.path.join(tmp, "X"), "-o",
                    os.path.join(tmp, "sub", "..", "X"))
            assert p.returncode == 2, p.stderr
            # onto the inputs file, through a symbolic link to it
            link = os.path.join(tmp, "link.npz")
            if not os.path.lexists(link):
                os.symlink(inputs, link)
            p = run(command, archive, "--inputs", inputs, option, link)
            assert_clean_error(p, 2, r"is an input of this command")
            assert sha256(inputs) == before
            assert leftovers(tmp) == [], leftovers(tmp)
        # the records onto a diff side, an inspected archive, a configuration
        shutil.copy(fixture("convnet.pt"), os.path.join(tmp, "net.pt"))
        for args in (["diff", "net.pt", "in.npz", "-o", "./net.pt"],
                     ["inspect-model", "net.pt", "-o", os.path.join(tmp, ".", "net.pt")]):
            p = run(*args, cwd=tmp)
            assert_clean_error(p, 2, r"is an input of this command")


@torch_test
def standard_output_takes_one_output_and_an_empty_name_is_an_error():
    archive = fixture("everything.pt")
    inputs = fixture("inputs/everything_positional.npz")
    # the records go to stdout: a second output there would mix with them
    p = run("profile", archive, "--inputs", inputs, "--trace", "-")
    assert_clean_error(p, 2, r"--trace - is standard output, where the records go")
    p = run("capture", archive, "--inputs", inputs, "--save", "-")
    assert_clean_error(p, 2, r"--save - is standard output, where the records go")
    p = run("profile", archive, "--inputs", inputs, "--trace", "-", "-o", "-")
    assert_clean_error(p, 2, r"both go to standard output")
    # an empty name is never "no file": a variable that expanded to nothing
    for command, option in (("profile", "--trace"), ("capture", "--save"),
                            ("capture", "-o"), ("profile", "--output")):
        p = run(command, archive, "--inputs", inputs, option, "")
        assert_clean_error(p, 2, r"an empty file name")
    p = run("inspect-model", archive, "-o", "")
    assert_clean_error(p, 2, r"-o: an empty file name|--output: an empty file name")
    # the trace on stdout, the records in a file: allowed
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "records.jsonl")
        p = run("profile", archive, "--inputs", inputs, "--runs", "1", "--warmup", "0",
                "--trace", "-", "-o", out)
        assert p.returncode == 0, p.stderr
        trace = json.loads(p.stdout)
        assert trace["traceEvents"], trace
        assert open(out).read().splitlines()[-1].startswith('{"record": "ProfileSummary"')


@torch_test
def a_failed_command_leaves_none_of_its_new_files_and_the_old_ones_as_they_were():
    archive = fixture("everything.pt")
    inputs = fixture("inputs/everything_positional.npz")
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.json")
        saved = os.path.join(tmp, "acts.npz")
        # the records cannot be written: the trace and the saved tensors go too
        p = run("profile", archive, "--inputs", inputs, "--runs", "1", "--trace", trace,
                "-o", "/dev/full")
        assert p.returncode == 1 and "/dev/full" in p.stderr, p.stderr
        p = run("capture", archive, "--inputs", inputs, "--save", saved, "-o", "/dev/full")
        assert p.returncode == 1 and "/dev/full" in p.stderr, p.stderr
        assert os.listdir(tmp) == [], os.listdir(tmp)
        # files that existed stay as they were
        for path in (trace, saved):
            with open(path, "w") as f:
                f.write("old\n")
        p = run("profile", archive, "--inputs", inputs, "--runs", "1", "--trace", trace,
                "-o", "/dev/full")
        assert p.returncode == 1 and open(trace).read() == "old\n"
        p = run("capture", archive, "--inputs", inputs, "--save", saved, "-o", "/dev/full")
        assert p.returncode == 1 and open(saved).read() == "old\n"
        assert sorted(os.listdir(tmp)) == ["acts.npz", "t.json"], os.listdir(tmp)
        # a folder that does not exist, or a folder as the file: before anything runs
        p = run("profile", archive, "--inputs", inputs, "--trace", os.path.join(tmp, "no", "t.json"))
        assert_clean_error(p, 1, r"no/t\.json: cannot write: No such file or directory")
        p = run("capture", archive, "--inputs", inputs, "--save", tmp)
        assert_clean_error(p, 1, re.escape(tmp) + r": cannot write: Is a directory")
        # a forward that raises: the records so far on stdout, but a file output is not left
        out = os.path.join(tmp, "records.jsonl")
        p = run("capture", fixture("everything.pt"), "--shape", "x=3x3", "--shape", "tokens=2",
                "-o", out)
        assert p.returncode != 0 and not os.path.exists(out), (p.returncode, p.stderr)
        assert leftovers(tmp) == [], leftovers(tmp)


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
