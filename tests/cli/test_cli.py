#!/usr/bin/python3
"""End-to-end tests of the vin-inspect command line: golden outputs, errors, exit statuses, and
the docs (README, man page) in step with --help.

usage: test_cli.py --binary PATH --fixtures DIR --source REPO_ROOT
"""
import argparse
import hashlib
import json
import math
import os
import re
import shlex
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

ARGS = None
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
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
def details_flags_add_records_in_every_format():
    archive = fixture("convnet.pt")
    plain = [json.loads(l) for l in run("model", archive).stdout.splitlines()]
    every = run("model", archive, "--all")
    assert every.returncode == 0, every.stderr
    lines = [json.loads(l) for l in every.stdout.splitlines()]
    kinds = [l["record"] for l in lines]
    assert kinds[0] == "ModelMetadata" and kinds[1] == "MethodSignature", kinds[:3]
    assert list(lines[0])[-2:] == ["parameter_bytes", "buffer_bytes"], lines[0]
    # each module line is the plain one plus its attributes, followed by its tensors
    modules = [l for l in lines if l["record"] == "ModuleMetadata"]
    assert [{k: v for k, v in m.items() if k != "attributes"} for m in modules] == plain[1:]
    conv = next(m for m in modules if m["path"] == "stem.0")
    assert conv["attributes"]["kernel_size"] == [3, 3] and conv["attributes"]["in_channels"] == 3
    after_conv = lines[lines.index(conv) + 1]
    assert after_conv["record"] == "TensorMetadata" and after_conv["module_path"] == "stem.0"
    assert after_conv["name"] == "weight" and after_conv["shape"] == [16, 3, 3, 3]
    assert re.fullmatch(r"[0-9a-f]{8}", after_conv["storage_crc32"]), after_conv
    tensors = [l for l in lines if l["record"] == "TensorMetadata"]
    assert sum(t["nbytes"] for t in tensors if t["kind"] == "parameter") == lines[0]["parameter_bytes"]
    # each flag alone adds only its part
    only = {flag: [json.loads(l) for l in run("model", archive, flag).stdout.splitlines()]
            for flag in ("--tensors", "--attributes", "--signature")}
    assert {l["record"] for l in only["--tensors"]} == {"ModelMetadata", "ModuleMetadata", "TensorMetadata"}
    assert all("attributes" not in l for l in only["--tensors"])
    assert all("attributes" in l for l in only["--attributes"] if l["record"] == "ModuleMetadata")
    assert [l["record"] for l in only["--signature"]].count("MethodSignature") == 1
    # json: the same facts in one document
    doc = json.loads(run("model", archive, "--all", "--format", "json").stdout)
    assert list(doc)[:6] == ["model_type", "total_parameters", "trainable_parameters",
                             "parameter_bytes", "buffer_bytes", "methods"], list(doc)
    assert doc["methods"][0]["name"] == "forward"
    assert [t["name"] for t in doc["modules"][3]["tensors"]] == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    # table: tensors under their module, the size in the summary, the signature
    table = run("model", fixture("resnet18.pt"), "--all", "--format", "table").stdout
    assert re.search(r"^Model size: +44\.6 MiB$", table, re.M), table[-600:]
    assert re.search(r"^    - weight +float32\[64, 3, 7, 7\] cpu +9,408 +9,408 +36\.8 KiB", table, re.M)
    assert "kernel_size=[7, 7]" in table and "  forward(x: Tensor) -> Tensor\n" in table


def shared_examples():
    """../shared/docs/examples beside the checkout, or None (and a skip line) when absent."""
    examples = os.path.join(ARGS.source, "..", "shared", "docs", "examples")
    if not os.path.isdir(examples):
        print("  (skipped: no ../shared/docs/examples beside the checkout)")
        return None
    return examples


@test
def shared_worked_example_is_reproduced():
    examples = shared_examples()
    if examples is None:
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


@test
def a_closed_pipe_ends_quietly_with_a_failure_status():
    # SIGPIPE ignored (as some CI runners do): EPIPE ends the tool without a message, not exit 0
    p = subprocess.Popen([ARGS.binary, "model", fixture("wide.pt")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    p.stdout.readline()
    p.stdout.close()
    assert p.wait(timeout=60) == 1
    assert p.stderr.read() == b""


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


@torch_test
def structure_of_an_archive_libtorch_cannot_load_is_still_described():
    # written by a "newer PyTorch" (format version 99): inspect-model reads the archive itself;
    # capture, which must run it, says why LibTorch cannot
    p = run("inspect-model", fixture("newer_version.pt"))
    assert p.returncode == 0 and not p.stderr, p.stderr
    first = json.loads(p.stdout.splitlines()[0])
    assert first["record"] == "ModelMetadata" and first["model_type"] == "fixture_models.Everything", first
    p = run("capture", fixture("newer_version.pt"), "--inputs", fixture("inputs/single.npy"))
    assert_clean_error(p, 1, r"newer_version\.pt: archive file format version 99 is newer than "
                             r"LibTorch [0-9.]+ can read \(at most 10\)")


@test
def a_pytorch_1_2_archive_is_described_from_its_model_json():
    # the format before data.pkl (issue 27, finding 3: was "a zip archive without data.pkl, not a
    # PyTorch archive"); the records make_fixtures.py computed from the eager model
    for flags, expected in (([], "model_json.jsonl"), (["--all"], "model_json.all.jsonl")):
        p = run("inspect-model", fixture("model_json.pt"), *flags)
        assert p.returncode == 0 and not p.stderr, p.stderr
        with open(fixture(expected)) as f:
            assert_equal(p.stdout, f.read(), f"inspect-model {flags}")
    p = run("diff", fixture("model_json.pt"), fixture("model_json.pt"))
    assert p.returncode == 0 and '"identical": true' in p.stdout, p.stdout + p.stderr
    # what does not read it says what it is and how to write it again
    p = run("inspect-config", fixture("model_json.pt"))
    assert_clean_error(p, 1, r"model_json\.pt: a TorchScript archive in the format PyTorch 1\.0 "
                             r"to 1\.2 wrote \(model\.json\).*only inspect-model and diff read "
                             r"it here\. Load it with PyTorch 1\.x's torch\.jit\.load and save it "
                             r"again with torch\.jit\.save")


@torch_test
def a_pytorch_1_2_archive_is_not_run():
    p = run("capture", fixture("model_json.pt"), "--shape", "input=1x1x4x4")
    assert_clean_error(p, 1, r"model_json\.pt: a TorchScript archive in the format PyTorch 1\.0 "
                             r"to 1\.2 wrote \(model\.json\), which LibTorch 2 and builds of 1\.x "
                             r"without legacy import cannot load")
    p = run("compare", fixture("model_json.pt"), fixture("model_json.pt"), "--shape",
            "input=1x1x4x4")
    assert_clean_error(p, 2, r"model_json\.pt: a TorchScript archive in the format PyTorch 1\.0")


@test
def an_archive_saved_on_a_gpu_is_described_without_cuda_or_libtorch():
    # storages located on cuda:0: the same records as the CPU archive, and LibTorch never loaded
    p = run("--log-level", "debug", "inspect-model", fixture("cuda_tensors.pt"))
    assert p.returncode == 0, p.stderr
    assert p.stdout == run("inspect-model", fixture("everything.pt")).stdout
    assert "LibTorch" not in p.stderr, p.stderr


@torch_test
def an_archive_the_reader_cannot_describe_is_refused_unless_libtorch_is_asked_for():
    # __setstate__ computes `training`: only running the archive's code would tell its value
    path = fixture("computed_state.pt")
    for cmd in (("inspect-model", path), ("diff", path, path)):
        p = run("--log-level", "debug", *cmd)
        status = 2 if cmd[0] == "diff" else 1
        assert p.returncode == status and p.stdout == "", (p.returncode, p.stdout, p.stderr)
        last = p.stderr.rstrip().splitlines()[-1]
        assert last == (
            f"vin-inspect: error: {path}: cannot be described without running the archive's code "
            "(__torch__.fixture_models.ComputedState's __setstate__ sets training from something "
            "other than its state); vin-inspect never does that on its own: --load-with-libtorch "
            "reads it with LibTorch's loader, which runs the archive's TorchScript"), p.stderr
        assert "loading LibTorch" not in p.stderr, p.stderr
    # asked for: LibTorch runs __setstate__ (training = not False), with one debug line saying so
    p = run("--log-level", "debug", "inspect-model", path, "--load-with-libtorch")
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stderr.splitlines() if "reading it with LibTorch instead" in l]
    assert len(lines) == 1 and "--load-with-libtorch" in lines[0], p.stderr
    root = json.loads(p.stdout.splitlines()[1])
    assert root["path"] == "<root>" and root["training"] is True, root  # saved in eval mode
    p = run("diff", path, path, "--load-with-libtorch")
    assert p.returncode == 0, p.stderr


BROKEN_CLASS_SOURCE = '''
import sys, zipfile, torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
        return self.lin(x) * scale


torch.jit.save(torch.jit.script(Net()), sys.argv[1])
# a constant whose string goes over two lines: TorchScript never prints that, LibTorch refuses it
with zipfile.ZipFile(sys.argv[1]) as src, zipfile.ZipFile(sys.argv[2], "w") as out:
    for info in src.infolist():
        data = src.read(info)
        if info.filename.endswith("code/__torch__.py"):
            marker = "  lin : __torch__.torch.nn.modules.linear.Linear\\n"
            assert marker in data.decode()
            data = data.decode().replace(marker, marker + '  tag : Final[str] = "a\\nb"\\n').encode()
        out.writestr(info, data)
'''


@test
def a_class_source_the_reader_cannot_read_is_an_error_naming_the_class():
    # issue 26: the line after the broken string used to end the class, its methods were left
    # out, and --signature printed no MethodSignature with exit 0
    with tempfile.TemporaryDirectory() as tmp:
        good, broken = os.path.join(tmp, "net.pt"), os.path.join(tmp, "broken.pt")
        run_script(tmp, "make.py", BROKEN_CLASS_SOURCE, good, broken)
        p = run("inspect-model", good, "--signature")
        assert p.returncode == 0 and '"record": "MethodSignature", "name": "forward"' in p.stdout, p
        for flags in ([], ["--signature"], ["--all"]):
            p = run("inspect-model", broken, *flags)
            assert p.returncode == 1 and p.stdout == "", (flags, p.returncode, p.stdout)
            assert p.stderr.startswith(
                f"vin-inspect: error: {broken}: cannot be described without running the archive's "
                "code (line 8 of code/__torch__.py, in class __torch__.Net, is not TorchScript this "
                "reader knows)"), p.stderr
            assert len(p.stderr.splitlines()) == 1, p.stderr


@test
def without_libtorch_capture_is_a_usage_error():
    if not ARGS.no_torch:
        print("  (skipped: this binary has LibTorch; the torch tests cover capture and compare)")
        return
    for args in (["capture", fixture("convnet.pt"), "--shape", "images=1x3x8x8"],
                 ["compare", fixture("convnet.pt"), fixture("convnet.pt"), "--shape", "images=1x3x8x8"],
                 ["model", fixture("computed_state.pt"), "--load-with-libtorch"]):
        p = run(*args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "built without LibTorch: capture, compare and --load-with-libtorch need it" in p.stderr
    p = run("--version")
    assert p.returncode == 0 and p.stdout.endswith("(built without LibTorch)\n"), p.stdout
    # what needs no LibTorch works
    assert run("model", fixture("convnet.pt"), "--all").returncode == 0
    assert run("diff", fixture("convnet.pt"), fixture("everything.pt")).returncode == 1


@test
def a_damaged_pickle_is_reported_as_damaged_without_libtorch():
    hostile = os.path.join(ARGS.source, "tests", "hostile", "archive", "memo_index_huge.pt")
    p = run("--log-level", "debug", "inspect-model", hostile)
    assert p.returncode == 1 and "LibTorch" not in p.stderr, p.stderr
    assert p.stderr.rstrip().splitlines()[-1].endswith(
        "the record data.pkl cannot be read safely: memo index 2147483647 at byte 3 is larger than a pickle "
        "of 448 bytes can use"), p.stderr


@test
def quantized_modules_are_described_from_their_setstate_source_without_libtorch():
    # torch.ao.nn.quantized modules pickle a state tuple that their __setstate__ assigns
    p = run("--log-level", "debug", "inspect-model", fixture("static_quantized.pt"))
    assert p.returncode == 0, p.stderr
    assert "LibTorch" not in p.stderr, p.stderr
    types = [json.loads(l)["module_type"] for l in p.stdout.splitlines()[1:]]
    assert "torch.ao.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d" in types or \
        "torch.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d" in types, types


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
        assert_clean_error(p, 1, r"bitflip\.pt: cannot read the record data\.pkl \(damaged "
                                 r"archive: its data does not match its checksum\)")


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


# --- inspect-config -------------------------------------------------------------------------

@test
def config_renderings_in_configs_match_golden():
    configs = os.path.join(ARGS.source, "configs")
    names = sorted(f[:-5] for f in os.listdir(configs) if f.endswith(".yaml"))
    assert names, "no configs/*.yaml"
    for name in names:
        p = run("inspect-config", os.path.join(configs, name + ".yaml"))
        assert p.returncode == 0, f"{name}: {p.stderr}"
        assert_equal(p.stdout, golden(f"configs/{name}.jsonl"), f"configs/{name}.yaml")
    p = run("config", os.path.join(configs, "net.yaml"), "--format", "table")
    assert_equal(p.stdout, golden("configs/net.table"))
    p = run("config", os.path.join(configs, "net.yaml"), "--format", "json")
    assert_equal(p.stdout, golden("configs/net.json"))
    doc = json.loads(p.stdout)
    assert list(doc) == ["config_type", "target_type", "fields"], list(doc)


@test
def config_from_an_archive_reads_its_config_yaml():
    p = run("inspect-config", fixture("with_config.pt"))
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert lines[0] == {"record": "ModelStructureSpec", "config_type": "fixture_models.ConvNetConfig",
                        "target_type": "fixture_models.ConvNet"}, lines[0]
    assert len(lines) == 3
    assert_clean_error(run("inspect-config", fixture("convnet.pt")), 1,
                       r"convnet\.pt: the archive carries no config\.yaml; save the rendering with "
                       r"torch\.jit\.save\(m, path, _extra_files=")
    assert_clean_error(run("inspect-config", fixture("state_dict.pt")), 1, r"a torch\.save file")
    assert_clean_error(run("inspect-config", fixture("truncated.pt")), 1, r"truncated or damaged")


@test
def config_errors_name_file_line_and_column():
    cases = [
        ("malformed.yaml", "!m.C\na: 1\nb: [1, 2\nc: 3\n", r"malformed\.yaml:4:\d+: malformed YAML: "),
        ("list_root.yaml", "- 1\n- 2\n", r"list_root\.yaml:1:1: the root of a configuration "
                                          r"rendering must be a mapping"),
        ("missing_field.yaml", "!m.C\na: 1\n__declared__:\n  m.C: {a: int, b: str}\n",
         r"missing_field\.yaml:1:1: field 'b' of m\.C is declared but has no value"),
        ("bad_declared.yaml", "!m.C\na: 1\n__declared__:\n  m.C: [a]\n",
         r"bad_declared\.yaml:4:8: __declared__ entry 'm\.C' must be a mapping of field names"),
        ("deep.yaml", "a: " + "[" * 50000 + "]" * 50000 + "\n", r"deep\.yaml:\d+:\d+: the document "
                                                                  r"nests too deeply to read"),
        ("bomb.yaml", "a: &a {x: 1, y: 2}\n" + "".join(
            f"{chr(c)}: &{chr(c)} {{p: *{chr(c - 1)}, q: *{chr(c - 1)}}}\n" for c in range(98, 123)),
         r"bomb\.yaml:\d+:\d+: more than 100000 fields: too large to walk"),
        ("binary.yaml", "\x00\xff\xfe not yaml", r"binary\.yaml:"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, pattern in cases:
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="latin-1") as f:
                f.write(text)
            start = time.monotonic()
            p = run("inspect-config", path)
            elapsed = time.monotonic() - start
            try:
                assert_clean_error(p, 1, pattern)
            except AssertionError as e:
                raise AssertionError(f"{name}: {e}") from None
            # a few seconds; sanitizer builds (scripts/test_sanitizers.sh) run several times slower
            limit = 60 if "ASAN_OPTIONS" in os.environ else 20
            assert elapsed < limit, f"{name} took {elapsed:.1f} s"
    assert_clean_error(run("config", fixture("missing.yaml")), 1, r"missing\.yaml: no such file")


# --- capture --------------------------------------------------------------------------------

def capture(*extra, inputs=("inputs/everything_positional.npz",)):
    args = ["capture", fixture("everything.pt")]
    for i in inputs:
        args += ["--inputs", fixture(i)]
    return run(*args, *extra)


@torch_test
def capture_reproduces_the_worked_examples_byte_for_byte():
    examples = shared_examples()
    if examples is None:
        return
    for extra, expected in (([], "capture.jsonl"),
                            (["--max-samples-per-tensor", "2", "--max-bytes", "40"],
                             "capture-limited.jsonl")):
        p = run("capture", "tinynet.pt", "--inputs", "tinynet_inputs.npz", *extra, cwd=examples)
        assert p.returncode == 0, p.stderr
        with open(os.path.join(examples, expected)) as f:
            assert_equal(p.stdout, f.read(), expected)


@torch_test
def capture_jsonl_json_and_table_agree():
    lines = [json.loads(l) for l in capture().stdout.splitlines()]
    assert lines[-1]["record"] == "CaptureSummary", lines[-1]
    snapshots = [l for l in lines[:-1] if l.pop("record") == "TensorSnapshot"]
    assert len(snapshots) == len(lines) - 1
    summary = lines[-1]
    assert summary["snapshots"] == len(snapshots) == 48, summary
    assert summary["sampled_bytes"] == sum(s["sampled_bytes"] for s in snapshots)
    doc = json.loads(capture("--format", "json").stdout)
    assert list(doc) == ["snapshots", "sampled_bytes", "stopped_by"], list(doc)
    assert doc["snapshots"] == snapshots
    table = capture("--format", "table").stdout.splitlines()
    assert table[0].split() == ["Module", "Call", "Side", "Tensor", "Shape", "Dtype", "First",
                                "values"], table[0]
    assert len(table) == 2 + 48 + 2, len(table)
    assert any(re.match(r"^encoder\.conv +0 +input +args\.0 +\[2, 2, 5\] +float32 +-1 -0\.894737 ", l)
               for l in table), table[:6]
    assert table[-1].startswith("Snapshots: 48   Sampled bytes: "), table[-1]


@torch_test
def capture_inputs_several_files_continue_call_indices():
    p = capture("--module", "<root>", inputs=("inputs/everything_positional.npz",
                                              "inputs/everything_keyword.npz"))
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    roots = [(l["call_index"], l["direction"], l["tensor_path"]) for l in lines[:-1]]
    assert roots == [(0, "input", ["args", "0"]), (0, "input", ["args", "1"]),
                     (0, "output", ["output", "0"]), (0, "output", ["output", "1"]),
                     (1, "input", ["args", "0"]), (1, "input", ["kwargs", "tokens"]),
                     (1, "output", ["output", "0"]), (1, "output", ["output", "1"])], roots


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


@test
def pipes_are_read_like_files_and_only_once():
    # a pipe can be read once: a command that opened it twice would wait for ever (timeout)
    config = os.path.join(ARGS.source, "configs", "net.yaml")
    archive = fixture("everything.pt")
    for command in (["inspect-config", config], ["inspect-model", archive, "--all"],
                    ["diff", archive, archive], ["diff", config, config]):
        plain = run(*command)
        piped = run_with_pipes(command[0], f"<({command[1]})", *command[2:])
        assert piped.returncode == plain.returncode, (command, piped.stderr)
        assert same_but_file_names(piped.stdout, plain.stdout), (command, piped.stdout[:300])
    p = run_with_pipes("inspect-config", "<(/dev/null)")
    assert p.returncode == 1 and p.stderr.startswith("vin-inspect: error: /dev/fd/"), p.stderr
    with tempfile.TemporaryDirectory() as tmp:
        zeros = os.path.join(tmp, "zeros")
        with open(zeros, "wb") as f:
            f.write(bytes(1 << 20))
        p = run_with_pipes("inspect-model", f"<({zeros})")
        assert_clean_error(p, 1, r"/dev/fd/\d+: a stream that starts as none of the files this "
                                 r"tool reads")


@torch_test
def capture_and_compare_read_pipes():
    archive, inputs = fixture("everything.pt"), fixture("inputs/everything_positional.npz")
    plain = run("capture", archive, "--inputs", inputs)
    piped = run_with_pipes("capture", f"<({archive})", "--inputs", f"<({inputs})")
    assert piped.returncode == 0 and plain.returncode == 0, piped.stderr
    assert same_but_file_names(piped.stdout, plain.stdout), piped.stdout[:300]
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "saved.npz")
        p = run("capture", archive, "--inputs", inputs, "--save", saved, "-o",
                os.path.join(tmp, "records.jsonl"))
        assert p.returncode == 0, p.stderr
        p = run_with_pipes("compare", f"<({saved})", f"<({archive})", "--inputs", f"<({inputs})")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout.splitlines()[-1])["beyond"] == 0, p.stdout[-300:]


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


@test
def diff_compares_integers_exactly_however_large():
    with tempfile.TemporaryDirectory() as tmp:
        sides = []
        for n in (18446744073709551617, 18446744073709551616):
            side = os.path.join(tmp, f"{n}.jsonl")
            with open(side, "w") as f:
                f.write(json.dumps({"record": "ModelMetadata", "model_type": "m",
                                    "total_parameters": n, "trainable_parameters": 0}) + "\n")
            sides.append(side)
        p = run("diff", *sides)
        assert p.returncode == 1, p.stdout + p.stderr
        change = json.loads(p.stdout.splitlines()[0])
        assert change["field"] == "total_parameters", change
        p = run("diff", sides[0], sides[0])
        assert p.returncode == 0, p.stdout + p.stderr


KEYS_MODEL = '''
import sys, torch
from torch import nn, Tensor
from typing import Dict, List


class Keys(nn.Module):
    def __init__(self):
        super().__init__()
        self.keys: List[str] = ["a/b", "a\\x00b", "a", "%41"]

    def forward(self, x: Tensor) -> Dict[str, Tensor]:
        out: Dict[str, Tensor] = {}
        for i, k in enumerate(self.keys):
            out[k] = x + i
        return out


torch.jit.save(torch.jit.script(Keys()), sys.argv[1])
'''


@torch_test
def saved_member_names_stay_unique_and_read_back():
    # dict keys holding '/', NUL and '%' (issue 26): one member each, compare reads them back
    with tempfile.TemporaryDirectory() as tmp:
        archive, saved = os.path.join(tmp, "keys.pt"), os.path.join(tmp, "keys.npz")
        run_script(tmp, "keys_model.py", KEYS_MODEL, archive)
        p = run("capture", archive, "--shape", "x=2", "--save", saved, "-o",
                os.path.join(tmp, "records.jsonl"))
        assert p.returncode == 0, p.stderr
        names = subprocess.run([sys.executable, "-c", "import sys, json, numpy as np; "
                                "print(json.dumps(sorted(np.load(sys.argv[1]).files)))", saved],
                               capture_output=True, text=True, check=True)
        outputs = [n for n in json.loads(names.stdout) if "/output/" in n]
        assert outputs == ["<root>/0/output/output/%2541", "<root>/0/output/output/a",
                           "<root>/0/output/output/a%00b", "<root>/0/output/output/a%2Fb"], outputs
        p = run("compare", saved, archive, "--shape", "x=2")
        assert p.returncode == 0, p.stdout[-400:] + p.stderr
        summary = json.loads(p.stdout.splitlines()[-1])
        assert summary["pairs"] == 5 and summary["only_in_a"] == 0, summary


SHAPES_MODEL = '''
import sys, torch
from torch import nn, Tensor
from typing import Tuple


class Shapes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, ids: Tensor, x: Tensor, h: Tensor, b: Tensor, q: Tensor) -> Tuple[Tensor, Tensor]:
        return self.lin(x.float()) + ids.float().sum(), h.to(torch.bfloat16) * b.float() + q.float()


torch.manual_seed(0)
torch.jit.save(torch.jit.script(Shapes().eval()), sys.argv[1])
'''

REBUILD = '''
import sys, json, numpy as np, torch
saved = np.load(sys.argv[1])
seed, high = int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(seed)
# forward(ids, x, h, b, q): made in the schema's order
ids = torch.randint(0, high, (2, 5), dtype=torch.int64)
x = torch.randn(2, 4)
h = torch.randn(3, dtype=torch.float16)
b = torch.randint(0, 2, (3,), dtype=torch.bool)  # bool: [0, 2) whatever --int-high says
q = torch.randn(3, dtype=torch.bfloat16)
expected = {"ids": ids, "x": x, "h": h, "b": b, "q": q.float()}
problems = []
for name, tensor in expected.items():
    got = saved["<root>/0/input/kwargs/" + name]
    if got.dtype != tensor.numpy().dtype or not np.array_equal(got, tensor.numpy()):
        problems.append(f"{name}: {got.dtype} {got.ravel()[:4]} vs {tensor.dtype} {tensor.ravel()[:4]}")
print(json.dumps(problems))
'''


@torch_test
def shape_inputs_are_the_tensors_python_makes_after_manual_seed():
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "shapes.pt")
        run_script(tmp, "shapes_model.py", SHAPES_MODEL, archive)
        shapes = ["--shape", "q=3:bfloat16", "--shape", "x=2x4", "--shape", "h=3:float16",
                  "--shape", "ids=2x5:int64", "--shape", "b=3:bool"]  # not in schema order
        # --seed as torch.manual_seed takes it: negative seeds as their two's complement
        for seed, high in ((0, 2), (7, 10), (-1, 3), (18446744073709551615, 5)):
            saved = os.path.join(tmp, f"s{seed}.npz")
            p = run("capture", archive, *shapes, "--seed", str(seed), "--int-high", str(high),
                    "--save", saved, "--module", "<root>")
            assert p.returncode == 0, p.stderr
            check = subprocess.run([sys.executable, "-c", REBUILD, saved, str(seed), str(high)],
                                   capture_output=True, text=True)
            assert check.returncode == 0 and json.loads(check.stdout) == [], check.stdout + check.stderr
        # one positional name the model lacks, a required one missing, a bad spec: usage errors
        p = run("capture", archive, "--shape", "nope=2", "--shape", "x=2x4")
        assert_clean_error(p, 2, r"--shape: forward has no argument 'nope'; the model takes forward\(ids: Tensor")
        p = run("capture", archive, "--shape", "x=2x4")
        assert_clean_error(p, 2, r"argument 'ids' is missing")
        p = run("capture", archive, "--shape", "x=2xy")
        assert_clean_error(p, 2, r"--shape x=2xy: dimension 'y' is not a non-negative integer")
        p = run("capture", archive, "--shape", "x=2:complex")
        assert_clean_error(p, 2, r"unknown dtype 'complex'")
        p = run("capture", archive)
        assert_clean_error(p, 2, r"--inputs FILE or --shape NAME=DIMS is required")
        p = run("capture", archive, "--shape", "x=2", "--inputs", archive)
        assert p.returncode == 2 and "excludes" in p.stderr, p.stderr
        # every numeric option checked before anything runs, the value repeated (issue 26)
        for flags, message in (
                (["--timeout", "nan"], r"--timeout: must be a number of seconds above 0 and at "
                                       r"most 10000000, got 'nan'"),
                (["--timeout", "1e300"], r"--timeout: .* got '1e300'"),
                (["--seed", "18446744073709551616"], r"--seed: must be an integer in "
                                                     r"\[-9223372036854775808, 18446744073709551615\]"),
                (["--seed", "-9223372036854775809"], r"--seed: .*got '-9223372036854775809'"),
                (["--int-high", "1e400"], r"--int-high: must be an integer in \[1, "),
                (["--shape", "x=99999999999x99999999999"], r"would hold more than 17179869184 bytes"),
                (["--shape", "x=1000000000000"], r"would hold more than 17179869184 bytes"),
                (["--shape", "x=2:int8", "--int-high", "1000"],
                 r"--int-high 1000: --shape x is int8, which holds values below 128 only")):
            args = flags if "--shape" in flags else ["--shape", "x=2x4", *flags]
            p = run("capture", archive, *args)
            assert_clean_error(p, 2, message)
        for flag, value in (("--atol", "nan"), ("--rtol", "inf"), ("--atol", "-1")):
            p = run("compare", archive, archive, "--shape", "x=2x4", flag, value)
            assert_clean_error(p, 2, flag + r": must be a finite number >= 0, got '" + value + "'")


SAVED_AGAINST_RECORDS = '''
import sys, json, numpy as np
saved = np.load(sys.argv[1])
records = [json.loads(l) for l in open(sys.argv[2])]
snapshots = [r for r in records if r["record"] == "TensorSnapshot"]
def numpy_dtype(torch_dtype):
    name = torch_dtype.replace("torch.", "")
    return {"bfloat16": "float32", "complex32": "complex64", "quint8": "float32",
            "qint8": "float32", "qint32": "float32"}.get(name, name)

problems, names = [], []
for s in snapshots:
    name = "/".join([s["module_path"], str(s["call_index"]), s["direction"], *s["tensor_path"]])
    if s["sample_omission_reason"] in ("nested_tensor", "non_strided_layout", "meta_device"):
        if name in saved.files:
            problems.append(name + ": a metadata-only tensor was saved")
        continue
    names.append(name)
    if name not in saved.files:
        problems.append(name + ": not saved")
        continue
    a = saved[name]
    if list(a.shape) != s["shape"] or str(a.dtype) != numpy_dtype(s["dtype"]):
        problems.append(f"{name}: {a.shape} {a.dtype} vs {s['shape']} {s['dtype']}")
    values = [v if not isinstance(v, str) else float(v.replace("Infinity", "inf")) for v in s["values"]]
    flat = a.ravel()[:len(values)]
    if a.dtype != np.complex64 and not np.array_equal(flat.astype(np.float64), np.array(values, dtype=np.float64), equal_nan=True):
        problems.append(f"{name}: values {flat[:3]} vs {values[:3]}")
if sorted(names) != sorted(saved.files):
    problems.append(f"members {sorted(saved.files)} vs snapshots {sorted(names)}")
summary = records[-1]
if summary["saved_tensors"] != len(saved.files):
    problems.append(f"saved_tensors {summary['saved_tensors']} vs {len(saved.files)} members")
if summary["saved_bytes"] != sum(saved[n].nbytes for n in saved.files):
    problems.append("saved_bytes differs from the members' bytes")
print(json.dumps(problems))
'''


@torch_test
def save_writes_whole_tensors_numpy_reads_back():
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(fixture("everything.pt"), ["--inputs", fixture("inputs/everything_positional.npz")]),
                 (os.path.join(ARGS.fixtures, "..", "capture_fixtures", "exotic.pt"),
                  ["--inputs", os.path.join(ARGS.fixtures, "..", "capture_fixtures", "exotic_inputs.pt")])]
        for archive, inputs in cases:
            if not os.path.exists(archive):
                raise AssertionError(f"missing fixture {archive}")
            saved, records = os.path.join(tmp, "saved.npz"), os.path.join(tmp, "records.jsonl")
            p = run("capture", archive, *inputs, "--save", saved, "--max-tensors", "1000",
                    "--max-bytes", "100000000", "-o", records)
            assert p.returncode == 0, p.stderr
            check = subprocess.run([sys.executable, "-c", SAVED_AGAINST_RECORDS, saved, records],
                                   capture_output=True, text=True)
            assert check.returncode == 0 and json.loads(check.stdout) == [], (archive, check.stdout, check.stderr)
        # the byte bound: what passes it is counted, not written
        saved = os.path.join(tmp, "bounded.npz")
        p = run("capture", fixture("everything.pt"), "--inputs", fixture("inputs/everything_positional.npz"),
                "--save", saved, "--save-max-bytes", "100")
        summary = json.loads(p.stdout.splitlines()[-1])
        assert p.returncode == 0 and summary["saved_bytes"] <= 100 and summary["unsaved_tensors"] > 0, summary
        assert summary["saved_tensors"] + summary["unsaved_tensors"] == summary["snapshots"], summary


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


def compare_run(*args):
    p = run("compare", *args)
    assert p.returncode in (0, 1), f"{args}: exit {p.returncode}: {p.stderr}"
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    return p.returncode, lines[:-1], lines[-1]


@torch_test
def compare_an_archive_with_itself_copies_and_saved_tensors():
    d = lambda name: fixture(os.path.join("diff", name))  # noqa: E731
    x = ["--shape", "x=2x3x8x8"]
    # itself: every pair within tolerance
    status, pairs, summary = compare_run(d("net.pt"), d("net.pt"), *x)
    assert status == 0 and summary["pairs"] == len(pairs) == summary["within"] > 0, summary
    assert list(pairs[0])[:4] == ["record", "module_path", "call_index", "direction"], pairs[0]
    assert summary["first_divergence"] is None and summary["atol"] is None
    # reduced precision copies: divergences with both dtypes, the first one named
    for copy, dtype in (("net_bf16.pt", "torch.bfloat16"), ("gate_half.pt", "torch.float16")):
        base = d("gate.pt") if copy.startswith("gate") else d("net.pt")
        shape = ["--shape", "x=4x8"] if copy.startswith("gate") else x
        status, pairs, summary = compare_run(base, d(copy), *shape)
        beyond = [p for p in pairs if not p["within_tolerance"]]
        assert status == 1 and beyond and summary["beyond"] == len(beyond), summary
        assert all(p["dtype_a"] == "torch.float32" and p["dtype_b"] == dtype for p in pairs), pairs[0]
        first = {k: beyond[0][k] for k in ("module_path", "call_index", "direction", "tensor_path")}
        assert summary["first_divergence"] == first, (summary, first)
        assert beyond[0]["rtol"] == (1.6e-2 if dtype == "torch.bfloat16" else 1e-3)
    # one layer changed: the first divergence is that layer's first call
    status, _, summary = compare_run(d("net.pt"), d("net_norm_changed.pt"), *x)
    assert status == 1 and summary["first_divergence"] == {
        "module_path": "norm", "call_index": 0, "direction": "output", "tensor_path": ["output"]}, summary
    # tolerances given: reported, and applied to every pair
    status, pairs, summary = compare_run(d("net.pt"), d("net_bf16.pt"), *x, "--atol", "1", "--rtol", "0")
    assert status == 0 and summary["atol"] == 1.0 and summary["rtol"] == 0.0
    assert all(p["atol"] == 1.0 and p["rtol"] == 0.0 for p in pairs)
    # --module patterns, and pairs past --max-compare-bytes compared by statistics
    _, pairs, _ = compare_run(d("net.pt"), d("net_norm_changed.pt"), *x, "--module", "no*")
    assert {p["module_path"] for p in pairs} == {"norm"}, pairs
    status, pairs, summary = compare_run(d("net.pt"), d("net.pt"), *x, "--max-compare-bytes", "600")
    assert status == 0 and summary["statistics_only"] > 0 and summary["statistics_only"] == sum(
        p["statistics_only"] for p in pairs), summary
    assert all(p["mismatches"] is None for p in pairs if p["statistics_only"])
    # a side saved by capture --save: the same tensors, read instead of run
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "a.npz")
        assert run("capture", d("net.pt"), *x, "--save", saved, "--max-tensors", "100").returncode == 0
        status, pairs, summary = compare_run(saved, d("net.pt"), *x)
        assert status == 0 and summary["pairs"] == len(pairs) > 0 and summary["only_in_b"] == 0, summary
        status, _, summary = compare_run(saved, d("net_norm_changed.pt"), *x)
        assert status == 1 and summary["first_divergence"]["module_path"] == "norm"
    table = run("compare", d("net.pt"), d("net_norm_changed.pt"), *x, "--format", "table").stdout
    assert table.startswith("First divergence: norm #0 output.output\n"), table
    assert re.search(r"^8 pairs: 4 within tolerance, 4 beyond; only in A: 0, only in B: 0$", table, re.M)


@torch_test
def compare_a_scripted_model_with_its_eager_model_through_eager_capture():
    with tempfile.TemporaryDirectory() as tmp:
        factory = os.path.join(tmp, "factory.py")
        with open(factory, "w") as f:
            f.write("import torchvision\n\ndef resnet18():\n    return torchvision.models.resnet18()\n")
        inputs = os.path.join(tmp, "x.npz")
        subprocess.run([sys.executable, "-c", "import numpy as np, sys; np.savez(sys.argv[1], "
                        "np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32))",
                        inputs], check=True)
        eager = os.path.join(tmp, "eager.npz")
        p = subprocess.run([os.path.join(ARGS.source, "scripts", "eager_capture.py"), "--factory",
                            factory + ":resnet18", "--state", fixture("resnet18.pt"), "--inputs",
                            inputs, "-o", eager], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        status, pairs, summary = compare_run(fixture("resnet18.pt"), eager, "--inputs", inputs)
        assert status == 0 and summary["pairs"] == len(pairs) > 100, summary
        assert summary["only_in_a"] == summary["only_in_b"] == 0


@torch_test
def compare_usage_errors_exit_2():
    d = lambda name: fixture(os.path.join("diff", name))  # noqa: E731
    p = run("compare", d("net.pt"), d("net.pt"))
    assert_clean_error(p, 2, r"--inputs FILE or --shape NAME=DIMS is required")
    p = run("compare", d("net.pt"), fixture("missing.pt"), "--shape", "x=2x3x8x8")
    assert p.returncode == 2 and "missing.pt" in p.stderr, p.stderr
    p = run("compare", d("net.pt"), d("net.pt"), "--shape", "x=2x3x8x8", "--module", "nope")
    assert p.returncode == 2 and "nope" in p.stderr, p.stderr


@torch_test
def capture_quota_flags_and_stopped_by():
    p = capture("--max-tensors", "3")
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert len(lines) == 4 and lines[-1]["stopped_by"] == "max_tensors", lines[-1]
    # 30 bytes: 7 float32 values (28 bytes), then 2 bytes left, less than one element: every
    # later tensor is recorded without values and the quota is never reached
    summary = json.loads(capture("--max-bytes", "30").stdout.splitlines()[-1])
    assert summary == {"record": "CaptureSummary", "snapshots": 48, "sampled_bytes": 28,
                       "stopped_by": None}, summary
    summary = json.loads(capture("--max-bytes", "32").stdout.splitlines()[-1])
    assert summary["stopped_by"] == "max_bytes" and summary["sampled_bytes"] == 32, summary


@torch_test
def a_forward_that_raises_prints_the_records_so_far_then_the_error():
    p = capture(inputs=("inputs/everything_bad_tokens.npz",))
    assert p.returncode == 1, (p.returncode, p.stderr)
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert lines and lines[-1]["record"] == "CaptureSummary", p.stdout[-300:]
    assert lines[-1]["snapshots"] == len(lines) - 1 > 0
    assert any(l.get("module_path") == "embed" and l["direction"] == "input" for l in lines)
    assert not any(l.get("module_path") in ("embed", "<root>") and l.get("direction") == "output"
                   for l in lines), "an aborted invocation has an output record"
    assert_clean_error(subprocess.CompletedProcess(p.args, 1, "", p.stderr), 1,
                       r"everything\.pt: the model's forward raised on .*everything_bad_tokens\.npz: ")


@torch_test
def timeout_stops_a_forward_and_prints_the_records_so_far():
    single = fixture("inputs/single.npy")
    # a loop that calls a module: stopped at the next module call after the deadline
    start = time.monotonic()
    p = run("capture", fixture("forever.pt"), "--inputs", single, "--timeout", "1",
            "--max-tensors", "3")
    assert p.returncode == 1 and time.monotonic() - start < 30, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert [l["record"] for l in lines] == ["TensorSnapshot"] * 3 + ["CaptureSummary"], lines
    assert lines[-1]["stopped_by"] == "max_tensors"
    assert_clean_error(subprocess.CompletedProcess(p.args, 1, "", p.stderr), 1,
                       r"forever\.pt: the forward on .*single\.npy did not finish within 1 s "
                       r"\(--timeout\); it was stopped at a module call$")
    # a loop without module calls cannot be stopped inside LibTorch: the records so far, the
    # error, and the process ends; the -o file is complete
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "records.jsonl")
        p = run("capture", fixture("spin.pt"), "--inputs", single, "--timeout", "0.5", "-o", out)
        assert p.returncode == 1 and p.stdout == "", (p.returncode, p.stdout)
        assert_clean_error(p, 1, r"spin\.pt: the forward on .*single\.npy did not finish within "
                                 r"0\.5 s \(--timeout\) and could not be stopped at a module call$")
        lines = [json.loads(l) for l in open(out).read().splitlines()]
        assert [(l.get("module_path"), l.get("direction")) for l in lines] == [
            ("<root>", "input"), ("first", "input"), ("first", "output"), (None, None)], lines
    for bad in ("0", "-1", "soon"):
        assert_clean_error(run("capture", fixture("spin.pt"), "--inputs", single, "--timeout", bad),
                           2, r"--timeout")


@torch_test
def compare_runs_each_archive_as_capture_does():
    # one forward runner: compare has capture's --timeout and --quantized-engine and its messages
    single = fixture("inputs/single.npy")
    p = run("compare", fixture("forever.pt"), fixture("forever.pt"), "--inputs", single,
            "--timeout", "1")
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert lines and lines[-1]["record"] == "ComparisonSummary" and lines[-1]["pairs"] > 0, p.stdout
    assert_clean_error(subprocess.CompletedProcess(p.args, p.returncode, "", p.stderr), 2,
                       r"forever\.pt: the forward on .*single\.npy did not finish within 1 s "
                       r"\(--timeout\); it was stopped at a module call$")
    # no module call to stop the forward at: the message alone, compare's status for trouble
    p = run("compare", fixture("spin.pt"), fixture("spin.pt"), "--inputs", single,
            "--timeout", "0.5")
    assert_clean_error(p, 2, r"spin\.pt: the forward on .*single\.npy did not finish within "
                             r"0\.5 s \(--timeout\) and could not be stopped at a module call$")
    for bad in ("0", "-1", "soon"):
        assert_clean_error(run("compare", fixture("spin.pt"), fixture("spin.pt"), "--inputs", single,
                               "--timeout", bad), 2, r"--timeout")
    # each engine: what capture does with it, compare does (its statuses as diff's)
    archive = fixture("static_quantized.pt")
    ran = 0
    for engine in ("qnnpack", "fbgemm", "onednn", "x86", "tensorrt"):
        flags = ["--shape", "input=2x3x8x8", "--quantized-engine", engine]
        c = run("capture", archive, *flags)
        k = run("compare", archive, archive, *flags)
        assert k.returncode == {0: 0, 1: 2, 2: 2}[c.returncode], (engine, c.stderr, k.stderr)
        if c.returncode:
            assert k.stderr == c.stderr, (engine, c.stderr, k.stderr)
            if engine != "tensorrt":
                assert "is not available in this LibTorch build (available: " in k.stderr, k.stderr
            continue
        ran += 1
        summary = json.loads(k.stdout.splitlines()[-1])
        assert summary["pairs"] > 0 and summary["beyond"] == 0, (engine, summary)
    assert ran > 0


@torch_test
def a_forward_failure_gives_libtorchs_reason_and_where():
    # numpy's default float64 into a float32 model: the operation's own message, not the
    # interpreter's header, and where in the model's source
    p = run("capture", fixture("resnet18.pt"), "--inputs", fixture("inputs/image32_float64.npz"))
    assert p.returncode == 1, p.stderr
    lines = p.stderr.rstrip("\n").split("\n")
    assert len(lines) == 2, p.stderr
    assert re.fullmatch(r"vin-inspect: error: .*resnet18\.pt: the model's forward raised on "
                        r".*image32_float64\.npz: expected scalar type Double but found Float",
                        lines[0]), lines[0]
    assert re.fullmatch(r"  at .*conv\.py:\d+, in _conv_forward", lines[1]), lines[1]
    assert "TorchScript interpreter" not in p.stderr
    # --log-level debug adds the interpreter's report: TorchScript frames, no C++ ones
    p = run("--log-level", "debug", "capture", fixture("resnet18.pt"), "--inputs",
            fixture("inputs/image32_float64.npz"))
    assert "Traceback of TorchScript" in p.stderr and "frame #" not in p.stderr, p.stderr
    # a traced archive's report adds the Python frames the trace ran in after the TorchScript
    # ones (issue 27: the reason was lost behind them); one channel into a Conv2d(3, ...)
    p = run("capture", fixture("traced.pt"), "--shape", "images=1x1x8x8")
    assert p.returncode == 1, p.stderr
    lines = p.stderr.rstrip("\n").split("\n")
    assert len(lines) == 2, p.stderr
    assert re.fullmatch(r"vin-inspect: error: .*traced\.pt: the model's forward raised on --shape: "
                        r"Given groups=1, weight of size \[16, 3, 3, 3\], expected "
                        r"input\[1, 1, 8, 8\] to have 3 channels, but got 1 channels instead",
                        lines[0]), lines[0]
    assert re.fullmatch(r"  at code/__torch__/torch/nn/modules/conv.*\.py:\d+, in forward",
                        lines[1]), lines[1]


@torch_test
def module_patterns_select_every_path_below():
    p = run("capture", fixture("resnet18.pt"), "--inputs", fixture("inputs/image32.npz"),
            "--module", "layer3.*", "--max-tensors", "100000", "--max-bytes", "100000000")
    assert p.returncode == 0, p.stderr
    paths = {json.loads(l).get("module_path") for l in p.stdout.splitlines()[:-1]}
    assert "layer3" not in paths and "layer3.0" in paths and "layer3.1.bn2" in paths, paths
    assert all(x.startswith("layer3.") for x in paths), paths
    everything = run("capture", fixture("resnet18.pt"), "--inputs", fixture("inputs/image32.npz"),
                     "--module", "*", "--max-tensors", "100000", "--max-bytes", "100000000")
    assert "<root>" in {json.loads(l).get("module_path") for l in everything.stdout.splitlines()}
    assert_clean_error(run("capture", fixture("resnet18.pt"), "--inputs",
                           fixture("inputs/image32.npz"), "--module", "layer9.*"), 2,
                       r"no module path matches 'layer9\.\*'; closest registered paths:")


@test
def unknown_options_are_named_with_the_closest_one():
    assert_clean_error(run("capture", fixture("everything.pt"), "--input", "x.npz"), 2,
                       r"unknown option '--input'; did you mean '--inputs'\?")
    assert_clean_error(run("model", fixture("everything.pt"), "--formt", "json"), 2,
                       r"unknown option '--formt'; did you mean '--format'\?")


@torch_test
def the_table_says_which_inputs_file_each_call_came_from():
    first, second = fixture("inputs/everything_positional.npz"), fixture("inputs/everything_keyword.npz")
    p = run("capture", fixture("everything.pt"), "--inputs", first, "--inputs", second,
            "--module", "<root>", "--format", "table")
    rows = [l for l in p.stdout.splitlines() if "<root>" in l]
    assert rows[0].startswith("everything_positional.npz ") and \
        rows[-1].startswith("everything_keyword.npz "), p.stdout
    single = run("capture", fixture("everything.pt"), "--inputs", first, "--format", "table")
    assert single.stdout.startswith("Module "), single.stdout[:100]


def profile_args(*extra, inputs="inputs/everything_positional.npz"):
    args = ["profile", fixture("everything.pt"), "--warmup", "1", "--runs", "2"]
    if inputs:
        args += ["--inputs", fixture(inputs)]
    return [*args, *extra]


def profile(*extra, inputs="inputs/everything_positional.npz"):
    return run(*profile_args(*extra, inputs=inputs))


@torch_test
def profile_jsonl_json_and_table_agree():
    lines = [json.loads(l) for l in profile().stdout.splitlines()]
    kinds = [l["record"] for l in lines]
    assert kinds[-1] == "ProfileSummary" and kinds[0] == "ModuleProfile", kinds
    assert kinds == sorted(kinds, key=["ModuleProfile", "OperatorProfile", "ProfileSummary"].index)
    summary = lines[-1]
    assert list(summary) == ["record", "device", "warmup", "runs", "latency_ms", "throughput",
                             "flops", "instrumented_ms", "peak_bytes", "parameter_bytes",
                             "buffer_bytes", "modules", "operators"], list(summary)
    assert (summary["device"], summary["warmup"], summary["runs"]) == ("cpu", 1, 2), summary
    assert summary["modules"] == kinds.count("ModuleProfile") > 1
    assert summary["operators"] == kinds.count("OperatorProfile") > 1
    assert list(lines[0]) == ["record", "module_path", "module_type", "calls", "parameters",
                              "input_shapes", "output_shapes", "flops", "self_flops", "time_ms",
                              "self_time_ms", "allocated_bytes", "peak_bytes"], list(lines[0])
    assert lines[0]["module_path"] == "<root>" and lines[0]["input_shapes"] == [[2, 2, 5], [2, 3]]
    doc = json.loads(profile("--format", "json").stdout)
    assert list(doc)[:3] == ["modules", "operators", "device"], list(doc)
    assert [m["module_path"] for m in doc["modules"]] == [
        l["module_path"] for l in lines if l["record"] == "ModuleProfile"]
    table = profile("--format", "table").stdout
    assert "Module (type)" in table and "Operator" in table and "Latency on cpu: median" in table
    assert re.search(r"^<root> \(", table.splitlines()[3]), table


@torch_test
def profile_trace_is_chrome_trace_json_complete_or_absent():
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        p = profile("--trace", trace)
        assert p.returncode == 0, p.stderr
        doc = json.load(open(trace))
        events = doc["traceEvents"]
        assert events and all(e["ph"] == "X" and e["cat"] in ("module", "operator")
                              for e in events), events[:3]
        assert events[0]["name"] == "<root>", events[0]
        # a trace that cannot be written: exit 1, no file, and nothing on stdout
        missing = os.path.join(tmp, "no", "trace.json")
        assert_clean_error(profile("--trace", missing), 1, r"no/trace\.json")
        assert not os.path.exists(os.path.dirname(missing))
        assert [f for f in os.listdir(tmp) if f != "trace.json"] == [], os.listdir(tmp)
        # the trace is an output: never one of the inputs
        assert_clean_error(profile("--trace", fixture("everything.pt")), 2,
                           "--trace .* is an input of this command")
        # nor standard output while the records go there: renamed over the shell's file, the
        # trace would take the records' place (a pipe would mix the two)
        records = os.path.join(tmp, "records.jsonl")
        with open(records, "w") as out:
            p = subprocess.run([ARGS.binary, *profile_args("--trace", "/dev/stdout")],
                               stdout=out, stderr=subprocess.PIPE, text=True, timeout=120)
        assert_clean_error(subprocess.CompletedProcess(p.args, p.returncode, "", p.stderr), 2,
                           "--trace /dev/stdout is standard output, where the records go")
        assert os.path.getsize(records) == 0
        assert_clean_error(profile("--trace", "/dev/stdout"), 2, "is standard output")
        # with the records in their own file, the trace may go to standard output
        p = profile("--trace", "/dev/stdout", "-o", records)
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["traceEvents"] and \
            json.loads(open(records).read().splitlines()[-1])["record"] == "ProfileSummary"


@torch_test
def profile_bad_input_gets_one_line_and_the_right_status():
    for extra, status, pattern in [
        (("--runs", "0"), 2, r"--runs: must be an integer in \[1, 1000000\], got '0'"),
        (("--warmup", "-1"), 2, r"--warmup: must be an integer in \[0, 1000000\], got '-1'"),
        (("--module", "encoder.blok*"), 2, r"encoder\.blok\*"),
        (("--inputs", fixture("inputs/everything_keyword.npz")), 2, r"one file"),
    ]:
        try:
            assert_clean_error(profile(*extra), status, pattern)
        except AssertionError as e:
            raise AssertionError(f"{extra}: {e}") from None
    assert_clean_error(profile(inputs="inputs/missing.npz"), 1, r"missing\.npz: no such file")
    assert_clean_error(profile(inputs=None), 2, r"--inputs FILE or --shape NAME=DIMS is required")
    assert_clean_error(profile(inputs="inputs/everything_bad_tokens.npz"), 1,
                       r"everything\.pt: the model's forward raised on .*everything_bad_tokens\.npz: ")


def run_on_a_terminal(args):
    """Runs the binary with `args`, its stderr a pseudo-terminal: the finished process and what
    the terminal was sent."""
    import pty
    main, secondary = pty.openpty()
    try:
        done = subprocess.run([ARGS.binary, *args], stdout=subprocess.PIPE, stderr=secondary,
                              timeout=120)
        os.close(secondary)
        secondary = None
        shown = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the terminal's other side is closed
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(main)
        if secondary is not None:
            os.close(secondary)
    return done, shown.decode()


@torch_test
def profile_shows_progress_on_a_terminal_only():
    # stderr a file: nothing on it
    p = profile()
    assert p.returncode == 0 and p.stderr == "", p.stderr
    # stderr a terminal: the progress line, rewritten in place, then cleared
    args = ["profile", fixture("everything.pt"), "--inputs",
            fixture("inputs/everything_positional.npz"), "--warmup", "2", "--runs", "3"]
    done, text = run_on_a_terminal(args)
    assert done.returncode == 0, text
    for step in ("warm-up forward 1/2", "warm-up forward 2/2", "timed forward 1/3",
                 "timed forward 3/3"):
        assert step in text, text
    assert text.endswith("\r\x1b[K"), repr(text[-40:])
    assert json.loads(done.stdout.decode().splitlines()[-1])["record"] == "ProfileSummary"
    # log lines meanwhile take the progress line away first: each starts a line of its own
    done, text = run_on_a_terminal([*args, "--log-level", "debug"])
    assert done.returncode == 0, text
    assert "debug: profile: ran the warm-up and timed forwards" in text, text
    assert not re.search(r"forward \d+/\d+[^\r]", text), repr(text)
    for line in re.split(r"\r\x1b\[K|\r?\n", text):
        assert not line or line.startswith("vin-inspect: "), repr(line)


@torch_test
def profile_timeout_ends_a_forward_that_cannot_be_stopped():
    single = fixture("inputs/single.npy")
    start = time.monotonic()
    p = run("profile", fixture("spin.pt"), "--inputs", single, "--timeout", "0.5")
    assert time.monotonic() - start < 30
    assert_clean_error(p, 1, r"spin\.pt: the forward on .*single\.npy did not finish within "
                             r"0\.5 s \(--timeout\) and could not be stopped at a module call$")


FORK_MODEL = """
import sys, torch, torch.nn as nn
from typing import Tuple
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Linear(8, 8)
    def forward(self, x):
        return x.relu()
def block_hook(self, input: Tuple[torch.Tensor], output: torch.Tensor):
    return self.inner(output)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.blk = Block()
        self.blk.register_forward_hook(block_hook)
    def forward(self, x):
        fut = torch.jit.fork(self.a, x)
        return self.blk(torch.jit.wait(fut) + self.b(x))
def hook(self, input: Tuple[torch.Tensor], output: torch.Tensor):
    return torch.jit.wait(torch.jit.fork(self.b, output))
net = Net()
net.register_forward_hook(hook)
torch.jit.script(net).save(sys.argv[1])
"""


@torch_test
def profile_attributes_forked_calls_and_the_hooks_calls():
    # torch.jit.fork runs its task on an inter-op thread for any caller; profile's instrumented
    # forward runs it inline at the fork, so the forked call is attributed where it was forked.
    # The root's scripted hook calls `b` again (through a fork of its own); blk's hook calls
    # blk.inner (profile's clone runs both hooks typed for its own classes).
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "fork.pt")
        run_script(tmp, "fork_model.py", FORK_MODEL, archive)
        p = run("capture", archive, "--shape", "x=64x8")
        assert p.returncode == 0, p.stderr
        captured = {}
        for line in p.stdout.splitlines():
            r = json.loads(line)
            if r["record"] == "TensorSnapshot" and r["direction"] == "output":
                captured[r["module_path"]] = captured.get(r["module_path"], 0) + 1
        assert captured == {"<root>": 1, "a": 1, "b": 2, "blk": 1, "blk.inner": 1}, captured
        trace = os.path.join(tmp, "trace.json")
        for extra in ((), ("--trace", trace)):
            p = run("profile", archive, "--shape", "x=64x8", "--warmup", "1", "--runs", "2", *extra)
            assert p.returncode == 0, p.stderr
            records = [json.loads(line) for line in p.stdout.splitlines()]
            modules = {r["module_path"]: r for r in records if r["record"] == "ModuleProfile"}
            assert {path: m["calls"] for path, m in modules.items()} == captured, modules
            linear = 2 * 64 * 8 * 8  # one Linear(8, 8) on 64 rows
            assert modules["a"]["flops"] == linear
            assert modules["b"]["flops"] == modules["b"]["self_flops"] == 2 * linear
            assert modules["blk.inner"]["flops"] == linear
            assert modules["blk"]["flops"] == linear and modules["blk"]["self_flops"] == 0
            assert modules["<root>"]["flops"] == 4 * linear
            assert modules["<root>"]["self_flops"] == 0
            assert records[-1]["flops"] == 4 * linear
        spans = json.load(open(trace))["traceEvents"]
        root = next(e for e in spans if e["name"] == "<root>")
        forked = next(e for e in spans if e["name"] == "a")
        assert root["ts"] <= forked["ts"] and forked["ts"] + forked["dur"] <= root["ts"] + root["dur"]


LINEAR_NET = """
import sys, torch, torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)
    def forward(self, x):
        FIRST
        return self.lin(x)
torch.jit.script(Net()).save(sys.argv[1])
"""


def linear_net(first):
    """A script saving a scripted Linear(4, 3) whose forward runs `first` before the layer (a
    further line of `first` carries its whole indentation, 8 spaces or more)."""
    return LINEAR_NET.replace("FIRST", first)


PRINTING_MODEL = linear_net('print("forward saw", x.size(0), "rows")')


@torch_test
def a_models_print_goes_to_stderr_never_among_the_records():
    # contract section 1: stdout carries records only; TorchScript's print() writes to stdout
    # unless told otherwise. profile: 1 warm-up + 2 timed + the clone's unrecorded and recorded
    # forwards; compare: A and B once each.
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "printing.pt")
        run_script(tmp, "printing_model.py", PRINTING_MODEL, archive)
        for args, forwards in ((("capture", archive), 1), (("compare", archive, archive), 2),
                               (("profile", archive, "--warmup", "1", "--runs", "2"), 5)):
            p = run(*args, "--shape", "x=2x4")
            assert p.returncode == 0, (args[0], p.stderr)
            assert p.stdout, args[0]
            for line in p.stdout.splitlines():
                json.loads(line)
            assert p.stderr.count("forward saw 2 rows\n") == forwards, (args[0], p.stderr)


MULTILINE_RAISE_MODEL = linear_net(
    'if x.size(0) > 1:\n            raise ValueError("rows must be 1\\nsee the model card\\tsection 2")')


@torch_test
def a_raised_message_of_several_lines_is_reported_whole_on_one_line():
    # contract 7.5: REASON is the message the forward raised; its newline and tab are escaped
    # (error messages are for a terminal), not the message cut at its first line
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "raising.pt")
        run_script(tmp, "raising_model.py", MULTILINE_RAISE_MODEL, archive)
        for command in ("capture", "profile"):
            p = run(command, archive, "--shape", "x=2x4")
            assert p.returncode == 1, (command, p.stderr)
            assert_clean_error(subprocess.CompletedProcess(p.args, 1, "", p.stderr), 1,
                               r"raising\.pt: the model's forward raised on --shape: ValueError: "
                               r"rows must be 1\\x0asee the model card\\x09section 2\n  at ")


NESTED_MODEL = """
import sys, numpy as np, torch, torch.nn as nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2)
    def forward(self, x, mask):
        return self.encoder(x, src_key_padding_mask=mask)
torch.manual_seed(0)
torch.jit.script(Encoder().eval()).save(sys.argv[1])
mask = np.zeros((2, 5), dtype=bool)
mask[0, 3:] = True
np.savez(sys.argv[2], x=np.random.RandomState(0).randn(2, 5, 8).astype(np.float32), mask=mask)
"""


@torch_test
def profile_writes_nested_tensor_shapes_as_capture_does():
    # an eval TransformerEncoder with a padding mask runs its layers on nested tensors (contract
    # 7.2): capture writes their shape with -1 where the components differ; profile's input and
    # output shapes are capture's (they were left out)
    with tempfile.TemporaryDirectory() as tmp:
        archive, inputs = os.path.join(tmp, "nested.pt"), os.path.join(tmp, "nested.npz")
        run_script(tmp, "nested_model.py", NESTED_MODEL, archive, inputs)
        p = run("capture", archive, "--inputs", inputs)
        assert p.returncode == 0, p.stderr
        snapshots = [r for r in map(json.loads, p.stdout.splitlines())
                     if r["record"] == "TensorSnapshot" and r["call_index"] == 0]
        captured = {}
        for s in snapshots:
            captured.setdefault((s["module_path"], s["direction"]), []).append(s["shape"])
        nested = [s for s in snapshots if s["sample_omission_reason"] == "nested_tensor"]
        assert nested, "no nested tensor captured"  # LibTorch 1.13 and 2.6 take that path
        p = run("profile", archive, "--inputs", inputs, "--warmup", "0", "--runs", "1")
        assert p.returncode == 0, p.stderr
        modules = [r for r in map(json.loads, p.stdout.splitlines())
                   if r["record"] == "ModuleProfile"]
        for m in modules:
            for direction in ("input", "output"):
                want = captured.get((m["module_path"], direction), [])
                assert m[direction + "_shapes"] == want, (m["module_path"], direction, want)
        for s in nested:
            m = next(m for m in modules if m["module_path"] == s["module_path"])
            assert s["shape"] in m[s["direction"] + "_shapes"], (s, m)
            assert -1 in s["shape"], s


@torch_test
def capture_usage_errors_exit_2():
    cases = [
        (("--max-tensors", "0"), r"error: --max-tensors: must be a positive integer, got '0'\n"),
        (("--max-bytes", "-5"), r"error: --max-bytes: must be a positive integer, got '-5'\n"),
        (("--max-container-depth", "two"),
         r"error: --max-container-depth: must be a positive integer, got 'two'\n"),
        (("--module", "encoder.blok"), r"unknown module path 'encoder\.blok'; closest registered "
                                       r"paths: 'encoder\.block'"),
        (("--device", "banana"), r"invalid device 'banana'"),
        (("--format", "xml"), r"xml"),
    ]
    for extra, pattern in cases:
        p = capture(*extra)
        assert p.returncode == 2, f"{extra}: exit {p.returncode} {p.stderr}"
        assert p.stdout == "", f"{extra}: {p.stdout[:200]}"
        assert re.search(pattern, p.stderr), f"{extra}: {pattern!r} not in {p.stderr!r}"
    p = run("capture", fixture("everything.pt"))
    assert p.returncode == 2 and "--inputs FILE or --shape NAME=DIMS is required" in p.stderr, p.stderr
    p = capture("--device", "cuda")
    has_cuda = p.returncode == 0
    if not has_cuda:
        assert p.returncode == 2 and "device 'cuda' is not available" in p.stderr, p.stderr


@torch_test
def capture_bad_inputs_exit_1_naming_the_file():
    for name, pattern in [
        ("inputs/everything_missing.npz", r"argument 'tokens' is missing; the model takes "
                                          r"forward\(x: Tensor, tokens: Tensor\)"),
        ("inputs/object.npz", r"object arrays"),
        ("inputs/truncated.npz", r"truncated or damaged zip archive"),
        ("inputs/sparse.pt", r"holds sparse tensors"),
        ("inputs/missing.npz", r"missing\.npz: no such file"),
    ]:
        p = capture(inputs=(name,))
        try:
            assert_clean_error(p, 1, pattern)
        except AssertionError as e:
            raise AssertionError(f"{name}: {e}") from None


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


@torch_test
def capture_stats_name_the_first_nonfinite_module():
    p = run("capture", fixture("nan_net.pt"), "--inputs", fixture("inputs/nan_net.npz"), "--stats")
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    summary = lines[-1]
    assert summary["first_nonfinite"] == {"module_path": "bad", "call_index": 0,
                                          "direction": "output", "tensor_path": ["output"],
                                          "recorded": True}, summary
    assert (summary["checked_tensors"], summary["nonfinite_tensors"]) == (10, 4), summary
    order = [(l["module_path"], l["direction"]) for l in lines[:-1]]
    assert order[:7] == [("<root>", "input"), ("lin", "input"), ("lin", "output"), ("act", "input"),
                         ("act", "output"), ("bad", "input"), ("bad", "output")], order
    bad_out = lines[6]
    assert bad_out["stats"]["nan_count"] == 6 and bad_out["stats"]["min"] is None, bad_out["stats"]
    assert bad_out["values"][0] == "NaN"
    table = run("capture", fixture("nan_net.pt"), "--inputs", fixture("inputs/nan_net.npz"), "--stats",
                "--format", "table").stdout
    assert "First non-finite: bad call 0 output output" in table, table[-300:]
    assert re.search(r"^bad +0 +output .*NON-FINITE \(6 NaN, 0 inf\)", table, re.M), table
    # without --stats the records are exactly docs/records.md's
    plain = run("capture", fixture("nan_net.pt"), "--inputs", fixture("inputs/nan_net.npz"))
    assert all("stats" not in json.loads(l) and "first_nonfinite" not in json.loads(l)
               for l in plain.stdout.splitlines())


@torch_test
def capture_stats_agree_with_numpy():
    import numpy as np
    arrays = np.load(fixture("inputs/everything_stats.npz"))
    x, tokens = arrays["arr_0"].astype(np.float64), arrays["arr_1"]
    p = capture("--stats", "--module", "<root>", inputs=("inputs/everything_stats.npz",))
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    fx, ft = lines[0]["stats"], lines[1]["stats"]
    finite = x[np.isfinite(x)]
    expected = {"min": finite.min(), "max": finite.max(), "mean": finite.mean(),
                "std": finite.std(ddof=1), "abs_max": np.abs(finite).max()}
    for key, value in expected.items():
        assert math.isclose(fx[key], float(value), rel_tol=1e-12, abs_tol=1e-12), (key, fx[key], value)
    assert (fx["nan_count"], fx["inf_count"], fx["zero_count"]) == (
        int(np.isnan(x).sum()), int(np.isinf(x).sum()), int((x == 0).sum())), fx
    assert ft == {"min": int(tokens.min()), "max": int(tokens.max()), "mean": float(tokens.mean()),
                  "zero_count": int((tokens == 0).sum())}, ft
    assert lines[-1]["first_nonfinite"] == {"module_path": "<root>", "call_index": 0,
                                            "direction": "input", "tensor_path": ["args", "0"],
                                            "recorded": True}


@torch_test
def stats_check_every_tensor_past_the_quotas_and_fail_on_nonfinite_exits_3():
    args = ("capture", fixture("nan_net.pt"), "--inputs", fixture("inputs/nan_net.npz"))
    # two snapshots allowed: the NaN appears later, found all the same, without a snapshot
    p = run(*args, "--stats", "--max-tensors", "2")
    assert p.returncode == 0, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    summary = lines[-1]
    assert summary["snapshots"] == 2 and summary["stopped_by"] == "max_tensors", summary
    assert summary["first_nonfinite"] == {"module_path": "bad", "call_index": 0,
                                          "direction": "output", "tensor_path": ["output"],
                                          "recorded": False}, summary
    assert (summary["checked_tensors"], summary["nonfinite_tensors"]) == (10, 4), summary
    table = run(*args, "--stats", "--max-tensors", "2", "--format", "table").stdout
    assert "First non-finite: bad call 0 output output (past the snapshot quotas" in table, table
    # --fail-on-nonfinite implies --stats and exits 3, every record printed
    p = run(*args, "--fail-on-nonfinite", "--max-tensors", "2")
    assert p.returncode == 3 and p.stdout.splitlines()[-1] == json.dumps(summary), p
    assert p.stderr == "", p.stderr
    clean = run("capture", fixture("everything.pt"), "--inputs",
                fixture("inputs/everything_positional.npz"), "--fail-on-nonfinite")
    assert clean.returncode == 0 and json.loads(clean.stdout.splitlines()[-1])["nonfinite_tensors"] == 0


NMS_IN_PYTHON = '''
import sys, json, numpy as np, torch, torchvision  # torchvision registers torch.ops.torchvision
print(torchvision.extension._get_extension_path("_C") if len(sys.argv) == 1 else json.dumps(
    torch.jit.load(sys.argv[1])(torch.from_numpy(np.load(sys.argv[2])["arr_0"])).tolist()))
'''

UNDEFINED_SYMBOL_LIBRARY = "namespace c10 { int not_in_this_libtorch(); }\n" \
                           "static int x = c10::not_in_this_libtorch();\n"


@torch_test
def custom_operators_load_with_load_library_and_vin_inspect_libraries():
    archive, boxes = fixture("nms_net.pt"), fixture("inputs/nms_boxes.npz")
    # without torchvision's library: the operator, its namespace, the option and where it is
    p = run("capture", archive, "--inputs", boxes)
    assert_clean_error(p, 1, r"nms_net\.pt: LibTorch [0-9.]+ cannot load this archive: it calls "
                             r"operator torchvision::nms \(namespace torchvision\), which no "
                             r"library loaded into LibTorch [0-9.]+ registers: pass the library "
                             r"that registers it with --load-library .*torchvision's is /\S+\.so")
    library = subprocess.run([sys.executable, "-c", NMS_IN_PYTHON], capture_output=True,
                             text=True, check=True).stdout.strip()
    assert os.path.isfile(library), library
    # with it: the root's output is what torchvision's nms gives in Python
    p = run("capture", archive, "--inputs", boxes, "--load-library", library)
    assert p.returncode == 0, p.stderr
    lines = [json.loads(line) for line in p.stdout.splitlines()]
    output = [r for r in lines if r.get("module_path") == "<root>" and r.get("direction") == "output"]
    expected = json.loads(subprocess.run([sys.executable, "-c", NMS_IN_PYTHON, archive, boxes],
                                         capture_output=True, text=True, check=True).stdout)
    assert len(output) == 1 and output[0]["values"] == expected, (output, expected)
    assert output[0]["dtype"] == "torch.int64", output
    # the same through the environment, after an empty entry and before the option's
    env = dict(os.environ, VIN_INSPECT_LIBRARIES=f":{library}")
    q = subprocess.run([ARGS.binary, "capture", archive, "--inputs", boxes], capture_output=True,
                       text=True, env=env, timeout=120)
    assert q.returncode == 0 and q.stdout == p.stdout, q.stderr
    # compare loads it too
    c = run("compare", archive, archive, "--inputs", boxes, "--load-library", library)
    assert c.returncode == 0, c.stderr
    # nothing that needs no LibTorch loads it: a wrong list does not matter to inspect-model
    env = dict(os.environ, VIN_INSPECT_LIBRARIES="/nonexistent/lib.so")
    q = subprocess.run([ARGS.binary, "inspect-model", archive], capture_output=True, text=True,
                       env=env, timeout=120)
    assert q.returncode == 0, q.stderr
    # a library that cannot be loaded: one line naming it and the loader's reason; exit 1, or 2
    # for compare (its error status)
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "missing.so")
        p = run("capture", archive, "--inputs", boxes, "--load-library", missing)
        assert_clean_error(p, 1, re.escape(missing) + r": cannot load this operator library: "
                                 r"no such file$")
        p = run("compare", archive, archive, "--inputs", boxes, "--load-library", missing)
        assert_clean_error(p, 2, re.escape(missing) + r": cannot load this operator library")
        p = run("capture", archive, "--inputs", boxes, "--load-library", boxes)
        assert_clean_error(p, 1, re.escape(boxes) + r": cannot load this operator library: "
                                 r".*(invalid ELF header|too short)")
        p = run("capture", archive, "--inputs", boxes, "--load-library", tmp)
        assert_clean_error(p, 1, re.escape(tmp) + r": cannot load this operator library: "
                                 r"not a regular file")
        compiler = shutil.which("g++") or shutil.which("c++")
        if compiler:  # built against "another LibTorch": a symbol this one lacks
            source, built = os.path.join(tmp, "other.cpp"), os.path.join(tmp, "other.so")
            with open(source, "w") as f:
                f.write(UNDEFINED_SYMBOL_LIBRARY)
            subprocess.run([compiler, "-shared", "-fPIC", "-o", built, source], check=True)
            p = run("capture", archive, "--inputs", boxes, "--load-library", built)
            assert_clean_error(p, 1, re.escape(built) + r": cannot load this operator library: "
                                     r"undefined symbol c10::not_in_this_libtorch\(\) \(was it "
                                     r"built against another LibTorch than [0-9.]+\?\)")


# --- diff -----------------------------------------------------------------------------------

@test
def diff_of_an_archive_with_itself_or_its_saved_records_is_identical():
    with tempfile.TemporaryDirectory() as tmp:
        sides = [fixture(n + ".pt") for n in ("everything", "convnet", "dict_model", "transformer",
                                              "quantized", "frozen")]
        sides += [os.path.join(ARGS.source, "configs", n) for n in ("net.yaml", "training.yaml",
                                                                    "plain.yaml")]
        for side in sides:
            saved = os.path.join(tmp, os.path.basename(side) + ".jsonl")
            sub = "inspect-model" if side.endswith(".pt") else "inspect-config"
            assert run(sub, side, "-o", saved).returncode == 0
            for other in (side, saved):
                p = run("diff", side, other)
                assert p.returncode == 0, f"{side} vs {other}: exit {p.returncode} {p.stdout[:300]} {p.stderr}"
                summary = json.loads(p.stdout)
                assert summary["record"] == "DiffSummary" and summary["identical"] is True, summary
            p = run("diff", saved, side, "--format", "table")
            assert p.returncode == 0 and p.stdout.endswith("identical: 0 added, 0 removed, 0 changed\n"), p.stdout
            assert "\ncompared: " in p.stdout, p.stdout


@test
def diff_reports_added_removed_and_changed_records():
    p = run("diff", fixture("convnet.pt"), fixture("everything.pt"))
    assert p.returncode == 1, p.stderr
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    changes, summary = lines[:-1], lines[-1]
    assert all(list(c) == ["record", "kind", "subject", "path", "field", "old", "new"] for c in changes)
    assert {"record": "Change", "kind": "changed", "subject": "model", "path": None,
            "field": "model_type", "old": "fixture_models.ConvNet",
            "new": "fixture_models.Everything"} in changes
    removed = [c["path"] for c in changes if c["kind"] == "removed"]
    added = [c["path"] for c in changes if c["kind"] == "added"]
    assert "classifier" in removed and "encoder.conv" in added, (removed, added)
    assert summary["added"] == len(added) and summary["removed"] == len(removed), summary
    assert summary["identical"] is False
    table = run("diff", fixture("convnet.pt"), fixture("everything.pt"), "--format", "table").stdout
    assert "~ model: model_type \"fixture_models.ConvNet\" -> \"fixture_models.Everything\"" in table, table[:400]
    assert "- module classifier (torch.nn.modules.linear.Linear, 650 parameters)" in table
    assert "+ module encoder.conv (torch.nn.modules.conv.Conv1d, 28 parameters)" in table


@test
def diff_ignore_and_the_ci_example_from_the_readme():
    with tempfile.TemporaryDirectory() as tmp:
        # a model whose training flags differ, nothing else: archive vs a copy of its records
        saved = os.path.join(tmp, "baseline.jsonl")
        run("model", fixture("everything.pt"), "-o", saved)
        with open(saved) as f:
            text = f.read().replace('"training": true', '"training": false')
        with open(saved, "w") as f:
            f.write(text)
        p = run("diff", saved, fixture("everything.pt"))
        assert p.returncode == 1 and all('"field": "training"' in l for l in p.stdout.splitlines()[:-1])
        p = run("diff", saved, fixture("everything.pt"), "--ignore", "training")
        assert p.returncode == 0, p.stdout
        # the README's CI step: fail when the parameter count changes
        step = ('vin-inspect diff "$BASE" "$NEW" --ignore training > diff.jsonl; '
                'if grep -q \'"field": "total_parameters"\' diff.jsonl; then '
                'echo "parameter count changed"; exit 1; fi')
        env = dict(os.environ, PATH=os.path.dirname(ARGS.binary) + ":" + os.environ["PATH"])
        same = subprocess.run(["bash", "-c", step], cwd=tmp, capture_output=True, text=True,
                              env=dict(env, BASE=saved, NEW=fixture("everything.pt")))
        assert same.returncode == 0, same.stdout + same.stderr
        changed = subprocess.run(["bash", "-c", step], cwd=tmp, capture_output=True, text=True,
                                 env=dict(env, BASE=saved, NEW=fixture("convnet.pt")))
        assert changed.returncode == 1 and "parameter count changed" in changed.stdout


def diff_changes(*args):
    p = run("diff", *args)
    assert p.returncode in (0, 1), f"{args}: exit {p.returncode}: {p.stderr}"
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    return p.returncode, lines[:-1], lines[-1]


def has_change(changes, **fields):
    return any(all(c.get(k) == v for k, v in fields.items()) for c in changes)


@test
def diff_reads_archives_with_every_detail_and_names_what_changed():
    d = lambda name: fixture(os.path.join("diff", name))  # noqa: E731
    # half and double: dtypes, sizes and checksums of every tensor, the byte totals
    for copy, dtype, ratio in (("net_half.pt", "torch.float16", 0.5), ("net_double.pt", "torch.float64", 2)):
        status, changes, summary = diff_changes(d("net.pt"), d(copy))
        assert status == 1 and summary["compared"] == ["model", "modules", "attributes", "tensors",
                                                       "signatures"], summary
        assert has_change(changes, kind="changed", subject="tensor", path="conv.weight", field="dtype",
                          old="torch.float32", new=dtype), changes[:5]
        assert has_change(changes, subject="tensor", path="norm.running_mean", field="dtype", new=dtype)
        nbytes = next(c for c in changes if c["path"] == "conv.weight" and c["field"] == "nbytes")
        assert nbytes["new"] == nbytes["old"] * ratio
        assert has_change(changes, subject="model", path=None, field="parameter_bytes")
        assert {c["subject"] for c in changes} == {"model", "tensor"}, changes
    # retrained weights: only checksums change; the README's CI rule then passes
    status, changes, _ = diff_changes(d("net.pt"), d("net_retrained.pt"))
    assert status == 1 and changes and all(
        c["subject"] == "tensor" and c["field"] == "storage_crc32" for c in changes), changes
    assert has_change(changes, path="conv.weight") and has_change(changes, path="norm.num_batches_tracked")
    status, changes, _ = diff_changes(d("net.pt"), d("net_retrained.pt"), "--ignore", "storage_crc32")
    assert status == 0 and not changes
    # a changed kernel size: the attributes and the weight's shape
    _, changes, _ = diff_changes(d("net.pt"), d("net_kernel5.pt"))
    assert has_change(changes, kind="changed", subject="attribute", path="conv.kernel_size", field=None,
                      old=[3, 3], new=[5, 5])
    assert has_change(changes, subject="tensor", path="conv.weight", field="shape", old=[8, 3, 3, 3],
                      new=[8, 3, 5, 5])
    # a new forward argument, a changed default: the signature's arguments, old and new in full
    x = {"name": "x", "type": "Tensor", "has_default": False, "default": None}
    scale = {"name": "scale", "type": "float", "has_default": True, "default": 1.0}
    _, changes, _ = diff_changes(d("net.pt"), d("net_new_arg.pt"))
    assert changes == [{"record": "Change", "kind": "changed", "subject": "signature", "path": "forward",
                        "field": "arguments", "old": [x, scale],
                        "new": [x, scale, {"name": "shift", "type": "float", "has_default": True,
                                           "default": 0.0}]}], changes
    _, changes, _ = diff_changes(d("net.pt"), d("net_default2.pt"))
    assert changes == [{"record": "Change", "kind": "changed", "subject": "signature", "path": "forward",
                        "field": "arguments", "old": [x, scale], "new": [x, dict(scale, default=2.0)]}]
    table = run("diff", d("net.pt"), d("net_kernel5.pt"), "--format", "table").stdout
    assert "~ attribute conv.kernel_size: [3, 3] -> [5, 5]\n" in table, table
    assert "compared: model, modules, attributes, tensors, signatures\n" in table


@test
def diff_of_an_archive_with_its_own_saved_records_in_every_form_is_identical():
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("diff/net.pt", "everything.pt", "quantized.pt", "resnet18.pt"):
            archive = fixture(name)
            for flags, form in (([], "plain.jsonl"), (["--all"], "all.jsonl"),
                                (["--all", "--format", "json"], "all.json"),
                                (["--format", "json"], "plain.json")):
                saved = os.path.join(tmp, form)
                assert run("model", archive, *flags, "-o", saved).returncode == 0
                for old, new in ((saved, archive), (archive, saved)):
                    status, changes, summary = diff_changes(old, new)
                    assert status == 0 and not changes, f"{name} {form}: {changes[:3]}"
                    expected = ["model", "modules"] + (["attributes", "tensors", "signatures"]
                                                        if "--all" in flags else [])
                    assert summary["compared"] == expected, (form, summary)


@test
def diff_compares_values_inside_mappings_the_config_walk_leaves_alone():
    d = lambda name: fixture(os.path.join("diff", name))  # noqa: E731
    expected = {"record": "Change", "kind": "changed", "subject": "field", "path": ["extra", "depth"],
                "field": "value", "old": 5, "new": 50}
    for old, new, flags in ((d("config_depth5.yaml"), d("config_depth50.yaml"), []),
                            (d("cfg_depth5.pt"), d("cfg_depth50.pt"), ["--config"]),
                            (d("config_depth5.yaml"), d("cfg_depth50.pt"), ["--config"])):
        status, changes, summary = diff_changes(old, new, *flags)
        assert status == 1 and changes == [expected], (old, new, changes)
        assert summary["kind"] == "config" and summary["compared"] == ["config", "fields"]
    # without --config the archives are compared as models: the same model, identical
    status, changes, summary = diff_changes(d("cfg_depth5.pt"), d("cfg_depth50.pt"))
    assert status == 0 and summary["kind"] == "model"


@test
def diff_ignore_accepts_only_fields_the_records_have():
    p = run("diff", fixture("convnet.pt"), fixture("everything.pt"), "--ignore", "trainig")
    assert_clean_error(p, 2, r"--ignore trainig: no compared record has this field; the closest: training")
    p = run("diff", fixture("diff/config_depth5.yaml"), fixture("diff/config_depth50.yaml"),
            "--ignore", "storage_crc32")
    assert_clean_error(p, 2, r"--ignore storage_crc32: no compared record has this field")
    p = run("diff", fixture("diff/config_depth5.yaml"), fixture("diff/config_depth50.yaml"),
            "--ignore", "value")
    assert p.returncode == 0, p.stdout


@test
def the_readmes_ci_example_passes_new_weights_and_fails_a_changed_model():
    with open(os.path.join(ARGS.source, "README.md")) as f:
        section = f.read().split("#### In CI")[1].split("```sh")[1].split("```")[0]
    commands = [l.split("#")[0].strip() for l in section.splitlines()]
    commands = [c for c in commands if c.startswith("vin-inspect ")]
    assert len(commands) == 2 and "--all" in commands[0], commands
    env = dict(os.environ, PATH=os.path.dirname(ARGS.binary) + ":" + os.environ["PATH"])
    for branch, status in (("net_retrained.pt", 0), ("net.pt", 0), ("net_kernel5.pt", 1),
                           ("net_half.pt", 1), ("net_default2.pt", 1)):
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(fixture("diff/net.pt"), os.path.join(tmp, "net.pt"))
            main = subprocess.run(["bash", "-c", commands[0]], cwd=tmp, env=env, capture_output=True)
            assert main.returncode == 0, main.stderr
            shutil.copy(fixture("diff/" + branch), os.path.join(tmp, "net.pt"))
            p = subprocess.run(["bash", "-c", commands[1]], cwd=tmp, env=env, capture_output=True,
                               text=True)
            assert p.returncode == status, f"{branch}: exit {p.returncode}: {p.stdout[-500:]} {p.stderr}"


@test
def diff_errors_exit_2():
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bad.jsonl")
        with open(bad, "w") as f:
            f.write('{"record": "TensorSnapshot"}\n')
        empty = os.path.join(tmp, "empty.jsonl")
        open(empty, "w").close()
        cases = [
            ((os.path.join(ARGS.source, "configs", "net.yaml"), fixture("convnet.pt")),
             r"cannot compare config records \(.*net\.yaml\) with model records"),
            ((fixture("convnet.pt"), fixture("missing.pt")), r"missing\.pt: no such file"),
            ((fixture("convnet.pt"), fixture("state_dict.pt")), r"a torch\.save file"),
            ((bad, fixture("convnet.pt")), r"bad\.jsonl:1: starts with a TensorSnapshot record"),
            ((empty, fixture("convnet.pt")),
             r"empty\.jsonl: empty file: no records, no archive, no configuration rendering"),
            ((fixture("convnet.pt"),), r"NEW is required"),
        ]
        for args, pattern in cases:
            p = run("diff", *args)
            assert p.returncode == 2, f"{args}: exit {p.returncode}"
            assert p.stdout == "" and re.search(pattern, p.stderr), f"{args}: {p.stderr!r}"


# --- version, help, logging, docs ------------------------------------------------------------

@torch_test
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
    # every option --help lists, of the program and of each subcommand (none hard-coded here)
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", run("--help").stdout))
    for name, _ in commands:
        options |= set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", run(name, "--help").stdout))
    assert {"--format", "--inputs", "--timeout", "--ignore"} <= options, options
    for option in sorted(options):
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
    parser.add_argument("--no-torch", action="store_true", help="the binary was built without LibTorch")
    parser.add_argument("tests", nargs="*", help="run only these tests (default: all)")
    ARGS = parser.parse_args()
    ARGS.binary = os.path.abspath(ARGS.binary)
    ARGS.fixtures = os.path.abspath(ARGS.fixtures)
    ARGS.source = os.path.abspath(ARGS.source)
    passed = failed = 0
    for fn in TESTS:
        if ARGS.tests and fn.__name__ not in ARGS.tests:
            continue
        if ARGS.no_torch and getattr(fn, "needs_torch", False):
            print(f"SKIP {fn.__name__} (built without LibTorch)")
            continue
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
