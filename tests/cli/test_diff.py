#!/usr/bin/python3
"""diff end to end: archives, saved records and configurations against themselves and
their edits (tests/fixtures/make_diff_fixtures.py), --ignore, --config, integers
compared exactly, the CI examples of docs/guide.md run as written, and diff's errors (exit 2).

usage: test_diff.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import html.parser
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import cli_common
from cli_common import ARGS, assert_clean_error, fixture, run, test, torch_test


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
        # a number is never equal to the string of its digits (contract 9.4), in saved records
        # and inside a rendering's unwalked mapping alike
        text = os.path.join(tmp, "text.jsonl")
        with open(text, "w") as f:
            f.write(json.dumps({"record": "ModelMetadata", "model_type": "m",
                                "total_parameters": "18446744073709551617",
                                "trainable_parameters": 0}) + "\n")
        p = run("diff", sides[0], text)
        assert p.returncode == 1, p.stdout + p.stderr
        change = json.loads(p.stdout.splitlines()[0])
        assert change["old"] == 18446744073709551617 and change["new"] == "18446744073709551617"
        renderings = []
        for name, value in (("number", "18446744073709551617"), ("text", '"18446744073709551617"')):
            path = os.path.join(tmp, name + ".yaml")
            with open(path, "w") as f:
                f.write("!m.Config\nextras: {a: " + value + "}\n")
            renderings.append(path)
        p = run("diff", *renderings)
        assert p.returncode == 1, p.stdout + p.stderr
        assert '"path": ["extras", "a"]' in p.stdout, p.stdout


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
        # the guide's CI step: fail when the parameter count changes
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
    # retrained weights: only checksums change; the guide's CI rule then passes
    status, changes, _ = diff_changes(d("net.pt"), d("net_retrained.pt"))
    assert status == 1 and changes and all(
        c["subject"] == "tensor" and c["field"] == "data_crc32" for c in changes), changes
    assert has_change(changes, path="conv.weight") and has_change(changes, path="norm.num_batches_tracked")
    status, changes, _ = diff_changes(d("net.pt"), d("net_retrained.pt"), "--ignore", "storage_crc32")
    assert status == 0 and not changes
    # data_crc32 says it where both sides give it: --ignore of either leaves the weights out
    status, changes, _ = diff_changes(d("net.pt"), d("net_retrained.pt"), "--ignore", "data_crc32")
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


def profile_records(width):
    """The profile of a Linear(100, WIDTH) on input[1, 100]: `vin-inspect profile` where this build
    runs models, else its records as profile writes them (the FLOPs and parameters it counts)."""
    if not ARGS.no_torch:
        p = run("profile", fixture(f"diff/linear{width}.pt"), "--shape", "input=1x100", "--runs", "2",
                "--warmup", "0")
        assert p.returncode == 0, p.stderr
        return p.stdout
    flops, parameters = 2 * 100 * width, 100 * width + width
    lines = [
        {"record": "ModuleProfile", "module_path": "<root>",
         "module_type": "torch.nn.modules.linear.Linear", "calls": 1, "parameters": parameters,
         "input_shapes": [[1, 100]], "output_shapes": [[1, width]], "flops": flops,
         "self_flops": flops, "time_ms": 0.05 + width / 1e4, "self_time_ms": 0.05,
         "allocated_bytes": 4 * width, "peak_bytes": 4 * width},
        {"record": "OperatorProfile", "operator": "aten::linear", "calls": 1, "flops": flops,
         "time_ms": 0.04},
        {"record": "ProfileSummary", "device": "cpu", "warmup": 0, "runs": 2,
         "latency_ms": {"min": 0.1, "median": 0.1 + width / 1e4, "mean": 0.11, "p90": 0.12,
                        "max": 0.13},
         "throughput": 1000.0, "flops": flops, "instrumented_ms": 0.06, "peak_bytes": 4 * width,
         "parameter_bytes": 4 * parameters, "buffer_bytes": 0, "modules": 1, "operators": 1}]
    return "".join(json.dumps(l) + "\n" for l in lines)


@torch_test
def diff_reports_what_two_profiles_were_measured_on():
    # contract 9.3: the same archive profiled on 1 and 2 threads: exit 0, the difference an
    # environment change, in every format
    with tempfile.TemporaryDirectory() as tmp:
        sides = []
        for threads in ("1", "2"):
            out = os.path.join(tmp, f"linear.{threads}.jsonl")
            p = run("profile", fixture("diff/linear100.pt"), "--shape", "input=1x100", "--runs",
                    "1", "--warmup", "0", "--threads", threads, "-o", out)
            assert p.returncode == 0, p.stderr
            sides.append(out)
        p = run("diff", *sides)
        lines = [json.loads(l) for l in p.stdout.splitlines()]
        assert p.returncode == 0, p.stdout
        assert [(c["kind"], c["subject"], c["field"]) for c in lines[:-1]] == [
            ("environment", "profile", "threads")], lines
        assert (lines[-1]["environment"], lines[-1]["changed"]) == (1, 0), lines[-1]
        assert lines[0]["old"]["intra_op"] == 1 and lines[0]["new"]["intra_op"] == 2, lines[0]
        table = run("diff", *sides, "--format", "table").stdout
        assert re.search(r"~ profile: threads \{.*\} -> \{.*\} \(environment\)", table), table
        assert "; 1 environment (profiles measured with other threads" in table, table
        markdown = run("diff", *sides, "--format", "markdown")
        assert markdown.returncode == 0 and "1 environment (measured otherwise)" in \
            markdown.stdout and "| environment | `profile` |" in markdown.stdout, markdown.stdout
        # --ignore leaves it out
        p = run("diff", *sides, "--ignore", "threads")
        assert p.returncode == 0 and len(p.stdout.splitlines()) == 1, p.stdout


@test
def diff_gates_flops_within_a_tolerance():
    # contract 9.4: two profiles whose FLOPs differ by 3% (a Linear(100, 100), a Linear(100, 103))
    with tempfile.TemporaryDirectory() as tmp:
        old, new = (os.path.join(tmp, f"linear{w}.jsonl") for w in (100, 103))
        for path, width in ((old, 100), (new, 103)):
            with open(path, "w") as f:
                f.write(profile_records(width))

        def gate(*options):
            p = run("diff", old, new, *options)
            lines = [json.loads(l) for l in p.stdout.splitlines()]
            return p.returncode, lines[:-1], lines[-1]
        status, changes, summary = gate("--only", "flops", "--tolerance", "flops=5%")
        assert status == 0, (changes, summary)
        # reported, each within: the root's, the operator's and the summary's FLOPs
        assert changes and all(c["field"] == "flops" and c["within_tolerance"] is True
                               for c in changes), changes
        assert {c["subject"] for c in changes} == {"profile", "module", "operator"}, changes
        assert (summary["changed"], summary["within_tolerance"], summary["identical"]) == \
            (len(changes), len(changes), False), summary
        assert gate("--only", "flops", "--tolerance", "flops=2%")[0] == 1
        assert gate("--only", "flops", "--tolerance", "flops=10%")[0] == 0
        assert gate("--only", "flops", "--tolerance", "flops=+5%")[0] == 0
        assert gate("--only", "flops", "--tolerance", "flops=-1%")[0] == 0  # growth unbounded
        assert gate("--only", "flops", "--tolerance", "flops=+2%", "--tolerance",
                    "flops=-10%")[0] == 1
        # exactly at the limit is within: 20,000 -> 20,600 is 600 and 3%
        assert gate("--only", "flops", "--tolerance", "flops=600")[0] == 0
        assert gate("--only", "flops", "--tolerance", "flops=599")[0] == 1
        assert gate("--only", "flops", "--tolerance", "flops=3%")[0] == 0
        assert gate("--only", "flops", "--tolerance", "flops=2.99%")[0] == 1
        # without --only the parameters and shapes changed too: exit 1
        status, changes, _ = gate("--tolerance", "flops=5%")
        assert status == 1 and any(c["field"] == "parameters" for c in changes), changes
        assert not any("within_tolerance" in c for c in changes if c["field"] != "flops"), changes
        # fields diff does not compare by default: accepted by --ignore, compared when named
        assert gate("--ignore", "latency_ms", "--only", "flops", "--tolerance", "flops=5%")[0] == 0
        status, changes, _ = gate("--only", "time_ms")
        assert status == 1 and changes, changes  # two runs' times differ
        assert {c["field"] for c in changes} == {"time_ms"}, changes
        # a latency gate: each number of the mapping within (any decrease, growth up to 100x)
        status, changes, _ = gate("--only", "flops", "--tolerance", "latency_ms=+10000%",
                                  "--tolerance", "flops=5%")
        assert status == 0, changes
        assert all(c["within_tolerance"] for c in changes if c["field"] == "latency_ms"), changes
        status, changes, _ = gate("--only", "flops", "--tolerance", "latency_ms=0",
                                  "--tolerance", "flops=5%")
        latency = [c for c in changes if c["field"] == "latency_ms"]
        assert status == (1 if latency else 0) and not any(c["within_tolerance"] for c in latency)
        # usage errors, each naming the field
        for options, message in (
                (["--tolerance", "flops=5"], None),
                (["--tolerance", "flops=5%", "--tolerance", "flops=6%"],
                 r"flops has a symmetric limit already \(5%\)"),
                (["--tolerance", "flops=+5%", "--tolerance", "flops=+6%"], r"'\+' limit already"),
                (["--tolerance", "flops=five%"], r"is not \[\+\|-\]DIGITS\[\.DIGITS\]\[%\]"),
                (["--tolerance", "flops"], r"expected FIELD=LIMIT"),
                (["--tolerance", "module_type=5%"], r"module_type is not a number"),
                (["--tolerance", "flop=5%"], r"--tolerance flop: no compared record has this "
                                             r"field; the closest: flops"),
                (["--only", "flop"], r"--only flop: .*the closest: flops"),
                (["--ignore", "flops", "--only", "flops"], r"--ignore flops and --only flops"),
                (["--ignore", "flops", "--tolerance", "flops=5%"],
                 r"--ignore flops and --tolerance flops"),
                # two limits for one field are ambiguous but for one '+' and one '-' (issue 64)
                (["--tolerance", "flops=5%", "--tolerance", "flops=+10%"],
                 r"--tolerance flops=\+10%: flops has a symmetric limit already \(5%\); two "
                 r"limits for one field are ambiguous"),
                (["--tolerance", "flops=+10%", "--tolerance", "flops=5%"],
                 r"--tolerance flops=5%: flops has a '\+' limit already \(\+10%\)"),
                (["--tolerance", "flops=-10%", "--tolerance", "flops=600"],
                 r"--tolerance flops=600: flops has a '-' limit already"),
                (["--tolerance", "flops=-1%", "--tolerance", "flops=-2%"], r"'-' limit already"),
                (["--tolerance", "flops=+1%", "--tolerance", "flops=-2%", "--tolerance",
                  "flops=+3%"], r"--tolerance flops=\+3%: flops has a '\+' limit already"),
                # every error names the option and the field, an empty one too
                (["--only", ""], r"--only '': no compared record has this field"),
                (["--ignore", ""], r"--ignore '': no compared record has this field"),
                (["--tolerance", "=5%"], r"--tolerance =5%: expected FIELD=LIMIT"),
                (["--only", "module_path"], r"--only module_path: records are matched by "
                                            r"module_path, which is never compared"),
                (["--ignore", "operator"], r"--ignore operator: records are matched by operator"),
                (["--tolerance", "flops=5%%"], r"--tolerance flops=5%%: the limit '5%%' is not"),
                (["--tolerance", "flops=+-5%"], r"--tolerance flops=\+-5%: the limit"),
                (["--tolerance", "flops=.5"], r"--tolerance flops=\.5: the limit"),
                (["--tolerance", "flops=5."], r"--tolerance flops=5\.: the limit"),
                (["--tolerance", "flops=1e3"], r"--tolerance flops=1e3: the limit"),
                (["--tolerance", "flops= 5%"], r"--tolerance flops= 5%: the limit"),
                (["--tolerance", "latency_ms=5%", "--ignore", "latency_ms"],
                 r"--ignore latency_ms and --tolerance latency_ms"),
                (["--only", "operators", "--ignore", "operators"], r"--ignore operators and "
                                                                   r"--only operators")):
            p = run("diff", old, new, *options)
            if message is None:
                assert p.returncode == 1, p.stderr  # an absolute limit of 5: beyond
            else:
                assert_clean_error(p, 2, message)


class Tables(html.parser.HTMLParser):
    """The tables of GitHub's rendering (cmark-gfm -e table): each a list of rows of cell texts,
    and every tag met (nothing but the table's, <p>, <code>, <strong>, <details> and <summary>
    may come from diff's Markdown: a model's names must not make HTML or links)."""
    def __init__(self):
        super().__init__()
        self.tables, self.tags, self.cell = [], set(), None

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self.tables[-1][-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def rendered(markdown):
    """GitHub's own parser's HTML of `markdown`, parsed; None where cmark-gfm is not installed
    (the Debian roots: the Debian 12 configuration checks it)."""
    if not shutil.which("cmark-gfm"):
        return None
    html_text = subprocess.run(["cmark-gfm", "-e", "table"], input=markdown, capture_output=True,
                               text=True, check=True).stdout
    tables = Tables()
    tables.feed(html_text)
    return tables, html_text


@test
def diff_format_markdown_renders_as_one_table_whatever_the_names():
    # names that Markdown, HTML or GitHub would read as something: pipes, backticks, a script,
    # a mention, an issue reference, a link, a newline, a backslash
    hostile = ["a|b", "t`ick``s", "<script>alert(1)</script>", "@maintainers", "#123", "!45",
               "[x](http://e.example)", "line\nbreak", "back\\slash|", "**bold**"]
    with tempfile.TemporaryDirectory() as tmp:
        def model(extra):
            path = os.path.join(tmp, f"m{len(os.listdir(tmp))}.jsonl")
            with open(path, "w") as f:
                f.write(json.dumps({"record": "ModelMetadata", "model_type": "m",
                                    "total_parameters": 10 ** 30, "trainable_parameters": 0}) + "\n")
                for i, name in enumerate(hostile):
                    f.write(json.dumps({"record": "ModuleMetadata", "path": name,
                                        "module_type": name + extra, "direct_parameters": i,
                                        "trainable_parameters": 0, "direct_buffers": 0,
                                        "training": True}) + "\n")
            return path
        old, new = model(""), model("|2")
        p = run("diff", old, new, "--format", "markdown")
        assert p.returncode == 1, p.stderr
        lines = p.stdout.splitlines()
        assert lines[0].startswith("**vin-inspect diff** ") and \
            "10 changes (0 added, 0 removed, 10 changed), 0 within tolerance, 10 beyond" in \
            lines[0] and lines[0].endswith("exit status 1"), lines[0]
        got = rendered(p.stdout)
        if got is None:
            print("  (cmark-gfm not installed: the rendering is checked where it is)")
            return
        tables, html_text = got
        assert len(tables.tables) == 1, html_text
        header, *rows = tables.tables[0]
        assert header == ["kind", "subject", "path", "field", "old", "new", "change", "percent",
                          "tolerance"], header
        assert len(rows) == len(hostile) and all(len(r) == 9 for r in rows), rows
        assert tables.tags <= {"p", "strong", "code", "table", "thead", "tbody", "tr", "th",
                               "td"}, tables.tags
        assert "<script" not in html_text and "<a " not in html_text, html_text
        # each name whole in its cell, escaped as contract 9.4 settles; a value is its JSON,
        # whose escapes are the same ones (a newline `\n`, a backslash `\\`)
        for name, r in zip(hostile, rows):
            shown = name.replace("\\", "\\\\").replace("\n", "\\n")
            assert r[2] == shown, (r, name)
            assert r[:2] + r[3:4] == ["changed", "module", "module_type"], r
            assert r[4] == json.dumps(name), (r[4], name)
            assert r[5] == json.dumps(name + "|2"), (r[5], name)
    # numbers: the change exact for integers of any size, the percent of the old value
    with tempfile.TemporaryDirectory() as tmp:
        old, new = (os.path.join(tmp, f"linear{w}.jsonl") for w in (100, 103))
        for path, width in ((old, 100), (new, 103)):
            with open(path, "w") as f:
                f.write(profile_records(width))
        p = run("diff", old, new, "--only", "flops", "--tolerance", "flops=5%", "--format",
                "markdown")
        assert p.returncode == 0, p.stderr
        assert p.stdout.splitlines()[0].endswith("exit status 0"), p.stdout
        assert "3 within tolerance, 0 beyond" in p.stdout.splitlines()[0], p.stdout
        got = rendered(p.stdout)
        if got:
            (table,) = got[0].tables
            for r in table[1:]:
                assert (r[3], r[4], r[5], r[6], r[7], r[8]) == \
                    ("flops", "20000", "20600", "+600", "+3.00%", "✓ within"), r


def markdown_lines_hold(markdown, rows):
    """Checks that `markdown` is diff's summary line, a blank line, the header, the delimiter and
    `rows` rows of nine cells (inside one fold or not), a line each: no name broke a line."""
    lines = markdown.splitlines()
    assert lines[0].startswith("**vin-inspect diff** ") and lines[0].endswith(
        ("exit status 0", "exit status 1")), lines[0]
    folded = lines[2].startswith("<details>")
    if folded:
        assert re.fullmatch(r"<details><summary>\d+ changes</summary>", lines[2]), lines[2]
        assert lines[3] == "" and lines[-2:] == ["", "</details>"], lines[-3:]
    table = lines[4:-2] if folded else lines[2:]
    assert len(table) == rows + 2, (len(table), rows, markdown)
    for line in table:
        assert line.startswith("| ") and line.endswith(" |"), line
        assert len(re.findall(r"(?<!\\)\|", line)) == 10, line  # nine cells, `|` in them as \|


@test
def diff_format_markdown_shows_a_newline_in_any_name_as_backslash_n():
    # issue 64: names and values holding newlines (CR, tab, escape, DEL, C1 and the Unicode line
    # separator too) in module paths, tensor names, attribute values, config field paths and
    # values, and file names: shown `\n` (`\r`, `\t`, `\uXXXX`) in their code span, never a
    # line break in a PR comment
    odd = "\n\r\t\x1b\x7f\u0085\u2028"
    shown = "\\n\\r\\t\\u001b\\u007f\\u0085\\u2028"
    with tempfile.TemporaryDirectory() as tmp:
        records = run("model", fixture("convnet.pt"), "--all").stdout.splitlines()

        def model(path, changed):
            with open(path, "w") as f:
                for line in records:
                    r = json.loads(line)
                    if r.get("path") not in (None, "<root>"):
                        r["path"] += odd
                        r["attributes"] = {"note" + odd: "was" + odd if not changed
                                           else "now" + odd}
                    if r["record"] == "TensorMetadata":
                        r["module_path"] += odd
                        r["name"] += odd
                        if changed:
                            r["dtype"] = "torch.float16" + odd
                    f.write(json.dumps(r) + "\n")
        old, new = os.path.join(tmp, "old" + odd + ".jsonl"), os.path.join(tmp, "new\n.jsonl")
        model(old, False)
        model(new, True)
        p = run("diff", old, new, "--format", "markdown")
        assert p.returncode == 1, p.stderr
        tensors = sum('"TensorMetadata"' in l for l in records)
        modules = sum('"ModuleMetadata"' in l for l in records) - 1
        markdown_lines_hold(p.stdout, tensors + modules)
        summary = p.stdout.splitlines()[0]
        assert "old" + shown + ".jsonl` → `" in summary and "new\\n.jsonl`" in summary, summary
        got = rendered(p.stdout)
        if got:
            tables, html_text = got
            (table,) = tables.tables
            assert all(len(r) == 9 for r in table[1:]), table
            cells = [c for r in table[1:] for c in r[2:6]]
            assert not any(ch in c for c in cells for ch in odd), cells
            tensor = next(r for r in table[1:] if r[1] == "tensor")
            assert tensor[2:6] == ["stem.0" + shown + ".weight" + shown, "dtype",
                                   '"torch.float32"', json.dumps("torch.float16" + odd)], tensor
            attribute = next(r for r in table[1:] if r[1] == "attribute")
            assert attribute[2:6] == ["stem" + shown + ".note" + shown, "",
                                      json.dumps("was" + odd), json.dumps("now" + odd)], attribute
            assert attribute[4] == '"was' + shown + '"', attribute
        # past 50 changes the table folds: the <details> block holds whole too
        many = os.path.join(tmp, "many" + odd + ".jsonl")
        with open(many, "w") as f:
            f.write(records[0] + "\n")
            for i in range(60):
                f.write(json.dumps({"record": "ModuleMetadata", "path": f"m{i}" + odd,
                                    "module_type": "t" + odd, "direct_parameters": 0,
                                    "trainable_parameters": 0, "direct_buffers": 0,
                                    "training": False}) + "\n")
        more = os.path.join(tmp, "more.jsonl")
        with open(many) as f, open(more, "w") as g:
            g.write(f.read().replace("t\\n", "u\\n"))
        p = run("diff", many, more, "--format", "markdown")
        assert p.returncode == 1, p.stderr
        markdown_lines_hold(p.stdout, 60)
        # a configuration: a field's path (JSON) and its values
        config = run("inspect-config", os.path.join(ARGS.source, "configs/net.yaml")).stdout
        sides = []
        for value in ("a" + odd, "b" + odd):
            path = os.path.join(tmp, f"config{len(sides)}" + odd + ".jsonl")
            with open(path, "w") as f:
                for line in config.splitlines():
                    r = json.loads(line)
                    if r.get("path") == ["dropout"]:
                        r["path"], r["value"] = ["drop" + odd], value
                    f.write(json.dumps(r) + "\n")
            sides.append(path)
        p = run("diff", *sides, "--format", "markdown")
        assert p.returncode == 1, p.stderr
        markdown_lines_hold(p.stdout, 1)
        row = p.stdout.splitlines()[-1]
        assert "| `" + json.dumps(["drop" + odd]) + "` | `value` | `" + json.dumps("a" + odd) + \
            "` | `" + json.dumps("b" + odd) + "` |" in row, row


@test
def diff_format_markdown_folds_past_50_changes_and_stays_under_a_megabyte():
    with tempfile.TemporaryDirectory() as tmp:
        def model(n, width, extra):
            path = os.path.join(tmp, f"m{len(os.listdir(tmp))}.jsonl")
            with open(path, "w") as f:
                f.write('{"record": "ModelMetadata", "model_type": "m", "total_parameters": 0, '
                        '"trainable_parameters": 0}\n')
                for i in range(n):
                    f.write(json.dumps({"record": "ModuleMetadata", "path": f"m{i}",
                                        "module_type": "x" * width + extra,
                                        "direct_parameters": 0, "trainable_parameters": 0,
                                        "direct_buffers": 0, "training": True}) + "\n")
            return path
        p = run("diff", model(60, 5, ""), model(60, 5, "y"), "--format", "markdown")
        lines = p.stdout.splitlines()
        assert lines[0].startswith("**vin-inspect diff**") and lines[2] == \
            "<details><summary>60 changes</summary>" and lines[-1] == "</details>", lines[:4]
        got = rendered(p.stdout)
        if got:
            (table,) = got[0].tables
            assert len(table) == 61, len(table)
        # 3,000 changes of 500-character types: cut at a row boundary under 1,000,000 bytes
        p = run("diff", model(3000, 500, ""), model(3000, 500, "y"), "--format", "markdown")
        assert p.returncode == 1 and len(p.stdout.encode()) < 1_000_000, len(p.stdout)
        last = p.stdout.splitlines()[-1]
        assert re.fullmatch(r"\d+ of 3000 changes left out \(the output stays under 1,000,000 "
                            r"bytes\); `--format jsonl` has them all\.", last), last
        got = rendered(p.stdout)
        if got:
            (table,) = got[0].tables
            left_out = int(last.split()[0])
            assert len(table) - 1 == 3000 - left_out and all(len(r) == 9 for r in table), \
                len(table)
    # the other commands have no markdown
    assert_clean_error(run("inspect-model", fixture("convnet.pt"), "--format", "markdown"), 2,
                       r"--format: markdown not in \{jsonl,json,table\}")


def ci_recipe():
    """docs/ci.md's code blocks: {heading: [(language, text)]}."""
    with open(os.path.join(ARGS.source, "docs", "ci.md")) as f:
        text = f.read()
    blocks, heading = {}, None
    for part in re.split(r"^(## .*)$", text, flags=re.M):
        if part.startswith("## "):
            heading = part[3:].strip()
            continue
        for language, body in re.findall(r"^```(\w+)\n(.*?)^```", part, flags=re.M | re.S):
            blocks.setdefault(heading, []).append((language, body))
    return blocks


def commands_of(text):
    return [line.strip() for line in text.splitlines() if line.strip().startswith("vin-inspect ")]


@test
def the_ci_recipe_runs_as_written():
    import yaml
    blocks = ci_recipe()
    (baseline,) = commands_of(blocks["The baseline"][0][1])
    (gate,) = commands_of(blocks["The gate"][0][1])
    cost = commands_of(blocks["A cost gate"][0][1])
    assert len(cost) == 3, cost
    # the jobs run the gate as the page gives it (GitLab's to a file it keeps)
    github = yaml.safe_load(blocks["GitHub Actions"][0][1])
    steps = github["jobs"]["model-gate"]["steps"]
    assert [c for step in steps for c in commands_of(step.get("run", ""))] == [gate], steps
    gitlab = yaml.safe_load(blocks["GitLab CI"][0][1])
    (gitlab_gate,) = [c for c in gitlab["model-gate"]["script"] if c.startswith("vin-inspect ")]
    assert gitlab_gate == gate.replace('>> "$GITHUB_STEP_SUMMARY"', "> gate.md"), gitlab_gate
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(ARGS.binary)) + ":" +
               os.environ["PATH"])
    # the model gate: new weights pass, a changed kernel or dtype fails
    for branch, status in (("net.pt", 0), ("net_retrained.pt", 0), ("net_kernel5.pt", 1),
                           ("net_half.pt", 1)):
        with tempfile.TemporaryDirectory() as tmp:
            summary = os.path.join(tmp, "summary.md")
            env["GITHUB_STEP_SUMMARY"] = summary
            shutil.copy(fixture("diff/net.pt"), os.path.join(tmp, "net.pt"))
            p = subprocess.run(["bash", "-c", baseline], cwd=tmp, env=env, capture_output=True)
            assert p.returncode == 0 and os.path.exists(os.path.join(tmp, "model.jsonl")), p.stderr
            shutil.copy(fixture("diff/" + branch), os.path.join(tmp, "net.pt"))
            for command in (gate, gitlab_gate):
                p = subprocess.run(["bash", "-c", command], cwd=tmp, env=env, capture_output=True,
                                   text=True)
                assert p.returncode == status, (branch, command, p.returncode, p.stderr)
            with open(summary) as f:
                markdown = f.read()
            with open(os.path.join(tmp, "gate.md")) as f:
                assert f.read() == markdown
            assert markdown.startswith("**vin-inspect diff** ") and \
                f"exit status {status}" in markdown.splitlines()[0], markdown
            got = rendered(markdown)
            if got and status:
                assert len(got[0].tables) == 1, got[1]
    if ARGS.no_torch:
        print("  (the cost gate runs models: checked in the build with LibTorch)")
        return
    # the cost gate: the same FLOPs pass, a kernel of 5 (FLOPs x2.8) fails
    for branch, status in (("net_retrained.pt", 0), ("net_kernel5.pt", 1)):
        with tempfile.TemporaryDirectory() as tmp:
            env["GITHUB_STEP_SUMMARY"] = os.path.join(tmp, "summary.md")
            shutil.copy(fixture("diff/net.pt"), os.path.join(tmp, "net.pt"))
            p = subprocess.run(["bash", "-c", cost[0]], cwd=tmp, env=env, capture_output=True)
            assert p.returncode == 0, p.stderr
            shutil.copy(fixture("diff/" + branch), os.path.join(tmp, "net.pt"))
            for command in cost[1:]:
                p = subprocess.run(["bash", "-c", command], cwd=tmp, env=env, capture_output=True,
                                   text=True)
            assert p.returncode == status, (branch, p.returncode, p.stderr)


@test
def diff_tolerance_is_exact_for_integers_of_any_size():
    with tempfile.TemporaryDirectory() as tmp:
        def model(total):
            path = os.path.join(tmp, f"m{len(os.listdir(tmp))}.jsonl")
            with open(path, "w") as f:
                f.write('{"record": "ModelMetadata", "model_type": "m", "total_parameters": '
                        f'{total}, "trainable_parameters": 0}}\n')
            return path
        big = 10 ** 30
        base = model(big)
        for total, limit, status in ((big + big // 20, "5%", 0), (big + big // 20 + 1, "5%", 1),
                                     (big - big // 20, "+1%", 0), (big - big // 20 - 1, "-5%", 1),
                                     (big + 7, "7", 0), (big + 8, "7", 1)):
            p = run("diff", base, model(total), "--tolerance", f"total_parameters={limit}")
            assert p.returncode == status, (total, limit, p.stdout, p.stderr)
        # a percent never covers a change from 0; an absolute limit may
        zero = model(0)
        assert run("diff", zero, model(3), "--tolerance", "total_parameters=1000%").returncode == 1
        assert run("diff", zero, model(3), "--tolerance", "total_parameters=3").returncode == 0
        assert run("diff", model(3), model(-3), "--tolerance",
                   "total_parameters=+5%").returncode == 0  # a decrease, unbounded


@test
def the_guides_ci_example_passes_new_weights_and_fails_a_changed_model():
    with open(os.path.join(ARGS.source, "docs", "guide.md")) as f:
        section = f.read().split("### In CI: fail on anything but new weights")[1]
        section = section.split("```sh")[1].split("```")[0]
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
def names_that_are_not_utf8_stay_distinct_in_records_and_read_back():
    # the judgement of issue 41: bytes that are not UTF-8 are written as Python's os.fsdecode
    # holds them (\udcXX), so two such names never collapse into one replacement character
    with tempfile.TemporaryDirectory() as tmp:
        first, second = (os.path.join(tmp, os.fsdecode(b"m\xff.pt")),
                         os.path.join(tmp, os.fsdecode(b"m\xfe.pt")))
        for path in (first, second):
            shutil.copyfile(fixture("convnet.pt"), path)
        p = run("diff", first, first)
        assert p.returncode == 0, p.stdout + p.stderr
        p = run("diff", first, second)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "\\udcff" in p.stdout and "\\udcfe" in p.stdout, p.stdout
        summary = json.loads(p.stdout)
        assert os.fsencode(summary["old"]) == os.fsencode(first), summary
        assert os.fsencode(summary["new"]) == os.fsencode(second), summary
        p = run("diff", first, second, "--format", "table")
        assert p.returncode == 0 and "m\\xff.pt" in p.stdout, p.stdout
        saved = os.path.join(tmp, "saved.jsonl")
        assert run("inspect-model", first, "-o", saved).returncode == 0
        assert run("diff", saved, second).returncode == 0
        # record strings holding such bytes read back as the same bytes and stay distinct
        sides = []
        for name in (b"Net\xff", b"Net\xfe"):
            side = os.path.join(tmp, name.hex() + ".jsonl")
            with open(side, "w") as f:
                f.write(json.dumps({"record": "ModelMetadata", "model_type": os.fsdecode(name),
                                    "total_parameters": 1, "trainable_parameters": 1}) + "\n")
            sides.append(side)
        assert run("diff", sides[0], sides[0]).returncode == 0
        p = run("diff", *sides)
        assert p.returncode == 1, p.stdout + p.stderr
        change = json.loads(p.stdout.splitlines()[0])
        assert (os.fsencode(change["old"]), os.fsencode(change["new"])) == (b"Net\xff", b"Net\xfe"), change
        missing = os.path.join(tmp, os.fsdecode(b"gone\xff.pt"))
        assert_clean_error(run("inspect-model", missing), 1, r"gone\\xff\.pt: no such file")


def write_safetensors(path, tensors, cut=0):
    """A safetensors file of float32 tensors (name, raw bytes), its last `cut` bytes left out."""
    header, offset, data = {}, 0, b""
    for name, raw in tensors:
        header[name] = {"dtype": "F32", "shape": [len(raw) // 4],
                        "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data[:len(data) - cut])


@test
def weights_sides_and_shards_read_at_once_tell_the_first_trouble_in_order():
    # two weights files are read on two threads and a sharded set's shards several at once
    # (issue 68): the records and the trouble told are those of reading one after the other
    big = bytes(range(256)) * 4096 * 40  # 40 MiB: a tensor in two checksum pieces
    with tempfile.TemporaryDirectory() as tmp:
        old, new = os.path.join(tmp, "old.safetensors"), os.path.join(tmp, "new.safetensors")
        write_safetensors(old, [("a", big), ("b", b"\0" * 16)])
        write_safetensors(new, [("a", big), ("b", b"\1" * 16)])
        p = run("diff", old, new)
        assert p.returncode == 1, p.stdout + p.stderr
        changes = [json.loads(line) for line in p.stdout.splitlines()]
        assert [(c.get("path"), c.get("field")) for c in changes if c.get("record") != "DiffSummary"] == \
            [("b", "data_crc32")], changes
        assert run("diff", old, old).returncode == 0
        # both sides broken: the old side's trouble, whichever thread met its own first
        bad_old, bad_new = os.path.join(tmp, "bad_old.safetensors"), os.path.join(tmp, "bad_new.safetensors")
        write_safetensors(bad_old, [("w", b"\0" * 16)], cut=4)
        write_safetensors(bad_new, [("w", b"\0" * 16)], cut=8)
        for _ in range(5):
            assert_clean_error(run("diff", bad_old, bad_new), 2, r"bad_old\.safetensors: .*cut short")
        assert_clean_error(run("diff", old, bad_new), 2, r"bad_new\.safetensors: .*cut short")
        # a set whose second shard is cut short and whose third is missing: the second is told
        weight_map = {"x": "s1.safetensors", "y": "s2.safetensors", "z": "s3.safetensors"}
        write_safetensors(os.path.join(tmp, "s1.safetensors"), [("x", big)])
        write_safetensors(os.path.join(tmp, "s2.safetensors"), [("y", b"\0" * 16)], cut=4)
        index = os.path.join(tmp, "model.safetensors.index.json")
        with open(index, "w") as f:
            json.dump({"weight_map": weight_map}, f)
        for _ in range(5):
            assert_clean_error(run("inspect-model", index, "--tensors"), 1,
                               r"its shard .*/s2\.safetensors: .*cut short")
        write_safetensors(os.path.join(tmp, "s2.safetensors"), [("y", b"\0" * 16)])
        assert_clean_error(run("inspect-model", index, "--tensors"), 1,
                           r"names the shard s3\.safetensors, which is missing")
        write_safetensors(os.path.join(tmp, "s3.safetensors"), [("z", b"\2" * 8)])
        p = run("inspect-model", index, "--tensors")
        assert p.returncode == 0, p.stderr
        tensors = [json.loads(line) for line in p.stdout.splitlines()]
        tensors = [t for t in tensors if t.get("record") == "TensorMetadata"]
        crcs = ["%08x" % zlib.crc32(raw) for raw in (big, bytes(16), b"\2" * 8)]
        assert [(t["name"], t["file"], t["data_crc32"]) for t in tensors] == [
            ("x", "s1.safetensors", crcs[0]), ("y", "s2.safetensors", crcs[1]),
            ("z", "s3.safetensors", crcs[2])], tensors


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
            ((bad, fixture("convnet.pt")), r"bad\.jsonl:1: starts with a TensorSnapshot record"),
            ((empty, fixture("convnet.pt")),
             r"empty\.jsonl: empty file, not a model file \(an archive or a weights file\), a "
             r"configuration rendering \(a YAML mapping\) or saved records$"),
            ((fixture("convnet.pt"),), r"NEW is required"),
        ]
        for args, pattern in cases:
            p = run("diff", *args)
            assert p.returncode == 2, f"{args}: exit {p.returncode}"
            assert p.stdout == "" and re.search(pattern, p.stderr), f"{args}: {p.stderr!r}"


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
