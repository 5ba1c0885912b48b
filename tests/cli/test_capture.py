#!/usr/bin/python3
"""capture end to end: its records in every format, several --inputs files, pipes, --save
files read back with numpy, --shape inputs rebuilt in Python, the quotas, --stats and
--fail-on-nonfinite, --timeout, forwards that raise or print, --module patterns, usage
errors and bad inputs, and custom operators (--load-library, VIN_INSPECT_LIBRARIES).

usage: test_capture.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import math
import os
import resource
import re
import shutil
import subprocess
import sys
import tempfile
import time

import cli_common
from cli_common import (ARGS, assert_clean_error, assert_equal, fixture, model_source, run,
                        run_script, run_with_pipes, same_but_file_names, shared_examples,
                        torch_test)


# --- capture output ---------------------------------------------------------------------------

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


# --- --save and --shape -----------------------------------------------------------------------

KEYS_MODEL = model_source("keys_model.py")


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


SHAPES_MODEL = model_source("shapes_model.py")


REBUILD = model_source("rebuild_shape_inputs.py")


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
                (["--int-high", "1e400"], r"--int-high: must be a positive integer, got '1e400'"),
                (["--shape", "x=99999999999x99999999999"],
                 r"would hold more than 9223372036854775807 bytes, more than LibTorch counts"),
                (["--shape", "x=1000000000000"],
                 r"--shape x=1000000000000: the tensor would hold 4000000000000 bytes, past the "
                 r"17179869184 bytes --shape makes at most"),
                (["--shape", "x=2:int8", "--int-high", "1000"],
                 r"--int-high 1000: --shape x is int8, which holds values below 128 only")):
            args = flags if "--shape" in flags else ["--shape", "x=2x4", *flags]
            p = run("capture", archive, *args)
            assert_clean_error(p, 2, message)
        for flag, value in (("--atol", "nan"), ("--rtol", "inf"), ("--atol", "-1")):
            p = run("compare", archive, archive, "--shape", "x=2x4", flag, value)
            assert_clean_error(p, 2, flag + r": must be a finite number >= 0, got '" + value + "'")


SAVED_AGAINST_RECORDS = model_source("saved_against_records.py")


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


# --- quotas, forwards that raise or run too long, --module ------------------------------------

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
    # error, and the process ends
    p = run("capture", fixture("spin.pt"), "--inputs", single, "--timeout", "0.5")
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert_clean_error(subprocess.CompletedProcess(p.args, 1, "", p.stderr), 1,
                       r"spin\.pt: the forward on .*single\.npy did not finish within "
                       r"0\.5 s \(--timeout\) and could not be stopped at a module call$")
    lines = [json.loads(l) for l in p.stdout.splitlines()]
    assert [(l.get("module_path"), l.get("direction")) for l in lines] == [
        ("<root>", "input"), ("first", "input"), ("first", "output"), (None, None)], lines
    # with -o the command failed: it leaves none of its new files, and an old one as it was
    # (contract 9.1)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "records.jsonl")
        p = run("capture", fixture("spin.pt"), "--inputs", single, "--timeout", "0.5", "-o", out)
        assert p.returncode == 1 and p.stdout == "", (p.returncode, p.stdout)
        assert not os.path.exists(out) and os.listdir(tmp) == [], os.listdir(tmp)
        with open(out, "w") as f:
            f.write("yesterday's records\n")
        p = run("capture", fixture("spin.pt"), "--inputs", single, "--timeout", "0.5", "-o", out)
        assert p.returncode == 1 and open(out).read() == "yesterday's records\n"
        assert os.listdir(tmp) == ["records.jsonl"], os.listdir(tmp)
    for bad in ("0", "-1", "soon"):
        assert_clean_error(run("capture", fixture("spin.pt"), "--inputs", single, "--timeout", bad),
                           2, r"--timeout")


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
                       r"--module 'layer9\.\*': no module path matches it; closest registered "
                       r"paths:")


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


# --- what the model's forward prints or raises ------------------------------------------------

LINEAR_NET = model_source("linear_net.py")


def linear_net(first):
    """A script saving a scripted Linear(4, 3) whose forward runs `first` before the layer (a
    further line of `first` carries its whole indentation, 8 spaces or more)."""
    return LINEAR_NET.replace("FIRST", first)


PRINTING_MODEL = linear_net('print("forward saw", x.size(0), "rows")')


@torch_test
def a_models_print_goes_to_stderr_never_among_the_records():
    # contract section 1: stdout carries records only; TorchScript's print() writes to stdout
    # unless told otherwise. profile: 1 warm-up + 2 timed + the clone's unrecorded and recorded
    # forwards (at least one each; as many as its first forward's time asks, docs/profile.md);
    # compare: A and B once each.
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
            printed = p.stderr.count("forward saw 2 rows\n")
            assert printed == forwards or (args[0] == "profile" and printed > forwards), \
                (args[0], p.stderr)


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


NUL_RAISES = [
    # (the raise, the reason printed): LibTorch's interpreter cuts a raised message at its first
    # NUL; the literal in the serialized code the report quotes gives it back whole
    ('raise ValueError("before\\x00after the nul")', "ValueError: before\\x00after the nul"),
    ('raise RuntimeError("\\x00at the start")', "RuntimeError: \\x00at the start"),
    ('raise ValueError("line one\\nline\\x00two\\x01")',
     "ValueError: line one\\x0aline\\x00two\\x01"),
    # a message TorchScript cannot print inline (non-ASCII) sits in constants.pkl, out of the
    # report's reach: it stays as LibTorch gives it (docs/capture.md)
    ('raise ValueError("caf\\u00e9\\x00after")', "ValueError: caf\u00e9"),
]


@torch_test
def a_raised_message_holding_a_nul_is_reported_whole_and_escaped():
    # issue 41: a NUL in a forward's error message is printed whole, escaped
    with tempfile.TemporaryDirectory() as tmp:
        for index, (raise_line, reason) in enumerate(NUL_RAISES):
            archive = os.path.join(tmp, f"nul{index}.pt")
            run_script(tmp, f"nul{index}.py",
                       linear_net(f"if x.size(0) > 1:\n            {raise_line}"), archive)
            for command in ("capture", "profile", "compare"):
                args = (command, archive) + ((archive,) if command == "compare" else ())
                p = run(*args, "--shape", "x=2x4")
                status = 2 if command == "compare" else 1  # compare's errors exit as diff's
                assert p.returncode == status, (command, raise_line, p.stderr)
                assert_clean_error(subprocess.CompletedProcess(p.args, status, "", p.stderr), status,
                                   rf"nul{index}\.pt: the model's forward raised on --shape: "
                                   + re.escape(reason) + r"\n  at ")


# --- usage errors and bad inputs --------------------------------------------------------------

@torch_test
def capture_usage_errors_exit_2():
    cases = [
        (("--max-tensors", "0"), r"error: --max-tensors: must be a positive integer, got '0'\n"),
        (("--max-bytes", "-5"), r"error: --max-bytes: must be a positive integer, got '-5'\n"),
        (("--max-container-depth", "two"),
         r"error: --max-container-depth: must be a positive integer, got 'two'\n"),
        (("--module", "encoder.blok"), r"--module 'encoder\.blok': unknown module path; closest "
                                       r"registered paths: 'encoder\.block'"),
        (("--device", "banana"), r"--device banana: not a device"),
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
        assert p.returncode == 2 and "--device cuda: not available" in p.stderr, p.stderr


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
def an_npz_with_one_name_twice_is_a_usage_error_for_every_command_that_runs():
    # numpy.load keeps one of two members named alike: the tool does not guess (issue 64)
    model = fixture("convnet.pt")
    for name, says in (("duplicate_member.npz", r"two arrays named 'arr_0' \(the member "
                                                r"arr_0\.npy twice\)"),
                       ("duplicate_name.npz", r"two arrays named 'x' \(the members x and "
                                              r"x\.npy\)")):
        inputs = fixture("inputs/" + name)
        for args in (["capture", model, "--inputs", inputs],
                     ["profile", model, "--inputs", inputs],
                     ["compare", model, model, "--inputs", inputs],
                     ["compare", inputs, model, "--shape", "images=1x3x8x8"]):
            p = run(*args)
            try:
                assert_clean_error(p, 2, re.escape(inputs) + ": " + says)
            except AssertionError as e:
                raise AssertionError(f"{args}: {e}") from None


# --- --stats ----------------------------------------------------------------------------------

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


# --- custom operators -------------------------------------------------------------------------

NMS_IN_PYTHON = model_source("nms_in_python.py")


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



@torch_test
def a_shape_the_allocator_refuses_names_the_option_and_the_bytes():
    # within --shape's 16 GiB but not within the memory the process may have: the message names
    # the option, the argument and the bytes, never LibTorch's allocator text (issue 41)
    def small_address_space():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    for command in ("capture", "profile", "compare"):
        args = [command, fixture("convnet.pt")] + ([fixture("convnet.pt")] if command == "compare" else [])
        p = subprocess.run([ARGS.binary, *args, "--shape", "x=1x3x30000x30000"], capture_output=True,
                           text=True, timeout=120, preexec_fn=small_address_space,
                           env=dict(os.environ, GLIBC_TUNABLES=""))
        assert_clean_error(p, 2, r"--shape x=1x3x30000x30000:float32: cannot allocate the "
                                 r"10800000000 bytes of the tensor \(out of memory\)")
        assert "alloc_cpu" not in p.stderr and "DefaultCPUAllocator" not in p.stderr, p.stderr
    # the example: past the bound, refused before anything is allocated
    p = run("profile", fixture("convnet.pt"), "--shape", "x=100000x100000x100")
    assert_clean_error(p, 2, r"--shape x=100000x100000x100: the tensor would hold 4000000000000 "
                             r"bytes")


@torch_test
def a_device_that_does_not_exist_is_refused_not_mapped_to_another():
    for command in ("capture", "profile"):
        p = run(command, fixture("convnet.pt"), "--shape", "images=1x3x8x8", "--device", "cpu:1")
        assert_clean_error(p, 2, r"--device cpu:1: no such device: there is one cpu device")
    for option in ("--device-a", "--device-b"):
        p = run("compare", fixture("convnet.pt"), fixture("convnet.pt"), "--shape",
                "images=1x3x8x8", option, "cpu:3")
        assert_clean_error(p, 2, option + r" cpu:3: no such device")
    # every way a device can be wrong names the option with the value (issue 64)
    for device, says in (("banana", "not a device"), ("meta:2", "no such device"),
                         ("mps", "not supported")):
        p = run("profile", fixture("convnet.pt"), "--shape", "images=1x3x8x8", "--device", device)
        assert_clean_error(p, 2, "--device " + device + ": " + says)

if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
