#!/usr/bin/python3
"""profile end to end: its records in every format, --trace, bad input, the progress line
on a terminal, --timeout, forked calls and hooks, nested tensors' shapes as capture's.

usage: test_profile.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import cli_common
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "reference"))
import trace_events  # noqa: E402
from cli_common import ARGS, assert_clean_error, fixture, model_source, run, run_script, torch_test


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
    assert list(summary) == ["record", "device", "device_name", "threads", "mode", "runner",
                             "warmup", "runs",
                             "latency_ms", "throughput", "warnings", "flops", "macs", "uncounted_operators",
                             "flops_complete", "instrumented_ms", "overhead",
                             "peak_bytes", "parameter_bytes", "buffer_bytes", "modules",
                             "operators", "nested_operators", "inputs", "seed", "torch_version",
                             "vin_inspect_version", "schema_version"], list(summary)
    assert (summary["device"], summary["warmup"], summary["runs"]) == ("cpu", 1, 2), summary
    assert summary["seed"] == 0, summary
    assert summary["modules"] == kinds.count("ModuleProfile") > 1
    assert summary["operators"] == kinds.count("OperatorProfile") > 1
    assert list(lines[0]) == ["record", "module_path", "module_type", "calls", "parameters",
                              "input_shapes", "output_shapes", "flops", "macs", "self_flops",
                              "time_ms", "self_time_ms", "allocated_bytes", "peak_bytes"], \
        list(lines[0])
    assert lines[0]["module_path"] == "<root>" and lines[0]["input_shapes"] == [[2, 2, 5], [2, 3]]
    doc = json.loads(profile("--format", "json").stdout)
    assert list(doc)[:3] == ["modules", "operators", "device"], list(doc)
    assert [m["module_path"] for m in doc["modules"]] == [
        l["module_path"] for l in lines if l["record"] == "ModuleProfile"]
    table = profile("--format", "table").stdout
    assert "Module (type)" in table and "Operator" in table and "Latency on cpu: median" in table
    assert re.search(r"^<root> \(", table.splitlines()[3]), table


def cpu_model_name():
    """/proc/cpuinfo's first `model name` (what device_name gives on x86), else None."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    return None


@torch_test
def profile_summary_says_what_it_ran_on():
    # contract 9.3: threads (set by --threads), the CPU, the mode, the inputs (file and SHA-256,
    # or the --shape tensors), the versions and the schema's; MACs are half the FLOPs everywhere
    import hashlib
    inputs = fixture("inputs/everything_positional.npz")
    version = run("--version").stdout.split()[1]
    for threads in ("1", "2"):
        lines = [json.loads(l) for l in profile("--threads", threads).stdout.splitlines()]
        summary = lines[-1]
        assert summary["threads"]["intra_op"] == int(threads), summary["threads"]
        assert summary["threads"]["inter_op"] >= 1, summary["threads"]
        assert summary["mode"] == "training", summary  # as saved: scripted in training mode
        with open(inputs, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        assert summary["inputs"] == {"file": inputs, "sha256": digest}, summary["inputs"]
        assert summary["vin_inspect_version"] == version and summary["schema_version"] == 1
        assert re.fullmatch(r"\d+\.\d+\.\d+.*", summary["torch_version"]), summary
        if cpu_model_name():
            assert summary["device_name"] == cpu_model_name(), summary["device_name"]
        for r in lines:
            assert r["macs"] == r["flops"] // 2 and r["flops"] % 2 == 0, r
    # LibTorch's own choice without --threads: what Python's torch chooses on this machine
    default = json.loads(profile().stdout.splitlines()[-1])["threads"]["intra_op"]
    python = subprocess.run([sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert str(default) == python, (default, python)
    shaped = json.loads(run("profile", fixture("everything.pt"), "--shape", "x=2x2x5",
                            "--shape", "tokens=2x3:int64", "--runs", "1", "--warmup", "0",
                            "--eval", "--seed", "7").stdout.splitlines()[-1])
    assert shaped["mode"] == "eval" and shaped["seed"] == 7, shaped
    assert shaped["inputs"] == {"shapes": [{"name": "x", "shape": [2, 2, 5], "dtype": "float32"},
                                           {"name": "tokens", "shape": [2, 3],
                                            "dtype": "int64"}]}, shaped["inputs"]
    for bad in ("0", "1025", "two"):
        assert_clean_error(profile("--threads", bad), 2, "--threads")


@torch_test
def profile_warns_of_latency_it_cannot_vouch_for():
    # --warmup 0: on stderr and in the summary's warnings; with warm-up, none of that one
    def once(warmup):
        return run("profile", fixture("everything.pt"), "--inputs",
                   fixture("inputs/everything_positional.npz"), "--warmup", warmup, "--runs", "1")
    p = once("0")
    summary = json.loads(p.stdout.splitlines()[-1])
    assert p.returncode == 0 and summary["warnings"] and \
        summary["warnings"][0].startswith("--warmup 0: the first timed forward"), summary
    assert "vin-inspect: warning: --warmup 0:" in p.stderr, p.stderr
    warmed = json.loads(once("2").stdout.splitlines()[-1])
    assert warmed["warnings"] == [], warmed["warnings"]


def operator_records(*extra):
    """The fixture's profile with `extra`: its OperatorProfile records by operator, and its
    summary."""
    lines = [json.loads(l) for l in profile(*extra).stdout.splitlines()]
    return {l["operator"]: l for l in lines if l["record"] == "OperatorProfile"}, lines[-1]


@torch_test
def profile_module_narrows_the_operators_to_those_inside():
    # contract 9.3: --module encoder keeps the operator calls made inside encoder (its conv,
    # norm, block), not the root's own (its embedding, its head); the FLOPs stay the forward's
    every, whole = operator_records()
    inside, narrowed = operator_records("--module", "encoder")
    assert inside and set(inside) < set(every), (sorted(inside), sorted(every))
    assert all(inside[o]["calls"] <= every[o]["calls"] for o in inside), inside
    assert "aten::conv1d" in inside and "aten::embedding" in every and \
        "aten::embedding" not in inside, sorted(inside)
    assert narrowed["operators"] == len(inside) and narrowed["flops"] == whole["flops"], narrowed


@torch_test
def profile_lists_the_operators_no_rule_counts():
    # contract 9.3: an eval TransformerEncoder takes LibTorch's fused fast path, whose fused
    # Linear + ReLU no FLOP rule counts: listed, the total marked incomplete, the table says so;
    # in training mode (no fast path) every operator is counted or without matrix work
    with tempfile.TemporaryDirectory() as tmp:
        source = (
            "import sys, torch, torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)\n"
            "m = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)\n"
            "torch.jit.script(m.eval()).save(sys.argv[1] + '/eval.pt')\n"
            "torch.jit.script(m.train()).save(sys.argv[1] + '/train.pt')\n")
        run_script(tmp, "encoder.py", source, tmp)
        out, layers = {}, {}
        for mode in ("eval", "train"):
            p = run("profile", os.path.join(tmp, mode + ".pt"), "--shape", "src=2x6x32", "--runs",
                    "1", "--warmup", "0", "--seed", "1")
            assert p.returncode == 0, p.stderr
            out[mode] = json.loads(p.stdout.splitlines()[-1])
            layers[mode] = {r["module_path"]: r for r in map(json.loads, p.stdout.splitlines())
                            if r["record"] == "ModuleProfile"}
        # why the eval layers have no child records: their children were not called, the fused
        # kernel was; in training every child runs and nothing is said
        for path in ("layers.0", "layers.1"):
            layer = layers["eval"][path]
            assert {"self_attn", "linear1", "linear2", "norm1", "norm2"} <= \
                set(layer["uncalled_children"]), layer
            assert layer["called_instead"] and all(
                op.startswith("aten::") for op in layer["called_instead"]), layer
            assert "uncalled_children" not in layers["train"][path], layers["train"][path]
        assert "uncalled_children" not in layers["eval"]["<root>"], layers["eval"]["<root>"]
        fused = out["eval"]
        assert fused["flops_complete"] is False and fused["uncounted_operators"], fused
        for op in fused["uncounted_operators"]:
            assert set(op) == {"name", "calls", "time_ms"} and op["calls"] >= 1, op
            assert op["time_ms"] >= 0, op
        assert fused["flops"] < out["train"]["flops"], (fused["flops"], out["train"]["flops"])
        assert out["train"]["flops_complete"] is True, out["train"]["uncounted_operators"]
        assert out["train"]["uncounted_operators"] == []
        table = run("profile", os.path.join(tmp, "eval.pt"), "--shape", "src=2x6x32", "--runs",
                    "1", "--warmup", "0", "--format", "table").stdout
        names = [op["name"] for op in fused["uncounted_operators"]]
        assert re.search(r"^FLOPs incomplete: no rule counts " + re.escape(names[0]), table,
                         re.MULTILINE), table
        assert re.search(r"^No rows under layers\.0: its forward did not call self_attn, .*\(it\s+"
                         r"called aten::\w+", table, re.MULTILINE | re.DOTALL), table


@torch_test
def profile_errors_name_the_module_and_the_operator():
    # issue 42: a forward that raises names where, beside TorchScript's source line: the module
    # call open and the operator that raised (as the code called it, and what it dispatched to)
    with tempfile.TemporaryDirectory() as tmp:
        source = (
            "import sys, torch, torch.nn as nn\n"
            "class Check(nn.Module):\n"
            "    def forward(self, x):\n"
            "        if x.shape[0] > 1:\n"
            "            raise RuntimeError('batch too large')\n"
            "        return x\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.first = nn.Linear(8, 8)\n"
            "        self.check = Check()\n"
            "        self.bad = nn.Linear(5, 3)\n"
            "    def forward(self, x):\n"
            "        return self.bad(self.check(self.first(x)))\n"
            "torch.jit.script(Net()).save(sys.argv[1] + '/net.pt')\n")
        run_script(tmp, "net.py", source, tmp)
        archive = os.path.join(tmp, "net.pt")
        p = run("profile", archive, "--shape", "x=1x8")
        assert_clean_error(p, 1, r"mat1 and mat2 shapes cannot be multiplied")
        # on TorchScript's "at" line: the message stays two lines
        assert re.search(r"\n  at .*, in module 'bad' \(torch\.nn\.modules\.linear\.Linear\), "
                         r"in operator aten::linear( \(at its aten::\w+\))?\n?$", p.stderr), p.stderr
        p = run("profile", archive, "--shape", "x=2x8")
        assert_clean_error(p, 1, r"batch too large")
        assert re.search(r"in module 'check' \(\S*Check\)\n?$", p.stderr), p.stderr


@torch_test
def profile_table_fits_its_width_and_folds_by_depth():
    def table(*extra, columns="100"):
        env = dict(os.environ, COLUMNS=columns)
        p = subprocess.run([ARGS.binary, *profile_args("--format", "table", *extra)],
                           capture_output=True, text=True, timeout=120, env=env)
        assert p.returncode == 0, p.stderr
        return p.stdout
    lines = table().splitlines()
    assert max(len(l) for l in lines) <= 100, "\n".join(lines)
    wide = table(columns="400")
    assert "cut to fit" not in wide and "Self ms" in wide and "MACs" in wide, wide
    # --depth 0: the root alone, its self time all of its time
    rows = [l for l in table("--depth", "0").splitlines() if l.startswith("<root> (")]
    assert len(rows) == 1, rows
    folded = table("--depth", "0")
    assert re.search(r"^\d+ modules deeper than --depth 0 folded", folded, re.MULTILINE), folded
    root = json.loads(profile().stdout.splitlines()[0])
    assert root["module_path"] == "<root>" and root["self_time_ms"] < root["time_ms"], root
    assert_clean_error(profile("--depth", "1"), 2, r"--depth: folds the rows of --format table")
    assert_clean_error(profile("--depth", "-1", "--format", "table"), 2, r"--depth")


@torch_test
def profile_nested_operators_counts_every_call():
    outer, outer_summary = operator_records()
    every, summary = operator_records("--nested-operators")
    assert summary["nested_operators"] is True and outer_summary["nested_operators"] is False
    # the operators dispatched from the code's: more records, each outermost one's calls kept
    assert set(outer) < set(every), (sorted(outer), sorted(every))
    assert all(every[o]["calls"] >= outer[o]["calls"] for o in outer)
    assert summary["flops"] == outer_summary["flops"]  # the forward's FLOPs counted once
    for o in list(outer.values()) + list(every.values()):
        assert 0 <= o["self_time_ms"] <= o["time_ms"] + 1e-9, o
    # aten::linear's FLOPs are its addmm's (or matmul's): the nested record counts them too
    if "aten::linear" in outer:
        inner = [every[o] for o in ("aten::addmm", "aten::matmul", "aten::mm") if o in every]
        assert inner and sum(o["flops"] for o in inner) >= outer["aten::linear"]["flops"], inner


@torch_test
def profile_trace_is_chrome_trace_json_complete_or_absent():
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        p = profile("--trace", trace)
        assert p.returncode == 0, p.stderr
        doc = json.load(open(trace))
        # what Perfetto's JSON importer reads of it: names, two tracks of stacked slices, a counter
        assert trace_events.problems(doc) == [], trace_events.problems(doc)
        read = trace_events.tracks(doc)
        assert read["process_names"] == {1: "vin-inspect profile " + fixture("everything.pt")}
        assert read["thread_names"] == {(1, 1): "instrumented forward",
                                        (1, 2): "warm-up and timed forwards"}, read
        runs = [s[2] for s in read["slices"][(1, 2)]]
        assert runs == ["warm-up 1", "timed run 1", "timed run 2"], runs
        forward = read["slices"][(1, 1)]
        assert forward[0][2] == "instrumented forward" and forward[1][2] == "<root>", forward[:2]
        # the instrumented forward after the timed ones, every module and operator inside it
        assert forward[0][0] >= read["slices"][(1, 2)][-1][1]
        assert all(parent is not None for s, parent in trace_events.nesting(forward)[1:])
        cats = {s[3]["cat"] for s in forward[1:]}
        assert cats == {"module", "operator"}, cats
        samples = read["counters"][(1, "live bytes")]
        assert samples and all(forward[0][0] <= t <= forward[0][1] for t, _ in samples), samples
        assert max(v["bytes"] for _, v in samples) > 0
        # the reader finds what Perfetto would drop or misread
        bad = {"traceEvents": [
            {"name": "process_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "p"}},
            {"name": "thread_name", "ph": "M", "pid": 1, "tid": 1, "args": {"name": "t"}},
            {"name": "a", "ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
            {"name": "b", "ph": "X", "ts": 5, "dur": 10, "pid": 1, "tid": 1},
            {"name": "c", "ph": "X", "ts": 1, "pid": 1, "tid": 1},
            {"name": "m", "ph": "C", "ts": 1, "pid": 1, "args": {"bytes": "many"}},
            {"name": "d", "ph": "X", "ts": 0, "dur": 1, "pid": 1, "tid": 3}]}
        found = "\n".join(trace_events.problems(bad))
        for expected in ["'b' [5000, 15000] ns crosses the end of 'a'",
                         "without numeric ts and dur", "a counter needs",
                         "thread 1/3 has slices and no thread_name"]:
            assert expected in found, found
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
    # stderr a file: no progress line (a warning about the timed runs' spread may be there)
    p = profile()
    assert p.returncode == 0 and all(line.startswith("vin-inspect: warning: the timed forwards")
                                     for line in p.stderr.splitlines()), p.stderr
    # stderr a terminal: the progress line, rewritten in place, then cleared
    args = ["profile", fixture("everything.pt"), "--inputs",
            fixture("inputs/everything_positional.npz"), "--warmup", "2", "--runs", "3"]
    done, text = run_on_a_terminal(args)
    assert done.returncode == 0, text
    for step in ("warm-up forward 1/2", "warm-up forward 2/2", "timed forward 1/3",
                 "timed forward 3/3"):
        assert step in text, text
    # cleared before anything after it (a warning about the runs' spread may follow)
    cleared = re.sub(r"(vin-inspect: warning: [^\r\n]*\r?\n)+$", "", text)
    assert cleared.endswith("\r\x1b[K"), repr(text[-200:])
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


FORK_MODEL = model_source("fork_model.py")


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


NESTED_MODEL = model_source("nested_model.py")


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


META_MODEL = model_source("meta_model.py")


@torch_test
def profile_and_capture_on_meta_give_shapes_and_flops_and_no_measurement():
    # --device meta computes shapes without values: profile's FLOPs, calls and shapes are the
    # model's (equal to a cpu profile), its times and bytes are null (the dispatcher's alone),
    # no forward is timed; capture writes shapes without values; --trace is refused
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "meta.pt")
        run_script(tmp, "meta_model.py", META_MODEL, archive)
        on = lambda device, *extra: run("profile", archive, "--shape", "x=3x4",  # noqa: E731
                                        "--device", device, "--warmup", "1", "--runs", "2", *extra)
        cpu, meta = on("cpu"), on("meta")
        assert cpu.returncode == 0 and meta.returncode == 0, (cpu.stderr, meta.stderr)
        assert on("meta").stdout == meta.stdout, "two profiles on meta differ"
        cpu_records = [json.loads(l) for l in cpu.stdout.splitlines()]
        meta_records = [json.loads(l) for l in meta.stdout.splitlines()]
        unmeasured = {"ModuleProfile": ("time_ms", "self_time_ms", "allocated_bytes", "peak_bytes"),
                      "OperatorProfile": ("time_ms", "self_time_ms"),
                      "ProfileSummary": ("latency_ms", "throughput", "instrumented_ms",
                                         "overhead", "peak_bytes")}
        key = lambda r: r.get("module_path", r.get("operator", ""))  # noqa: E731
        by_key = {(r["record"], key(r)): r for r in cpu_records}
        assert len(by_key) == len(meta_records) == len(cpu_records)
        for r in meta_records:
            c = by_key[(r["record"], key(r))]
            assert list(r) == list(c), (r, c)  # the same fields, in the same order
            for field in r:
                if field in unmeasured[r["record"]]:
                    assert r[field] is None and c[field] is not None, (field, r, c)
                elif field in ("device", "device_name", "warmup", "runs", "warnings"):
                    continue
                else:
                    assert r[field] == c[field], (field, r, c)
        assert meta_records[-1]["warnings"] == []  # nothing timed: nothing to doubt
        summary = meta_records[-1]
        assert (summary["device"], summary["device_name"], summary["warmup"], summary["runs"]) == \
            ("meta", "meta", 0, 0), summary
        assert summary["flops"] == 2 * 3 * (4 * 8 + 8 * 8 + 8 * 2) > 0, summary
        # operators by FLOPs, then calls, then name: the dispatcher's times do not order them
        operators = [r for r in meta_records if r["record"] == "OperatorProfile"]
        assert operators == sorted(operators, key=lambda o: (-o["flops"], -o["calls"],
                                                             o["operator"])), operators
        # diff compares what meta measures: the meta profile holds the cpu profile's model
        old, new = os.path.join(tmp, "cpu.jsonl"), os.path.join(tmp, "meta.jsonl")
        open(old, "w").write(cpu.stdout)
        open(new, "w").write(meta.stdout)
        p = run("diff", old, new)
        assert p.returncode == 0, (p.stdout, p.stderr)
        table = on("meta", "--format", "table").stdout
        assert "Latency on meta: not measured" in table, table
        assert "Instrumented" not in table, table
        root = next(l for l in table.splitlines() if l.startswith("<root> "))
        assert root.split()[-3:] == ["-", "-", "-"], root
        trace = os.path.join(tmp, "trace.json")
        assert_clean_error(on("meta", "--trace", trace), 2, r"--trace: .*--device meta")
        assert not os.path.exists(trace)
        # capture: every tensor's shape, no values, the reason said
        shapes = {}
        for device in ("cpu", "meta"):
            p = run("capture", archive, "--shape", "x=3x4", "--device", device)
            assert p.returncode == 0, p.stderr
            snapshots = [r for r in map(json.loads, p.stdout.splitlines())
                         if r["record"] == "TensorSnapshot"]
            shapes[device] = [(s["module_path"], s["direction"], s["shape"]) for s in snapshots]
            if device == "meta":
                for s in snapshots:
                    assert s["device"] == "meta" and s["values"] == [], s
                    assert s["sample_omission_reason"] == "meta_device", s
        assert shapes["meta"] == shapes["cpu"] and len(shapes["cpu"]) >= 10, shapes


@torch_test
def profile_on_meta_counts_flops_past_int64_exactly():
    # a tensor on the meta device takes no memory, so --shape may ask for any size LibTorch can
    # count (its bytes in int64) and FLOPs pass 2^63: each count is exact, as Python's
    # integers hold it (FlopCounterMode's), never saturated at INT64_MAX; diff reads them back
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "meta.pt")
        run_script(tmp, "meta_model.py", META_MODEL, archive)
        rows = 1 << 57
        shape = f"x={rows}x4"
        p = run("profile", archive, "--shape", shape)  # on the cpu: past the 16 GiB bound
        assert_clean_error(p, 2, r"--shape x=144115188075855872x4: the tensor would hold "
                                 r"2305843009213693952 bytes, past the 17179869184 bytes")
        p = run("profile", archive, "--shape", shape, "--device", "meta")
        assert p.returncode == 0, p.stderr
        records = [json.loads(l) for l in p.stdout.splitlines()]
        modules = {r["module_path"]: r for r in records if r["record"] == "ModuleProfile"}
        want = {"a": 2 * rows * 4 * 8, "b.0": 2 * rows * 8 * 8, "b.1": 2 * rows * 8 * 2}
        for path, flops in want.items():
            assert modules[path]["flops"] == modules[path]["self_flops"] == flops, modules[path]
        total = sum(want.values())
        assert total > (1 << 63) and modules["<root>"]["flops"] == total
        assert modules["b"]["flops"] == want["b.0"] + want["b.1"] > (1 << 63)
        assert records[-1]["flops"] == total and "flops_overflowed" not in records[-1]
        assert str(total) in p.stdout  # the digits, not a float
        table = run("profile", archive, "--shape", shape, "--device", "meta",
                    "--format", "table").stdout
        assert f"FLOPs per forward: 32.28 E ({total:,}; MACs 16.14 E: a multiply-add is 2 FLOPs" \
            in table, table
        old, new = os.path.join(tmp, "old.jsonl"), os.path.join(tmp, "new.jsonl")
        open(old, "w").write(p.stdout)
        p = run("profile", archive, "--shape", f"x={rows - 1}x4", "--device", "meta")
        assert p.returncode == 0, p.stderr
        open(new, "w").write(p.stdout)
        assert run("diff", old, old).returncode == 0
        p = run("diff", old, new)
        assert p.returncode == 1, p.stderr
        changes = [json.loads(l) for l in p.stdout.splitlines()]
        flops = next(c for c in changes if c.get("subject") == "profile" and c["field"] == "flops")
        assert (flops["old"], flops["new"]) == (total, total * (rows - 1) // rows), flops
        table = run("diff", old, new, "--format", "table").stdout
        assert f"~ profile: flops {total:,} -> {total * (rows - 1) // rows:,}" in table, table
        # capture on meta: the shape whole, no values
        p = run("capture", archive, "--shape", shape, "--device", "meta")
        assert p.returncode == 0, p.stderr
        first = json.loads(p.stdout.splitlines()[0])
        assert first["shape"] == [rows, 4] and first["numel"] == rows * 4, first
        # past what LibTorch counts in a tensor: refused before anything is made
        p = run("profile", archive, "--shape", f"x={1 << 62}x4", "--device", "meta")
        assert_clean_error(p, 2, r"--shape x=4611686018427387904x4: the tensor would hold more "
                                 r"than 9223372036854775807 bytes")


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
