#!/usr/bin/python3
"""compare end to end: an archive against itself, reduced-precision copies, a changed
layer, saved sides and an eager model's capture; tolerances, --module,
--max-compare-bytes, usage errors, and each side run as capture runs it (--timeout,
--quantized-engine).

usage: test_compare.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import cli_common
from cli_common import (ARGS, assert_clean_error, fixture, model_source, run, run_script,
                        torch_test)


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
def a_model_in_training_mode_agrees_with_itself_and_with_python():
    # --seed is the random state every forward starts from (contract 9.2): dropout draws the
    # same masks on every run, on each side of compare, for each inputs file, and as Python does
    # after torch.manual_seed(seed)
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "dropout.pt")
        source = os.path.join(tmp, "dropout_model.py")
        run_script(tmp, "dropout_model.py", model_source("dropout_model.py"), archive)
        x = ["--shape", "x=6x8"]
        first, again = run("capture", archive, *x), run("capture", archive, *x)
        assert first.returncode == 0 and first.stdout == again.stdout, first.stderr
        assert '"seed"' not in first.stdout  # the default seed: the seed API's three fields
        seeded = run("capture", archive, *x, "--seed", "5")
        assert seeded.returncode == 0 and seeded.stdout != first.stdout, seeded.stderr
        assert json.loads(seeded.stdout.splitlines()[-1])["seed"] == 5
        for seed in ("0", "5"):
            status, pairs, summary = compare_run(archive, archive, *x, "--seed", seed)
            assert status == 0 and summary["beyond"] == 0 and summary["pairs"] == len(pairs) > 0
            assert summary["seed"] == int(seed), summary
        # two inputs files, the same values: each forward starts from the same state
        inputs = os.path.join(tmp, "x.npz")
        subprocess.run([sys.executable, "-c", "import numpy as np, sys; np.savez(sys.argv[1], x="
                        "np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32))",
                        inputs], check=True)
        p = run("capture", archive, "--inputs", inputs, "--inputs", inputs, "--module", "drop")
        assert p.returncode == 0, p.stderr
        snaps = [json.loads(l) for l in p.stdout.splitlines()][:-1]
        outputs = [s["values"] for s in snaps if s["direction"] == "output"]
        assert len(outputs) == 2 and outputs[0] == outputs[1], snaps
        assert 0.0 in outputs[0]  # dropout did zero elements
        # the eager model from the same weights and torch.manual_seed(0): the same masks
        for seed, expected in (("0", 0), ("1", 1)):
            eager = os.path.join(tmp, f"eager{seed}.npz")
            p = subprocess.run([os.path.join(ARGS.source, "scripts", "eager_capture.py"),
                                "--factory", source + ":make", "--state", archive, "--inputs",
                                inputs, "--seed", seed, "-o", eager], capture_output=True, text=True)
            assert p.returncode == 0, p.stderr
            status, _, summary = compare_run(archive, eager, "--inputs", inputs)
            assert status == expected and summary["only_in_a"] == summary["only_in_b"] == 0, summary


@torch_test
def compare_usage_errors_exit_2():
    d = lambda name: fixture(os.path.join("diff", name))  # noqa: E731
    p = run("compare", d("net.pt"), d("net.pt"))
    assert_clean_error(p, 2, r"--inputs FILE or --shape NAME=DIMS is required")
    p = run("compare", d("net.pt"), fixture("missing.pt"), "--shape", "x=2x3x8x8")
    assert p.returncode == 2 and "missing.pt" in p.stderr, p.stderr
    p = run("compare", d("net.pt"), d("net.pt"), "--shape", "x=2x3x8x8", "--module", "nope")
    assert p.returncode == 2 and "nope" in p.stderr, p.stderr
    # a tensor on the meta device has a shape and no values: nothing to compare
    for side in ("--device-a", "--device-b"):
        p = run("compare", d("net.pt"), d("net.pt"), "--shape", "x=2x3x8x8", side, "meta")
        assert_clean_error(p, 2, side + r" meta: compare compares values.*meta device holds none")


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


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
