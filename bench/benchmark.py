#!/usr/bin/python3
"""vin-inspect against the Python way of answering the same questions.

usage: bench/benchmark.py --binary build/release/apps/vin-inspect [--work DIR] [--runs N] [--only NAME...]

Builds the models of bench/bench_models.py with python3-torch and torchvision (scripted and
saved once into --work, with an .npz input each), then times each pair in one run, interleaved,
N times (default 5), and prints medians of wall time and peak RSS (GNU time) and their ratios as
a Markdown table:
  inspect-model          vs  python: torch.jit.load + a walk of named_modules/parameters
  inspect-model --all    vs  python: torch.jit.load, each module's parameters and buffers with
                             shape/dtype/device/bytes, its attributes, the methods' schemas,
                             and zipfile's CRCs of the storage records (the same facts)
  capture --eval         vs  python: the eager model with forward hooks capturing the same
                             records (tests/reference/capture_reference.py)
                             (and a plain eager forward, for scale); for the
                             module-heavy models (deep_200, wide_5052, many_5000) also a
                             light peer: forward pre-hooks and hooks on every module keeping
                             at most 32 values per tensor, 64 tensors and 16,384 bytes (the
                             default quotas), nothing else
  compare A A            vs  python: both eager models built, run with forward hooks keeping
                             every module call's input and output tensors, every pair
                             checked with torch.isclose at torch.testing's float32 tolerances
  --version              (alone)
Weights are random (no downloads); the page cache is warm after the first run.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import bench_models  # noqa: E402

PY = "/usr/bin/python3"

JIT_WALK = """
import sys, torch
m = torch.jit.load(sys.argv[1], map_location="cpu")
n = sum(1 for _ in m.named_modules())
p = sum(t.numel() for t in m.parameters())
print(n, p)
"""

JIT_FACTS = """
import sys, zipfile, torch
path = sys.argv[1]
m = torch.jit.load(path, map_location="cpu")
crcs = {i.filename: "%08x" % i.CRC for i in zipfile.ZipFile(path).infolist() if "/data/" in i.filename}
out = [str(len(crcs))]
for name in m._c._method_names():
    out.append(str(m._c._get_method(name).schema))
for path, module in m.named_modules():
    names = torch._C._jit_debug_module_iterators(module._c)["named_attributes"]
    out.append(path + " " + " ".join(n for n, v in names if not isinstance(v, torch.Tensor)))
    tensors = [("parameter", n, t) for n, t in module.named_parameters(recurse=False)]
    tensors += [("buffer", n, t) for n, t in module.named_buffers(recurse=False)]
    for kind, n, t in tensors:
        out.append(f"{kind} {n} {list(t.shape)} {t.dtype} {t.device} {t.requires_grad} "
                   f"{t.numel()} {t.numel() * t.element_size()}")
print("\\n".join(out))
"""

COMPARE_PEER = """
import sys
sys.path.insert(0, {bench!r})
import numpy as np, torch, bench_models


def run():
    torch.manual_seed(0)
    model = bench_models.MODELS[sys.argv[1]][0]().eval()
    x = torch.from_numpy(np.load(sys.argv[2])["arr_0"])
    kept, calls = {{}}, {{}}

    def pre(path):
        def hook(module, args):
            index = calls.get(path, 0)
            calls[path] = index + 1
            for i, a in enumerate(args):
                if isinstance(a, torch.Tensor):
                    kept[(path, index, "input", i)] = a.detach().clone()
        return hook

    def post(path):
        def hook(module, args, output):
            if isinstance(output, torch.Tensor):
                kept[(path, calls[path] - 1, "output")] = output.detach().clone()
        return hook

    for name, module in model.named_modules():
        module.register_forward_pre_hook(pre(name or "<root>"))
        module.register_forward_hook(post(name or "<root>"))
    with torch.no_grad():
        model(x)
    return kept


a, b = run(), run()
within = sum(bool(torch.isclose(t.double(), b[k].double(), rtol=1.3e-6, atol=1e-5).all())
             for k, t in a.items())
print(len(a), within)
"""

LIGHT_HOOKS = """
import sys
sys.path.insert(0, {bench!r})
import numpy as np, torch, bench_models
torch.manual_seed(0)
model = bench_models.MODELS[sys.argv[1]][0]().eval()
x = torch.from_numpy(np.load(sys.argv[2])["arr_0"])
kept, left = [], [64, 16384]


def keep(t):
    if isinstance(t, torch.Tensor) and left[0] > 0 and left[1] > 0:
        n = min(32, t.numel(), left[1] // t.element_size())
        kept.append(t.detach().reshape(-1)[:n].tolist())
        left[0] -= 1
        left[1] -= n * t.element_size()


def pre(module, args):
    for a in args:
        keep(a)


def post(module, args, output):
    keep(output)


for m in model.modules():
    m.register_forward_pre_hook(pre)
    m.register_forward_hook(post)
with torch.no_grad():
    model(x)
print(len(kept))
"""

MODULE_HEAVY = ("deep_200", "wide_5052", "many_5000")

EAGER = """
import sys
sys.path.insert(0, {scripts!r}); sys.path.insert(0, {reference!r})
import numpy as np, torch, bench_models
torch.manual_seed(0)
model = bench_models.MODELS[sys.argv[1]][0]().eval()
if sys.argv[2] == "hooks":
    from capture_reference import capture_run, dumps
    records, error = capture_run(model, [sys.argv[3]])
    sys.stdout.write("".join(dumps(r) + "\\n" for r in records))
else:
    with torch.no_grad():
        model(torch.from_numpy(np.load(sys.argv[3])["arr_0"]))
"""


def prepare(work, name):
    archive = os.path.join(work, name + ".pt")
    inputs = os.path.join(work, name + ".npz")
    if not (os.path.exists(archive) and os.path.exists(inputs)):
        torch.manual_seed(0)
        make, shape = bench_models.MODELS[name]
        model = make().eval()
        torch.jit.save(torch.jit.script(model), archive)
        np.savez(inputs, np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    return archive, inputs


def measure(cmd):
    """(wall seconds, peak RSS MiB) of one run; fails loudly on a non-zero exit. The peak comes
    from GNU time: a child forked from this process (which has imported torch) would count this
    process's memory from before its exec."""
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.monotonic()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = time.monotonic() - start
        if p.returncode != 0:
            raise SystemExit(f"benchmark: {' '.join(cmd)} failed: {p.stderr[-500:]!r}")
        return wall, int(rss.read().split()[-1]) / 1024


def compare(rows, label, ours, peers, runs):
    """Runs `ours` and each peer interleaved `runs` times; appends one row per peer."""
    samples = {k: [] for k in ["ours", *peers]}
    for _ in range(runs):
        samples["ours"].append(measure(ours))
        for peer, cmd in peers.items():
            samples[peer].append(measure(cmd))
    ow = statistics.median(w for w, _ in samples["ours"])
    om = statistics.median(m for _, m in samples["ours"])
    for peer in peers:
        pw = statistics.median(w for w, _ in samples[peer])
        pm = statistics.median(m for _, m in samples[peer])
        rows.append(f"| {label} | {peer} | {ow:.3f} s | {pw:.3f} s | {ow / pw:.3f}x "
                    f"| {om:.0f} MiB | {pm:.0f} MiB | {om / pm:.2f}x |")
        print(rows[-1], flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench-models"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=list(bench_models.MODELS))
    parser.add_argument("--inspect-only", action="store_true", help="the inspect-model rows only")
    parser.add_argument("--compare-only", action="store_true", help="the compare rows only")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    eager = EAGER.format(scripts=os.path.join(ROOT, "bench"),
                         reference=os.path.join(ROOT, "tests", "reference"))
    compare_peer = COMPARE_PEER.format(bench=os.path.join(ROOT, "bench"))
    light_hooks = LIGHT_HOOKS.format(bench=os.path.join(ROOT, "bench"))
    rows = ["| question | Python peer | vin-inspect | Python | ratio | vin-inspect RSS | Python RSS "
            "| ratio |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    print("\n".join(rows), flush=True)
    version = [measure([args.binary, "--version"]) for _ in range(args.runs)]
    print(f"--version: {statistics.median(w for w, _ in version) * 1000:.1f} ms, "
          f"{statistics.median(m for _, m in version):.0f} MiB", flush=True)
    for name in args.only:
        archive, inputs = prepare(args.work, name)
        if args.compare_only:
            compare(rows, f"compare {name} {name}",
                    [args.binary, "compare", archive, archive, "--inputs", inputs],
                    {"eager hooks, isclose": [PY, "-c", compare_peer, name, inputs]}, args.runs)
            continue
        compare(rows, f"inspect-model {name}", [args.binary, "inspect-model", archive],
                {"jit.load walk": [PY, "-c", JIT_WALK, archive]}, args.runs)
        compare(rows, f"inspect-model --all {name}",
                [args.binary, "inspect-model", archive, "--all"],
                {"jit.load facts": [PY, "-c", JIT_FACTS, archive]}, args.runs)
        if name == "linear_stack_1gib" or args.inspect_only:
            continue  # a capture of it measures matrix products, not the tool
        peers = {"eager forward hooks": [PY, "-c", eager, name, "hooks", inputs],
                 "eager plain forward": [PY, "-c", eager, name, "plain", inputs]}
        if name in MODULE_HEAVY:
            peers["light eager hooks"] = [PY, "-c", light_hooks, name, inputs]
        compare(rows, f"capture {name}",
                [args.binary, "capture", archive, "--inputs", inputs, "--eval"], peers, args.runs)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
