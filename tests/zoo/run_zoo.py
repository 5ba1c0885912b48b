#!/usr/bin/python3
"""The zoo parity test: every model of tests/zoo/zoo_models.py, exported the way users export it
(torch.jit.script, and torch.jit.trace for classification), checked against Python:

- inspect-model, plain and with --all, against the torch.jit.load view of the same archive
  (jit_load_records.py);
- for the classification models (scripted, not quantized): `compare` of the archive against the
  eager model's calls saved by scripts/eager_capture.py, every pair within tolerance;
- capture, with the default limits and with limits high enough to reach every call, against the
  Python reference with real forward hooks on the eager model (capture_reference.py), record
  for record; a forward that raises must raise in both, after the same records. Both run on one
  thread (a convolution's rounding depends on how the work is split). For traced archives,
  what torch.jit.trace itself changes is allowed for: a submodule whose forward returned its
  input unchanged is never called (no operation was traced), container arguments are flattened
  into tensors (tensor paths are not compared; the tensors and their order are), and a tensor
  passed to one call several times is passed once. Likewise what PyTorch 2.x's eager mode
  changes when hooks are attached: an eval-mode TransformerEncoderLayer then leaves its fast path
  (one fused operation that calls none of its submodules), which the scripted layer keeps; there
  both sides watch every module but such layers and what is below them. The compare with the
  eager model runs the tool on one thread too.

Models that call torchvision's custom operators (the detection models: torchvision::nms,
roi_align, ...) must be refused by capture without --load-library, with a message naming the
operator and the option; with `--load-library` of torchvision's own operator library (the one
this Python's torchvision loads) they are compared with the Python reference like the others.

usage: run_zoo.py --binary PATH [--jobs N] [--only NAME,...] [--list]

Each case runs in a process forked from this one (which imports torch once and runs nothing), so
that no case sees TorchScript state another left; its archive is written to a temporary folder
and deleted once checked. Models over 200M parameters run one at a time. Prints one line per
case and `N passed, M failed`; exit 1 on any failure.
"""
import argparse
import copy
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))

HIGH_LIMITS = ["--max-tensors", "1000000000", "--max-bytes", "1000000000000",
               "--max-samples-per-tensor", "8"]


def first_difference(expected, got):
    for i, (e, g) in enumerate(zip(expected, got)):
        if e != g:
            return f"record {i + 1} differs:\n    python: {e[:400]}\n    tool:   {g[:400]}"
    return f"{len(got)} records, Python has {len(expected)}"


def export(case, model, args):
    import torch
    if case.export == "trace":
        return torch.jit.trace(model, args, check_trace=False)
    return torch.jit.script(model)


def inspect_parity(binary, archive):
    """inspect-model against the plain records, and inspect-model --all against the records with
    details (which read the tensors' bytes: the archive is loaded on the CPU)."""
    import torch
    from jit_load_records import records
    loaded = torch.jit.load(archive, map_location="cpu")
    expected = {details: [json.dumps(r) for r in records(loaded, archive, details)]
                for details in (False, True)}
    del loaded
    problems = []
    for flags, details in (([], False), (["--all"], True)):
        what = " ".join(["inspect-model", *flags])
        p = subprocess.run([binary, "inspect-model", archive, *flags], capture_output=True,
                           text=True)
        if p.returncode != 0:
            problems.append(f"{what}: exit {p.returncode}: {p.stderr.strip()[:400]}")
        elif p.stdout.splitlines() != expected[details]:
            problems.append(f"{what}: " + first_difference(expected[details],
                                                           p.stdout.splitlines()))
    return "\n".join(problems) or None


def identity_modules(traced):
    """Paths of a traced module's submodules whose calls in the traced archive pass no tensor:
    those whose forward returned its input unchanged (the tracer recorded no operation, and
    calls them with no argument, returning None, or not at all) and those the traced run did
    not reach (no forward at all). Eager hooks see tensors there; the archive has none."""
    paths = []
    for path, module in traced.named_modules():
        if not path:
            continue
        if not module._c._has_method("forward"):
            paths.append(path)
            continue
        graph = module._c._get_method("forward").graph
        inputs, outputs = list(graph.inputs()), list(graph.outputs())
        if len(inputs) == 1 or (len(outputs) == 1 and len(inputs) == 2 and
                                outputs[0].unique() == inputs[1].unique()):
            paths.append(path)
    return paths


def without_tensor_paths(lines):
    """torch.jit.trace flattens a submodule's container arguments into tensors, so a traced
    archive's tensor paths follow its traced signatures; the tensors and their order stay."""
    out = []
    for line in lines:
        record = json.loads(line)
        record.pop("tensor_path", None)
        out.append(json.dumps(record))
    return out


def torchvision_library():
    """The shared library that registers torchvision's operators for this Python's torchvision."""
    import importlib.util
    return importlib.util.find_spec("torchvision._C").origin


def hooks_disable_fast_path():
    """Whether this torch's eager TransformerEncoderLayer leaves its fast path when hooks are
    attached to it or below it (torch 2.x), while the scripted one, which Python's hooks do not
    reach, keeps it."""
    import inspect
    import torch
    return "hooks are attached" in inspect.getsource(torch.nn.TransformerEncoderLayer.forward)


def fast_path_layers(model):
    """Paths of the eval-mode TransformerEncoderLayers that may take the fast path (one fused
    operation: their submodules are never called)."""
    import torch
    return [p for p, m in model.named_modules()
            if isinstance(m, torch.nn.TransformerEncoderLayer) and not m.training
            and m.self_attn.batch_first]


def capture_parity(binary, archive, inputs_file, model, args, kwargs, flags, traced=None,
                   quantized=False, library=None):
    import torch
    import capture_reference as ref
    values = dict(zip(flags[::2], flags[1::2]))
    limits = ref.CaptureLimits(
        max_tensors=int(values.get("--max-tensors", 64)),
        max_samples_per_tensor=int(values.get("--max-samples-per-tensor", 32)),
        max_bytes=int(values.get("--max-bytes", 16384)))
    module_paths = None
    if traced is not None:
        skipped = set(identity_modules(traced))
        module_paths = [p or ref.ROOT for p, _ in model.named_modules() if p not in skipped]
    module_flags = []
    layers = fast_path_layers(model) if hooks_disable_fast_path() else []
    if layers:
        # a hook on such a layer or below it turns the eager fast path off, so the reference
        # watches everything else, and so does the tool
        inside = lambda p: any(p == l or p.startswith(l + ".") for l in layers)  # noqa: E731
        module_paths = [p or ref.ROOT for p, _ in model.named_modules()
                        if not inside(p) and (module_paths is None or (p or ref.ROOT) in module_paths)]
        module_flags = [f for p in module_paths for f in ("--module", p)]
    state = copy.deepcopy(model.state_dict()) if model.training else None
    records, error = ref.capture_run(model, [(args, kwargs)], module_paths=module_paths,
                                     limits=limits, traced_inputs=traced is not None)
    if state is not None:
        model.load_state_dict(state)  # training mode updates buffers; the archive has the old
    expected = [json.dumps(r) for r in records]
    # the reference runs on one thread: so does the tool (threads change float rounding)
    # quantized models were quantized for qnnpack (Debian's torch has no fbgemm)
    engine = ["--quantized-engine", "qnnpack"] if quantized else []
    engine += ["--load-library", library] if library else []
    p = subprocess.run([binary, "capture", archive, "--inputs", inputs_file, *flags, *engine,
                        *module_flags],
                       capture_output=True, text=True,
                       env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    label = "capture" + (" (high limits)" if flags else "")
    want = 1 if error is not None else 0
    if p.returncode != want:
        return f"{label}: exit {p.returncode}, Python's forward {'raised' if error else 'ran'}: " \
               f"{p.stderr.strip()[:400]}"
    got = p.stdout.splitlines()
    if traced is not None:
        expected, got = without_tensor_paths(expected), without_tensor_paths(got)
    if got != expected:
        return f"{label}: " + first_difference(expected, got)
    del torch
    return None


def eager_parity(binary, archive, inputs_file, model, args, kwargs, workdir, name):
    """compare ARCHIVE EAGER.npz: the eager model's calls (scripts/eager_capture.py) against the
    archive's on the same inputs, whole tensors, torch.testing's default tolerances."""
    from eager_capture import capture_to_npz
    eager = os.path.join(workdir, name + "_eager.npz")
    try:
        capture_to_npz(model, tuple(args), dict(kwargs), eager)
        # one thread, as the eager model ran (threads change a convolution's rounding)
        p = subprocess.run([binary, "compare", archive, eager, "--inputs", inputs_file],
                           capture_output=True, text=True,
                           env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    finally:
        if os.path.exists(eager):
            os.remove(eager)
    if p.returncode == 0:
        return None
    summary = p.stdout.splitlines()[-1][:600] if p.stdout else ""
    return f"compare with the eager model: exit {p.returncode}: {summary} {p.stderr.strip()[:300]}"


def refused_without_library(binary, archive, inputs_file):
    p = subprocess.run([binary, "capture", archive, "--inputs", inputs_file],
                       capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(lines) != 1 or "torchvision::" not in p.stderr \
            or "--load-library" not in p.stderr:
        return f"capture without --load-library: expected exit 1 and one line naming a " \
               f"torchvision:: operator and --load-library, got exit {p.returncode}: " \
               f"{p.stderr.strip()[:300]}"
    return None


def run_case(case, binary, workdir):
    import torch
    start = time.monotonic()
    torch.manual_seed(0)
    model = case.build()
    args, kwargs = case.inputs()
    archive = os.path.join(workdir, case.name + ".pt")
    inputs_file = os.path.join(workdir, case.name + "_inputs.pt")
    try:
        exported = export(case, model, args)
        torch.jit.save(exported, archive)
        traced = exported if case.export == "trace" else None
        del exported
        if case.as_scripted and case.export == "script":
            case.as_scripted(model)
        torch.save({"args": tuple(args), "kwargs": dict(kwargs)}, inputs_file)
        problems = [inspect_parity(binary, archive)]
        if case.eager_compare and case.export == "script" and not model.training:
            problems.append(eager_parity(binary, archive, inputs_file, model, args, kwargs,
                                         workdir, case.name))
        library = None
        if case.capture == "torchvision_library":
            problems.append(refused_without_library(binary, archive, inputs_file))
            library = torchvision_library()
        for flags in ([], HIGH_LIMITS):
            problems.append(capture_parity(binary, archive, inputs_file, model, args, kwargs,
                                           flags, traced, case.name.startswith("quantized_"),
                                           library))
        problems = [p for p in problems if p]
    finally:
        for path in (archive, inputs_file):
            if os.path.exists(path):
                os.remove(path)
    return problems, time.monotonic() - start


def child(name, results, binary, workdir):
    """One case in a forked process: TorchScript's state (compiled class types, which a later
    script of a differently configured module of the same class can reuse and compile
    differently) starts clean for every case."""
    from zoo_models import cases_by_name
    import torch
    torch.set_num_threads(1)
    try:
        problems, seconds = run_case(cases_by_name()[name], binary, workdir)
    except Exception:  # noqa: BLE001 - a case that cannot even run is a failure
        problems, seconds = ["Python side failed:\n" + traceback.format_exc()], 0.0
    results.put((name, problems, seconds))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--list", action="store_true", help="print the cases and their status")
    args = parser.parse_args()
    from zoo_models import all_cases
    cases = all_cases()
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if c.name in wanted]
    if args.list:
        for c in cases:
            status = f"skipped: {c.skip}" if c.skip else (
                "capture with torchvision's operator library"
                if c.capture == "torchvision_library" else "inspect-model and capture")
            print(f"{c.name} ({c.export}): {status}")
        return 0
    binary = os.path.abspath(args.binary)
    # torch and everything the cases need are imported here, before forking, and no tensor
    # operation runs in this process (so no thread pool exists to be forked)
    import warnings
    warnings.filterwarnings("ignore")
    import torch  # noqa: F401
    import torchvision  # noqa: F401
    import capture_reference  # noqa: F401
    import jit_load_records  # noqa: F401
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    pending = [c for c in cases if not c.skip]
    pending.sort(key=lambda c: not c.big)  # the big ones first, one at a time
    for c in cases:
        if c.skip:
            print(f"SKIP {c.name}: {c.skip}")
    start = time.monotonic()
    passed = failed = 0
    jobs = max(1, args.jobs)
    with tempfile.TemporaryDirectory(prefix="vin-zoo-") as workdir:
        running = {}  # name -> (process, big)
        while pending or running:
            big_running = any(big for _, big in running.values())
            while len(running) < jobs:
                ready = [c for c in pending if not (c.big and big_running)]
                if not ready:
                    break
                case = ready[0]
                pending.remove(case)
                proc = context.Process(target=child, args=(case.name, results, binary, workdir))
                proc.start()
                running[case.name] = (proc, case.big)
                big_running = big_running or case.big
            name, problems, seconds = results.get()
            running.pop(name)[0].join()
            if problems:
                failed += 1
                print(f"FAIL {name} ({seconds:.1f} s)")
                for problem in problems:
                    print("  " + problem.replace("\n", "\n  "))
            else:
                passed += 1
                print(f"PASS {name} ({seconds:.1f} s)")
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed, {sum(1 for c in cases if c.skip)} skipped "
          f"in {time.monotonic() - start:.0f} s")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
