#!/usr/bin/env python3
"""The checks of scripts/gpu_check.sh: vin-inspect on a CUDA device against PyTorch on the same
device. Runs under the Python whose torch the binary was built against (a pip CUDA PyTorch on a
GPU machine); `--device cpu` runs the same checks on the CPU (how they are tried without a GPU).

For each model (resnet18, a TransformerEncoder with a padding mask, an LSTM tagger, from
tests/zoo/zoo_models.py), scripted and saved, with its inputs saved by torch.save:
  capture   `capture --device D` against tests/reference/capture_reference.py's forward hooks on
            the eager model on D: same records, floating values within rel 1e-3 / abs 1e-4
            (kernels may differ between the scripted and the eager graph on a GPU)
  stats     `capture --device D --stats --save X.npz`: each snapshot's stats equal numpy's over
            the saved whole tensor (min, max, mean, std, abs_max, nan/inf/zero counts)
  compare   `compare A A --device-a cpu --device-b D`: every pair within --rtol/--atol 5e-3
            (cuDNN's convolutions use TF32 by default, as PyTorch's do)
  overhead  bench/capture_bench.cpp's plain vs instrumented forward on D (reported, not judged)
  profile   `profile --device D`: every module's calls, FLOPs and shapes equal the CPU run's;
            the device is D's; memory on D reported (the root allocated bytes and peaked above
            0); the timed median against bench/plain_forward.cpp's loop on D (MEASURE line,
            with --plain)

usage: gpu_checks.py --binary PATH [--bench PATH] [--plain PATH] [--device cuda] --work DIR
Prints `PASS name`/`FAIL name: why` per check, `MEASURE ...` lines, then `N passed, M failed`;
exits 0 only when every check passed.
"""
import argparse
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
sys.path.insert(0, os.path.join(REPO, "tests", "zoo"))
sys.path.insert(0, os.path.join(REPO, "scripts"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import capture_reference as ref  # noqa: E402
import compare_capture  # noqa: E402
from eager_capture import member_name  # noqa: E402
import zoo_models  # noqa: E402

CASES = ["resnet18", "transformer_encoder_mask_eval", "lstm_tagger_eval"]
compare_capture.REL, compare_capture.ABS = 1e-3, 1e-4
STAT_REL, STAT_ABS = 1e-9, 1e-12  # numpy's float64 statistics of the very same saved values


def to_device(value, device):
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def check_capture(binary, archive, inputs_file, model, args, kwargs, device):
    records, error = ref.capture_run(model, [(args, kwargs)])
    if error is not None:
        return f"the eager model raised on {device}: {error}"
    p = run([binary, "capture", archive, "--inputs", inputs_file, "--device", device])
    if p.returncode != 0:
        return f"exit {p.returncode}: {p.stderr.strip()[:400]}"
    expected = [json.loads(json.dumps(r)) for r in records]
    got = [json.loads(line) for line in p.stdout.splitlines()]
    if len(got) != len(expected):
        return f"{len(got)} records, the reference has {len(expected)}"
    devices = {r.get("device") for r in got if r["record"] == "TensorSnapshot"}
    if device.startswith("cuda") and not any(d and d.startswith("cuda") for d in devices):
        return f"no snapshot on {device}: devices {sorted(map(str, devices))}"
    for i, (e, g) in enumerate(zip(expected, got)):
        problem = compare_capture.record_difference(e, g)
        if problem:
            return f"record {i + 1}: {problem}"
    return None


def numpy_stats(array):
    if array.dtype == np.bool_:
        return {"true_count": int(array.sum())}
    if np.issubdtype(array.dtype, np.integer):
        if array.size == 0:
            return None
        return {"min": int(array.min()), "max": int(array.max()),
                "mean": float(array.astype(np.float64).mean()),
                "zero_count": int((array == 0).sum())}
    values = array.astype(np.float64).ravel()
    finite = values[np.isfinite(values)]
    stats = {"min": None, "max": None, "mean": None, "std": None, "abs_max": None}
    if finite.size:
        stats.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()),
                     std=float(finite.std(ddof=1)) if finite.size > 1 else None,
                     abs_max=float(np.abs(finite).max()))
    stats.update(nan_count=int(np.isnan(values).sum()), inf_count=int(np.isinf(values).sum()),
                 zero_count=int((values == 0).sum()))
    return stats


def stats_difference(expected, got):
    for key, want in expected.items():
        have = got.get(key, "missing")
        if isinstance(want, float) and isinstance(have, (int, float)) and have is not True:
            if not math.isclose(want, have, rel_tol=STAT_REL, abs_tol=STAT_ABS):
                return f"{key}: numpy {want!r}, tool {have!r}"
        elif want != have and not (want is None and have is None):
            if not (isinstance(want, float) and isinstance(have, float) and math.isnan(want)
                    and math.isnan(have)):
                return f"{key}: numpy {want!r}, tool {have!r}"
    return None


def check_stats(binary, archive, inputs_file, device, work):
    saved = os.path.join(work, "saved.npz")
    p = run([binary, "capture", archive, "--inputs", inputs_file, "--device", device, "--stats",
             "--save", saved])
    if p.returncode != 0:
        return f"exit {p.returncode}: {p.stderr.strip()[:400]}"
    snapshots = [json.loads(line) for line in p.stdout.splitlines()]
    snapshots = [s for s in snapshots if s["record"] == "TensorSnapshot"]
    checked = 0
    with np.load(saved) as members:
        for s in snapshots:
            name = member_name([s["module_path"], str(s["call_index"]), s["direction"],
                                *s["tensor_path"]])
            if name not in members.files or s.get("stats") is None:
                continue
            problem = stats_difference(numpy_stats(members[name]), s["stats"])
            if problem:
                return f"{name}: {problem}"
            checked += 1
    os.remove(saved)
    if not checked:
        return "no snapshot had both stats and a saved tensor"
    return None


def check_compare(binary, archive, inputs_file, device):
    p = run([binary, "compare", archive, archive, "--inputs", inputs_file, "--device-a", "cpu",
             "--device-b", device, "--rtol", "5e-3", "--atol", "5e-3"])
    summary = p.stdout.splitlines()[-1] if p.stdout else ""
    if p.returncode != 0:
        return f"exit {p.returncode}: {summary[:500]} {p.stderr.strip()[:300]}"
    return None


def check_profile(binary, archive, inputs_file, device):
    """profile on `device` against profile on the CPU: what does not depend on the machine is
    equal; the device's memory is reported."""
    runs = {}
    for where in ("cpu", device):
        p = run([binary, "profile", archive, "--inputs", inputs_file, "--device", where,
                 "--warmup", "2", "--runs", "5"])
        if p.returncode != 0:
            return f"profile --device {where}: exit {p.returncode}: {p.stderr.strip()[:300]}"
        runs[where] = [json.loads(line) for line in p.stdout.splitlines()]
    fields = ("module_path", "calls", "parameters", "input_shapes", "output_shapes", "flops",
              "self_flops")
    modules = {w: [{f: r[f] for f in fields} for r in rs if r["record"] == "ModuleProfile"]
               for w, rs in runs.items()}
    if modules["cpu"] != modules[device]:
        for a, b in zip(modules["cpu"], modules[device]):
            if a != b:
                return f"module records differ: cpu {a}, {device} {b}"
        return f"module records differ in number: {len(modules['cpu'])}, {len(modules[device])}"
    summary = runs[device][-1]
    if not summary["device"].startswith(device.split(":")[0]):
        return f"device {summary['device']}"
    root = runs[device][0]
    if root["allocated_bytes"] <= 0 or summary["peak_bytes"] <= 0:
        return f"no memory reported on {device}: root {root['allocated_bytes']}, peak " \
               f"{summary['peak_bytes']}"
    if summary["flops"] != runs["cpu"][-1]["flops"]:
        return f"flops {summary['flops']}, cpu {runs['cpu'][-1]['flops']}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--bench", help="vin-capture-bench (bench/), for the overhead")
    parser.add_argument("--plain", help="vin-plain-forward (bench/), for profile's latency")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"torch {torch.__version__} sees no CUDA device")
        return 1
    os.makedirs(args.work, exist_ok=True)
    cases = zoo_models.cases_by_name()
    passed = failed = 0

    def report(name, problem):
        nonlocal passed, failed
        if problem:
            failed += 1
            print(f"FAIL {name}: {problem}", flush=True)
        else:
            passed += 1
            print(f"PASS {name}", flush=True)

    for name in CASES:
        case = cases[name]
        torch.manual_seed(0)
        model = case.build()
        call_args, call_kwargs = case.inputs()
        archive = os.path.join(args.work, name + ".pt")
        inputs_file = os.path.join(args.work, name + "_inputs.pt")
        torch.jit.save(torch.jit.script(model), archive)
        torch.save({"args": tuple(call_args), "kwargs": dict(call_kwargs)}, inputs_file)
        if case.as_scripted:
            case.as_scripted(model)
        model = model.to(args.device)
        on_device = to_device(tuple(call_args), args.device), to_device(dict(call_kwargs),
                                                                        args.device)
        report(f"{name} capture --device {args.device}",
               check_capture(args.binary, archive, inputs_file, model, *on_device, args.device))
        report(f"{name} capture --device {args.device} --stats --save",
               check_stats(args.binary, archive, inputs_file, args.device, args.work))
        report(f"{name} compare --device-a cpu --device-b {args.device}",
               check_compare(args.binary, archive, inputs_file, args.device))
        report(f"{name} profile --device {args.device}",
               check_profile(args.binary, archive, inputs_file, args.device))
        if args.plain:
            p = run([args.binary, "profile", archive, "--inputs", inputs_file, "--device",
                     args.device])
            latency = json.loads(p.stdout.splitlines()[-1])["latency_ms"]["median"] \
                if p.returncode == 0 else float("nan")
            q = subprocess.run([args.plain, archive, inputs_file, "3", "10"], capture_output=True,
                               text=True, timeout=300,
                               env=dict(os.environ, VIN_BENCH_DEVICE=args.device))
            times = sorted(float(t) for t in q.stdout.split()) or [float("nan")]
            plain = (times[(len(times) - 1) // 2] + times[len(times) // 2]) / 2
            print(f"MEASURE {name} profile latency median {latency:.3f} ms, plain loop "
                  f"{plain:.3f} ms, ratio {latency / plain:.3f}", flush=True)
        if args.bench:
            p = run([args.bench, archive, inputs_file, "--device", args.device, "--runs", "20"])
            print(f"MEASURE {name} overhead: {p.stdout.strip() or p.stderr.strip()[:300]}",
                  flush=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if passed and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
