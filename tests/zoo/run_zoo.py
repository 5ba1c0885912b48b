#!/usr/bin/python3
"""The zoo parity test: every model of tests/zoo/zoo_models.py, exported the way users export it
(torch.jit.script, and torch.jit.trace for classification), checked against Python:

- inspect-model, plain and with --all, against the torch.jit.load view of the same archive
  (jit_load_records.py); scan, which must find that the archive loads as data;
- for the classification models (scripted, not quantized): `compare` of the archive against the
  eager model's calls saved by scripts/eager_capture.py, every pair within tolerance;
- profile (`--warmup 0 --runs 1`, one thread) of the scripted classification models (not
  quantized) and of torch.nn's recurrent and transformer modules: every module's calls, FLOPs
  and self FLOPs, and the total, against the eager model
  under profile_reference.py's counter (FlopCounterMode's formulas, forward hooks);
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

usage: run_zoo.py --binary PATH [--jobs N] [--only NAME,...] [--list] [--cache DIR | --no-cache]
                  [--times FILE]

Each case runs in a process forked from this one (which imports torch once and runs nothing), so
that no case sees TorchScript state another left; a classification model's traced and scripted
cases are forked from one process that built their eager model once. Models over 200M parameters
run one at a time.
Prints one line per case, `N passed, M failed`, and where the time went: seconds per phase summed
over the cases (Python's side: build, export and save, references; the tool's runs: inspect-model,
capture, capture with high limits, compare, ...), also written to --times FILE as one line
(scripts/test.sh puts it in its step table). Exit 1 on any failure.

What Python computes is the same on every run of the same torch, torchvision and sources, so it
is kept in a cache (--cache, default /var/cache/vin-inspect/zoo, else ~/.cache/vin-inspect/zoo
where that cannot be written; VIN_ZOO_CACHE=DIR or `off` sets it too), one folder per torch
version, torchvision version and hash of the Python sources that make the models and the
references (ZooCache): per case the Python references (records expected of each tool run), the
inputs, the eager model's calls for compare, and the archive where it is at most 256 MiB (and the
file system keeps 20 GiB free). A warm
run exports the bigger archives again (scripting is deterministic: the interpreter runs with
PYTHONHASHSEED=0, which fixes the order of a class's constants) and uses the references only when
the new archive is byte-identical to the one they were computed on, source maps aside
(fingerprint); otherwise, and on a clean
machine, everything is computed afresh and stored. The tool runs every time. Folders of older
sources for the same torch are removed.
"""
import argparse
import collections
import contextlib
import copy
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "reference"))
sys.path.insert(0, os.path.join(REPO, "scripts"))

# what the models, their inputs and the Python references are made by: the cache's key
SOURCES = ["tests/zoo/zoo_models.py", "tests/zoo/run_zoo.py", "tests/reference/capture_reference.py",
           "tests/reference/jit_load_records.py", "scripts/eager_capture.py",
           "tests/reference/profile_reference.py"]
# archives kept in the cache: up to 256 MiB each (a warm run exports only the bigger ones again;
# all of them would be 45 GB under torch 1.13), and only while the file system keeps 20 GiB free
CACHED_ARCHIVE_BYTES = 256 << 20
CACHE_FREE_BYTES = 20 << 30
# the archives are written to a RAM file system where one has this much room (the biggest is
# 2.6 GB, and big cases run beside small ones only)
SCRATCH_RAM_BYTES = 6 << 30

HIGH_LIMITS = ["--max-tensors", "1000000000", "--max-bytes", "1000000000000",
               "--max-samples-per-tensor", "8"]

# seconds this process spent per phase (each case runs in its own process: these are its own)
PHASES = collections.Counter()


@contextlib.contextmanager
def phase(name):
    start = time.monotonic()
    try:
        yield
    finally:
        PHASES[name] += time.monotonic() - start


def run_tool(name, command, **kwargs):
    """subprocess.run of the tool, its wall time counted under the phase `tool: NAME`."""
    with phase("tool: " + name):
        return subprocess.run(command, capture_output=True, text=True, **kwargs)


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


def fingerprint(archive):
    """The archive's zip directory (each member's name, size and CRC-32) as one hash: equal for
    exports identical in what the tool and the references read, and read without reading GBs of
    tensors. The source maps (code/**.debug_pkl) are left out: a traced archive's maps name
    the Python files the trace ran in by their absolute paths, so that a clone of the repository in
    another folder exports other bytes there, and only there; no record depends on them (the
    tool reads them only to check that they are pickles)."""
    import zipfile
    with zipfile.ZipFile(archive) as z:
        members = [(i.filename, i.file_size, i.CRC) for i in z.infolist()
                   if not i.filename.endswith(".debug_pkl")]
    return hashlib.sha256(json.dumps(members).encode()).hexdigest()


def inspect_expectation(archive):
    """inspect-model's lines, plain and with --all, from the torch.jit.load view of the archive
    (the details read the tensors' bytes: it is loaded on the CPU)."""
    import torch
    from jit_load_records import records
    loaded = torch.jit.load(archive, map_location="cpu")
    expected = {mode: [json.dumps(r) for r in records(loaded, archive, details)]
                for mode, details in (("plain", False), ("all", True))}
    del loaded
    return expected


def check_inspect(binary, archive, expected):
    problems = []
    for mode, flags in (("plain", []), ("all", ["--all"])):
        what = " ".join(["inspect-model", *flags])
        p = run_tool("inspect-model", [binary, "inspect-model", archive, *flags])
        if p.returncode != 0:
            problems.append(f"{what}: exit {p.returncode}: {p.stderr.strip()[:400]}")
        elif p.stdout.splitlines() != expected[mode]:
            problems.append(f"{what}: " + first_difference(expected[mode], p.stdout.splitlines()))
    return "\n".join(problems) or None


def check_scan(binary, archive):
    """scan: a model exported as users export it loads as data (its __setstate__ methods, the
    quantized models' among them, copy state); what its forward calls is no concern of scan."""
    p = run_tool("scan", [binary, "scan", archive])
    if p.returncode != 0 or '"verdict": "weights-only"' not in p.stdout:
        return f"scan: exit {p.returncode}: {(p.stdout + p.stderr).strip()[-600:]}"
    return None


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


# the two captures of every case: capture's default limits, and limits that reach every call
CAPTURE_RUNS = {"default": [], "high": HIGH_LIMITS}


def limits_of(flags):
    import capture_reference as ref
    values = dict(zip(flags[::2], flags[1::2]))
    return ref.CaptureLimits(
        max_tensors=int(values.get("--max-tensors", 64)),
        max_samples_per_tensor=int(values.get("--max-samples-per-tensor", 32)),
        max_bytes=int(values.get("--max-bytes", 16384)))


def watched_modules(model, traced):
    """The modules both sides watch: the reference's module paths (None: all) and the tool's
    --module flags (none: all)."""
    import capture_reference as ref
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
    return module_paths, module_flags


def capture_expectation(model, args, kwargs, traced):
    """What each capture run must print, from the Python reference with real forward hooks on
    the eager model: one forward watched under both runs' limits (capture_runs), on one thread."""
    import capture_reference as ref
    module_paths, module_flags = watched_modules(model, traced)
    state = copy.deepcopy(model.state_dict()) if model.training else None
    records, error = ref.capture_runs(model, [(args, kwargs)], module_paths=module_paths,
                                      limits_list=[limits_of(f) for f in CAPTURE_RUNS.values()],
                                      traced_inputs=traced is not None)
    if state is not None:
        model.load_state_dict(state)  # training mode updates buffers; the archive has the old
    return {"module_flags": module_flags, "raises": error is not None,
            "records": {run: [json.dumps(r) for r in rs]
                        for run, rs in zip(CAPTURE_RUNS, records)}}


def check_capture(binary, archive, inputs_file, expected, run, traced, quantized, library):
    flags = CAPTURE_RUNS[run]
    # the reference runs on one thread: so does the tool (threads change float rounding)
    # quantized models were quantized for qnnpack (Debian's torch has no fbgemm)
    engine = ["--quantized-engine", "qnnpack"] if quantized else []
    engine += ["--load-library", library] if library else []
    label = "capture" + (" (high limits)" if flags else "")
    p = run_tool(label, [binary, "capture", archive, "--inputs", inputs_file, *flags, *engine,
                         *expected["module_flags"]],
                 env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    raises = expected["raises"]
    if p.returncode != (1 if raises else 0):
        return f"{label}: exit {p.returncode}, Python's forward {'raised' if raises else 'ran'}: " \
               f"{p.stderr.strip()[:400]}"
    want, got = expected["records"][run], p.stdout.splitlines()
    if traced:
        want, got = without_tensor_paths(want), without_tensor_paths(got)
    if got != want:
        return f"{label}: " + first_difference(want, got)
    return None


def profiled(case):
    """Whether the case is profiled: the scripted classification models (not quantized: those
    compared with their eager model) and torch.nn's recurrent and transformer modules. (The
    segmentation, video and optical-flow models run the same counted operators at several
    times the cost.)"""
    import zoo_models
    nn_names = {c.name for c in zoo_models.nn_cases()}
    return case.export == "script" and (case.eager_compare or case.name in nn_names)


def profile_expectation(model, args, kwargs):
    """What profile must count: the eager model's FLOPs and calls per module
    (profile_reference.flops_per_module, on one thread). Under torch 2.x an eval-mode
    TransformerEncoderLayer leaves its fast path when hooks are attached, while the scripted one
    keeps it: such layers, what is below them and what holds them are not compared then; nor are
    the FLOPs of modules that ran a fused kernel whose inner operators the eager dispatch mode
    cannot see (profile_reference.OPAQUE: profile counts them; docs/profile.md)."""
    import profile_reference as ref
    state = copy.deepcopy(model.state_dict()) if model.training else None
    try:
        per_module, total = ref.flops_per_module(model, args, kwargs)
    except Exception:  # the tool must then fail too
        return {"raises": True}
    finally:
        if state is not None:
            model.load_state_dict(state)
    layers = fast_path_layers(model) if hooks_disable_fast_path() else []
    return {"raises": False, "modules": per_module, "flops": total, "skipped": layers}


def check_profile(binary, archive, inputs_file, expected):
    p = run_tool("profile", [binary, "profile", archive, "--inputs", inputs_file, "--warmup", "0",
                             "--runs", "1"],
                 env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    if p.returncode != (1 if expected["raises"] else 0):
        return f"profile: exit {p.returncode}, Python's forward " \
               f"{'raised' if expected['raises'] else 'ran'}: {p.stderr.strip()[:400]}"
    if expected["raises"]:
        return None
    records = [json.loads(line) for line in p.stdout.splitlines()]
    layers = expected["skipped"]
    # a fast-path layer without child records says why (issue 42): its children not called
    by_path = {r["module_path"]: r for r in records if r["record"] == "ModuleProfile"}
    for layer in layers:
        if layer in by_path and not any(p.startswith(layer + ".") for p in by_path) and \
                not by_path[layer].get("uncalled_children"):
            return f"profile: {layer} has no child records and no uncalled_children"
    # a fast-path layer, what is inside it and what holds it
    related = lambda path: any(path == l or path.startswith(l + ".") or l.startswith(  # noqa: E731
        ("" if path == "<root>" else path + ".")) for l in layers)
    opaque = {path for path, m in expected["modules"].items() if m["opaque"]}
    got = {r["module_path"]: r for r in records if r["record"] == "ModuleProfile"
           and not related(r["module_path"])}
    want = {path: m for path, m in expected["modules"].items() if not related(path)}
    if set(got) == set(want):  # calls are compared for all; FLOPs where eager sees them
        for path in got:
            if got[path]["calls"] != want[path]["calls"]:
                return f"profile: {path} calls {got[path]['calls']}, eager {want[path]['calls']}"
        got = {p: r for p, r in got.items() if p not in opaque}
        want = {p: m for p, m in want.items() if p not in opaque}
    if set(got) != set(want):
        return f"profile: modules called: tool only {sorted(set(got) - set(want))[:5]}, " \
               f"eager only {sorted(set(want) - set(got))[:5]}"
    for path in got:
        for field in ("calls", "flops", "self_flops"):
            if got[path][field] != want[path][field]:
                return f"profile: {path} {field} {got[path][field]}, eager {want[path][field]}"
    summary = records[-1]
    if expected["flops"] is not None and not layers and summary["flops"] != expected["flops"]:
        return f"profile: flops {summary['flops']}, eager {expected['flops']}"
    return None


def check_eager(binary, archive, inputs_file, eager):
    """compare ARCHIVE EAGER.npz: the eager model's calls (scripts/eager_capture.py) against the
    archive's on the same inputs, whole tensors, torch.testing's default tolerances."""
    # one thread, as the eager model ran (threads change a convolution's rounding)
    p = run_tool("compare", [binary, "compare", archive, eager, "--inputs", inputs_file],
                 env=dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1"))
    if p.returncode == 0:
        return None
    summary = p.stdout.splitlines()[-1][:600] if p.stdout else ""
    return f"compare with the eager model: exit {p.returncode}: {summary} {p.stderr.strip()[:300]}"


def refused_without_library(binary, archive, inputs_file):
    p = run_tool("capture without --load-library",
                 [binary, "capture", archive, "--inputs", inputs_file])
    lines = p.stderr.strip().splitlines()
    if p.returncode != 1 or len(lines) != 1 or "torchvision::" not in p.stderr \
            or "--load-library" not in p.stderr:
        return f"capture without --load-library: expected exit 1 and one line naming a " \
               f"torchvision:: operator and --load-library, got exit {p.returncode}: " \
               f"{p.stderr.strip()[:300]}"
    return None


class ZooCache:
    """The Python side of each case, kept between runs (see the module's docstring): under DIR,
    one folder per torch version, torchvision version and hash of SOURCES, and in it one folder
    per case with expected.json (written last), inputs.pt, eager.npz and, where small enough,
    the archive."""

    def __init__(self, folder):
        self.folder = folder

    @staticmethod
    def open(root):
        """The folder of this torch and these sources under `root`, made if missing; the folders
        of other sources for the same torch are removed. None where `root` cannot be written."""
        import torch
        import torchvision
        import numpy
        digest = hashlib.sha256(f"python {sys.version}, numpy {numpy.__version__}".encode())
        for rel in SOURCES:
            with open(os.path.join(REPO, rel), "rb") as f:
                digest.update(rel.encode() + b"\0" + f.read())
        prefix = f"torch-{torch.__version__}-torchvision-{torchvision.__version__}-"
        folder = os.path.join(root, prefix + digest.hexdigest()[:16])
        try:
            os.makedirs(folder, exist_ok=True)
            probe = tempfile.NamedTemporaryFile(dir=folder)
            probe.close()
        except OSError:
            return None
        for name in os.listdir(root):
            if name.startswith(prefix) and os.path.join(root, name) != folder:
                shutil.rmtree(os.path.join(root, name), ignore_errors=True)
        return ZooCache(folder)

    def load(self, name):
        """(folder, expected) of a case stored before, or None."""
        folder = os.path.join(self.folder, name)
        try:
            with open(os.path.join(folder, "expected.json")) as f:
                return folder, json.load(f)
        except (OSError, ValueError):
            return None

    def store(self, name, expected, files):
        """Keeps `expected` and `files` ({name in the folder: path}) for the case; a full disk
        or any other failure only leaves it uncached, and nothing is kept once the file system
        is down to 5 GiB free."""
        tmp = None
        try:
            if shutil.disk_usage(self.folder).free < CACHE_FREE_BYTES // 4:
                return
            tmp = tempfile.mkdtemp(prefix=f".{name}.", dir=self.folder)
            for target, source in files.items():
                try:  # where the work folder is on the same file system: no copy
                    os.link(source, os.path.join(tmp, target))
                except OSError:
                    shutil.copyfile(source, os.path.join(tmp, target))
            with open(os.path.join(tmp, "expected.json"), "w") as f:
                json.dump(expected, f)
            final = os.path.join(self.folder, name)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)
        except OSError:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)


def build(case):
    """The case's eager model and the arguments of its forward, the same on every run."""
    import torch
    with phase("python: build"):
        torch.manual_seed(0)
        model = case.build()
        args, kwargs = case.inputs()
    return model, args, kwargs


def build_and_export(case, archive, built=None):
    """The case's eager model (`built`: build(case) made already), its inputs and its export,
    saved to `archive`; the same bytes on every run of the same torch and sources (a traced
    archive's debug information holds the Python stack the trace ran in: a traced case run
    without its scripted pair, with --only, exports other bytes and computes its references
    again)."""
    import torch
    model, args, kwargs = built or build(case)
    with phase("python: export and save"):
        exported = export(case, model, args)
        torch.jit.save(exported, archive)
    return model, args, kwargs, exported


def expectations(case, model, args, kwargs, exported, archive, workdir):
    """Everything Python expects of the tool's runs on this case, and the files they read:
    (expected, {name: path})."""
    import torch
    traced = exported if case.export == "trace" else None
    if case.as_scripted and case.export == "script":
        case.as_scripted(model)
    files = {"inputs.pt": os.path.join(workdir, case.name + "_inputs.pt")}
    torch.save({"args": tuple(args), "kwargs": dict(kwargs)}, files["inputs.pt"])
    expected = {"archive_fingerprint": fingerprint(archive), "traced": traced is not None,
                "eager_compare": bool(case.eager_compare and case.export == "script"
                                      and not model.training)}
    with phase("python: inspect-model reference (torch.jit.load)"):
        expected["inspect"] = inspect_expectation(archive)
    if expected["eager_compare"]:
        from eager_capture import capture_to_npz
        files["eager.npz"] = os.path.join(workdir, case.name + "_eager.npz")
        with phase("python: eager calls for compare"):
            capture_to_npz(model, tuple(args), dict(kwargs), files["eager.npz"])
    with phase("python: capture reference"):
        expected["capture"] = capture_expectation(model, args, kwargs, traced)
    if profiled(case):
        with phase("python: profile reference"):
            expected["profile"] = profile_expectation(model, args, kwargs)
    return expected, files


def cached_archive(case, cache):
    """The case's cache hit, (folder, expected), and the archive kept with it: nothing of the
    case is built or exported then. (None, None) where either is missing."""
    hit = cache.load(case.name) if cache else None
    archive = os.path.join(hit[0], case.name + ".pt") if hit else None
    return hit, (archive if archive and os.path.exists(archive) else None)


def run_case(case, binary, workdir, cache, built=None, cached=None):
    """`cached`: cached_archive(case, cache), where the caller read it already."""
    start = time.monotonic()
    archive = os.path.join(workdir, case.name + ".pt")
    scratch = [archive]  # files of the workdir deleted at the end
    try:
        hit, kept_archive = cached or cached_archive(case, cache)
        if kept_archive:
            archive = kept_archive
            (folder, expected), files, python = hit, {}, "cached"
        else:
            model, args, kwargs, exported = build_and_export(case, archive, built)
            if hit and fingerprint(archive) == hit[1]["archive_fingerprint"]:
                (folder, expected), files, python = hit, {}, "cached, archive exported again"
            else:
                folder, python = None, "computed"
                expected, files = expectations(case, model, args, kwargs, exported, archive,
                                               workdir)
                scratch += files.values()
                if cache:
                    stored = dict(files)
                    if os.path.getsize(archive) <= CACHED_ARCHIVE_BYTES and \
                            shutil.disk_usage(cache.folder).free > CACHE_FREE_BYTES:
                        stored[case.name + ".pt"] = archive
                    cache.store(case.name, expected, stored)
            del model, exported
        # the files each run reads: this run's, else the cache's
        path = lambda name: files.get(name) or os.path.join(folder, name)  # noqa: E731
        inputs_file = path("inputs.pt")
        problems = [check_inspect(binary, archive, expected["inspect"]), check_scan(binary, archive)]
        if expected["eager_compare"]:
            problems.append(check_eager(binary, archive, inputs_file, path("eager.npz")))
        library = None
        if case.capture == "torchvision_library":
            problems.append(refused_without_library(binary, archive, inputs_file))
            library = torchvision_library()
        if "profile" in expected:
            problems.append(check_profile(binary, archive, inputs_file, expected["profile"]))
        for run in CAPTURE_RUNS:
            problems.append(check_capture(binary, archive, inputs_file, expected["capture"], run,
                                          expected["traced"], case.name.startswith("quantized_"),
                                          library))
        problems = [p for p in problems if p]
    finally:
        for leftover in scratch:
            if os.path.exists(leftover):
                os.remove(leftover)
    return problems, time.monotonic() - start, python


def groups_of(cases):
    """The cases as they run: alone, or a classification model's traced and scripted exports
    together (same builder), which build their eager model once."""
    groups = {}
    for case in cases:
        groups.setdefault(case.build, []).append(case)
    return list(groups.values())


def run_and_report(case, results, binary, workdir, cache, built, cached, phases):
    """Runs one case and puts its result on `results`, with the seconds of its phases (those
    in `phases` added: the build it was given)."""
    PHASES.clear()
    PHASES.update(phases)
    try:
        problems, seconds, python = run_case(case, binary, workdir, cache, built, cached)
    except Exception:  # noqa: BLE001 - a case that cannot even run is a failure
        problems, seconds, python = ["Python side failed:\n" + traceback.format_exc()], 0.0, "failed"
    results.put((case.name, problems, seconds, python, dict(PHASES)))


def child(names, results, binary, workdir, cache_folder):
    """A group of cases (groups_of) in a forked process. TorchScript's state (compiled class
    types, which a later script of a differently configured module of the same class can reuse
    and compile differently, and a script after a trace of the same classes names apart) must
    start clean for every case: the group's eager model is built here, once, where a case needs
    it, and each case of a pair runs in a process forked from this one, which shares the model's
    memory."""
    from zoo_models import cases_by_name
    import torch
    torch.set_num_threads(1)
    cache = ZooCache(cache_folder) if cache_folder else None
    cases = [cases_by_name()[name] for name in names]
    built = None
    cached = {case.name: cached_archive(case, cache) for case in cases}  # read once
    try:
        if len(cases) > 1 and any(not cached[c.name][1] for c in cases):
            built = build(cases[0])
    except Exception:  # noqa: BLE001 - reported for each case of the group
        failure = ["Python side failed building the model:\n" + traceback.format_exc()]
        for case in cases:
            results.put((case.name, failure, 0.0, "failed", dict(PHASES)))
        return
    build_phases = dict(PHASES)
    if len(cases) == 1:
        run_and_report(cases[0], results, binary, workdir, cache, built, cached[cases[0].name],
                       build_phases)
        return
    context = multiprocessing.get_context("fork")
    for i, case in enumerate(cases):
        proc = context.Process(target=run_and_report,
                               args=(case, results, binary, workdir, cache, built,
                                     cached[case.name], build_phases if i == 0 else {}))
        proc.start()
        proc.join()


def torch_major_version():
    """torch's major version from its installed metadata (importing torch takes seconds)."""
    import importlib.metadata
    try:
        return int(importlib.metadata.version("torch").split(".")[0])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return None


def scratch_folder():
    """Where the cases write their archives: each is written, read a few times and deleted
    within a minute, 45 GB in all. On a disk the kernel writes much of that back for nothing
    (the zoo ran 10% longer with its archives in /tmp than in /dev/shm). /dev/shm where it has
    room and TMPDIR is not set, else tempfile's folder."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        if shutil.disk_usage("/dev/shm").free >= SCRATCH_RAM_BYTES:
            return "/dev/shm"
    except OSError:
        pass
    return None


def deterministic_environment(environ):
    """The environment this script runs in, and with it the Python side and the tool:
    - PYTHONHASHSEED=0: a class's constants are a Python set, written into the archive in its
      iteration order; fixed, the same sources script to the same bytes, which the cache uses;
    - under torch 2 (or a torch whose version cannot be read), glibc's malloc hands out memory
      filled with zeros (glibc.malloc.perturb=255: freed memory is filled with 0xff bytes,
      memory handed out with their complement). Debian 13's torch 2.6 (oneDNN 3.7.2) runs a
      Conv2d whose channels are not a multiple of 16 on an AVX-512 CPU in a blocked layout
      whose padding channels it does not initialise: zeros there add nothing, but a NaN left by
      a freed tensor turns outputs into NaN (raft_small's 24-channel convolutions, in about half
      of the Python runs). Zero-filled memory makes both sides compute what the model computes.
      Torch 1.13 (oneDNN 2.6) is spared the cost (filling every block on malloc and free:
      about 7% of the zoo's time)."""
    environment = dict(environ, PYTHONHASHSEED="0")
    tunables = [t for t in environ.get("GLIBC_TUNABLES", "").split(":") if t]
    major = torch_major_version()
    if (major is None or major >= 2) and \
            not any(t.startswith("glibc.malloc.perturb=") for t in tunables):
        environment["GLIBC_TUNABLES"] = ":".join(tunables + ["glibc.malloc.perturb=255"])
    return environment


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--list", action="store_true", help="print the cases and their status")
    parser.add_argument("--cache", help="the cache's folder (default: VIN_ZOO_CACHE, else "
                        "/var/cache/vin-inspect/zoo, else ~/.cache/vin-inspect/zoo)")
    parser.add_argument("--times", help="write the run's seconds and where they went to FILE "
                        "(one line: seconds, a tab, the phases)")
    parser.add_argument("--no-cache", action="store_true",
                        help="compute every case's Python side afresh and keep nothing")
    args = parser.parse_args()
    environment = deterministic_environment(os.environ)
    if environment != os.environ:
        os.execve(sys.executable, [sys.executable, *sys.argv], environment)
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
    import gc
    gc.freeze()  # the children's collections leave the parent's objects (and their pages) alone
    cache = None
    setting = args.cache or os.environ.get("VIN_ZOO_CACHE", "")
    if not args.no_cache and setting != "off":
        roots = [setting] if setting else ["/var/cache/vin-inspect/zoo",
                                           os.path.expanduser("~/.cache/vin-inspect/zoo")]
        for root in roots:
            cache = ZooCache.open(root)
            if cache:
                break
    print(f"cache: {cache.folder if cache else 'none'}")
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    pending = groups_of([c for c in cases if not c.skip])
    pending.sort(key=lambda g: not g[0].big)  # the big ones first, one at a time
    group_of = {c.name: g[0].name for g in pending for c in g}
    for c in cases:
        if c.skip:
            print(f"SKIP {c.name}: {c.skip}")
    start = time.monotonic()
    passed = failed = 0
    sources = {}  # how each case's Python side was had -> cases
    phase_totals = collections.Counter()  # phase -> seconds, summed over the cases
    jobs = max(1, args.jobs)
    with tempfile.TemporaryDirectory(prefix="vin-zoo-", dir=scratch_folder()) as workdir:
        running = {}  # group (its first case's name) -> [process, big, results to come]
        while pending or running:
            big_running = any(big for _, big, _ in running.values())
            while len(running) < jobs:
                ready = [g for g in pending if not (g[0].big and big_running)]
                if not ready:
                    break
                group = ready[0]
                pending.remove(group)
                proc = context.Process(target=child, args=([c.name for c in group], results,
                                                           binary, workdir,
                                                           cache.folder if cache else None))
                proc.start()
                running[group[0].name] = [proc, group[0].big, len(group)]
                big_running = big_running or group[0].big
            name, problems, seconds, python, phases = results.get()
            entry = running[group_of[name]]
            entry[2] -= 1
            if entry[2] == 0:
                running.pop(group_of[name])[0].join()
            phase_totals.update(phases)
            sources[python] = sources.get(python, 0) + 1
            if problems:
                failed += 1
                print(f"FAIL {name} ({seconds:.1f} s, {python})")
                for problem in problems:
                    print("  " + problem.replace("\n", "\n  "))
            else:
                passed += 1
                print(f"PASS {name} ({seconds:.1f} s, {python})")
            sys.stdout.flush()
    print(f"{passed} passed, {failed} failed, {sum(1 for c in cases if c.skip)} skipped "
          f"in {time.monotonic() - start:.0f} s; Python's side: "
          + ", ".join(f"{n} {what}" for what, n in sorted(sources.items())))
    times = "; ".join(f"{name} {seconds:.0f}" for name, seconds in phase_totals.most_common())
    print(f"seconds by phase, summed over the cases ({jobs} at a time): {times}")
    if args.times:
        with open(args.times, "w") as f:
            f.write(f"{time.monotonic() - start:.1f}\t{passed + failed} cases, {jobs} at a time; "
                    f"seconds by phase: {times}\n")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
