#!/usr/bin/python3
"""The corpus (tests/fixtures/real): TorchScript archives other people wrote and published,
each checked against what PyTorch and the archive itself say.

usage: compare_corpus.py --binary PATH --corpus DIR --work DIR [--no-torch] [FILE ...]

- SOURCES.md names every file in DIR, and only those, with its repository, path, commit and
  license.
- An archive this torch's torch.jit.load reads: `inspect-model` and `inspect-model --all` equal
  jit_load_records.py's records of its view, line for line, except that a tensor's `device` is
  where the archive saved it (the reference loads with map_location="cpu", and several archives
  were saved on cuda:0; the tool reports the saved device without loading anything).
- An archive it does not read (custom classes and operators of libraries not installed here,
  operators of a newer PyTorch, the model.json format of PyTorch 1.0 to 1.2): the tool describes
  it (exit 0), and its module tree and tensors are those the archive holds, read by
  ArchiveWalk (Python's pickle and json, building nothing the archive names), or it is a file
  SOURCES.md's format column marks as not TorchScript: one line on stderr naming the file and
  the reason, exit 1; a torch.save file is a weights file: `inspect-model --tensors` equals
  weights_reference.py's records of what torch.load rebuilds (compare_weights.check_saved); a
  safetensors file, of what json and numpy read from it by the format's specification.
- CAPTURE below: `capture` on the archives whose forward takes tensors (and int or bool
  arguments) runs, with --shape (tensors made as docs/inputs.md says, rebuilt here with
  torch.manual_seed and torch.randn) or with an .npz written by numpy, and saves every snapshot
  (--save). The root's outputs equal Python's forward on the same inputs, every snapshot's
  record agrees with its saved tensor, and every module call whose recorded inputs are its whole
  positional arguments gives, run again in Python on those inputs (the submodule's own forward,
  from torch.jit.load), the outputs the tool recorded. Where Python's forward raises (this torch
  cannot run the archive), the tool exits 1 with the same reason.
Prints PASS or FAIL per archive and check, then `N passed, M failed`.
"""
import argparse
import io
import json
import os
import pickle
import re
import subprocess
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from compare_inspect_model import lines_difference  # noqa: E402
from compare_weights import check_records, check_saved  # noqa: E402
from jit_load_records import records  # noqa: E402
from weights_reference import safetensors_state_dict  # noqa: E402

# SOURCES.md's format column: files that are not TorchScript archives, and the reason the tool
# must give for each
REFUSED_FORMATS = {
    "legacy PYTORCH1 container": "a TorchScript file of PyTorch 1.0's previews (PYTORCH1), which "
                                 "no released PyTorch reads",
}
# weights files (contract 11): described as the weights reference computes them from torch.load
# (torch.save files) or from the format's specification (safetensors: json and numpy)
WEIGHTS_FORMATS = ("torch.save pickle archive", "safetensors")

# archive -> the forward's inputs: ("shape", [NAME=DIMS, ...]) or ("npz", {name: array}) for a
# forward that also takes an int or a bool, which --shape does not make
CAPTURE = {
    "Colvars__colvars__f718e652__identity.pt": ("shape", ["x=2x3"]),
    "LaurentMazare__tch-rs__16491bc2__foo.pt": ("shape", ["x=2x3", "y=2x3"]),
    "LaurentMazare__tch-rs__4bd8bf21__foo1.pt": ("shape", ["x=2x3", "y=2x3"]),
    "LaurentMazare__tch-rs__4bd8bf21__foo2.pt": ("shape", ["x=2x3", "y=2x3"]),
    "LaurentMazare__tch-rs__4bd8bf21__foo3.pt": ("shape", ["x=3x4"]),
    "LaurentMazare__tch-rs__a3636f61__foo9.pt": ("shape", ["s=2x256", "t=2x256"]),
    "deepjavalibrary__djl__cf443e63__identity.pt": ("shape", ["tokenized_data=2x3"]),
    "dotnet__TorchSharp__24f2f9ab__list_out.dat": ("shape", ["x=2x3", "y=2x3"]),
    "dotnet__TorchSharp__b244ff0e__exported.method.dat": ("shape", ["x=2x3", "y=2x3"]),
    "dotnet__TorchSharp__94169b01__l1000_100_10.script.dat": ("shape", ["input=2x1000"]),
    "dotnet__TorchSharp__94169b01__linrelu.script.dat": ("shape", ["input=2x10"]),
    "dotnet__TorchSharp__e1da9510__scripted.script.dat": ("shape", ["input=6"]),
    "lighttransport__c-libtorch__a5721228__jit-test.pt": ("shape", ["x=2x3", "y=2x3"]),
    "mlverse__torch__5a3984e4__linear.pt": ("shape", ["x=2x10"]),
    "plumed__plumed2__0053e980__rt-pytorch_model_2d_torch_model.ptc": ("shape", ["x=1x2"]),
    "pytorch__serve__26abfd72__dummy.pt": ("shape", ["x=2x5"]),
    "vvmnnnkv__libtorchjs__1e6b10c1__mul2.pt": ("shape", ["x=2x3"]),
    "snakers4__silero-vad__facff0b2__model_micro.jit": ("shape", ["x=1x4000"]),
    "snakers4__silero-vad__b42d13f8__number_detector.jit": ("shape", ["x=1x8000"]),
    "snakers4__silero-vad__45d72863__silero_vad.jit": (
        "npz", {"x": ("randn", (1, 512)), "sr": np.array(16000, dtype=np.int64)}),
    "snakers4__silero-vad__081e6b98__silero_vad.jit": (
        "npz", {"x": ("randn", (1, 512)), "sr": np.array(8000, dtype=np.int64)}),
    "snakers4__silero-vad__557a32ed__model.jit": (
        "npz", {"x": ("randn", (1, 4000)), "vad": np.array(True), "number_vad": np.array(True),
                "language_classify": np.array(False)}),
}
REL, ABS = 1e-4, 1e-5


# --- the sources table ---

def sources(corpus):
    """file -> row (repository, path, commit, license, format) of SOURCES.md's table."""
    rows = {}
    with open(os.path.join(corpus, "SOURCES.md"), encoding="utf-8") as f:
        for line in f:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and len(cells) == 6 and cells[0] != "file":
                rows[cells[0]] = dict(zip(["repository", "path", "commit", "license", "format"],
                                          cells[1:]))
    return rows


def sources_problems(corpus, rows):
    files = {f for f in os.listdir(corpus) if f != "SOURCES.md"}
    problems = [f"{f}: not in SOURCES.md" for f in sorted(files - set(rows))]
    problems += [f"{f}: in SOURCES.md, not in the corpus" for f in sorted(set(rows) - files)]
    for f, row in sorted(rows.items()):
        if not re.fullmatch(r"[0-9a-f]{40}", row["commit"]) or not row["license"]:
            problems.append(f"{f}: SOURCES.md lacks a full commit or a license")
    return problems


# --- what the archive holds, read without building anything it names ---

class _Object:
    """An object of a class (or the result of a function) the unpickler does not build."""

    def __init__(self, *args):
        self.args = args
        self.state = None

    def __setstate__(self, state):
        self.state = state


class _Tensor:
    def __init__(self, storage, offset, size, *rest):
        self.location = storage.location if isinstance(storage, _Storage) else None
        self.shape = list(size)


class _Storage:
    def __init__(self, pid):
        self.location = pid[3]


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in {("torch._utils", "_rebuild_tensor_v2"),
                              ("torch._utils", "_rebuild_tensor")}:
            return _Tensor
        if (module, name) == ("collections", "OrderedDict"):
            return dict
        return type(f"{module}.{name}", (_Object,), {"qualified": f"{module}.{name}"})

    def persistent_load(self, pid):
        return _Storage(pid)


class ArchiveWalk:
    """The module tree a data.pkl archive holds: module path -> (class name, {tensor name:
    (shape, saved location)}), modules being the pickled objects of TorchScript classes whose
    state is a dict with a `training` entry; or, for a model.json archive (PyTorch 1.0 to 1.2),
    the tree its ModuleDefs describe."""

    def __init__(self, path):
        self.modules = {}
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            top = names[0].split("/")[0]
            if f"{top}/model.json" in names:
                self._model_json(json.loads(z.read(f"{top}/model.json")))
            else:
                self._data_pkl(_Unpickler(io.BytesIO(z.read(f"{top}/data.pkl"))).load())

    def _data_pkl(self, root):
        pending = [("<root>", root)]
        while pending:
            path, obj = pending.pop()
            tensors = {}
            for name, value in obj.state.items():
                child = f"{name}" if path == "<root>" else f"{path}.{name}"
                if self._is_module(value):
                    pending.append((child, value))
                elif isinstance(value, _Tensor):
                    tensors[name] = (value.shape, value.location)
            self.modules[path] = (obj.qualified, tensors)

    @staticmethod
    def _is_module(value):
        return (isinstance(value, _Object) and isinstance(value.state, dict)
                and "training" in value.state and value.qualified.startswith("__torch__."))

    def _model_json(self, model):
        table = model.get("tensors", [])
        pending = [("<root>", model["mainModule"], model["mainModule"]["name"])]
        while pending:
            path, module, qualified = pending.pop()
            tensors = {}
            for p in module.get("parameters", []):
                t = table[int(p.get("tensorId", 0))]
                tensors[p["name"]] = ([int(d) for d in t.get("dims", [])], t.get("device"))
            self.modules[path] = ("__torch__." + qualified, tensors)
            for sub in module.get("submodules", []):
                child = sub["name"] if path == "<root>" else f"{path}.{sub['name']}"
                # LibTorch 1.2's loader: an all-digit name is prefixed with "_" in the class name
                atom = "_" + sub["name"] if sub["name"].isdigit() else sub["name"]
                pending.append((child, sub, f"{qualified}.{atom}"))

    def device(self, module_path, name):
        tensor = self.modules.get(module_path, (None, {}))[1].get(name)
        return tensor[1] if tensor else None


def walk_difference(walk, lines):
    """How the tool's --all records differ from the archive's module tree, or None."""
    got = [json.loads(line) for line in lines]
    modules = {r["path"]: r for r in got if r["record"] == "ModuleMetadata"}
    if set(modules) != set(walk.modules):
        return (f"modules: the tool has {sorted(set(modules) - set(walk.modules))[:5]} more, "
                f"{sorted(set(walk.modules) - set(modules))[:5]} fewer")
    for path, (qualified, _) in walk.modules.items():
        demangled = re.sub(r"___torch_mangle_\d+\.", "", qualified[len("__torch__."):])
        if modules[path]["module_type"] != demangled:
            return f"{path}: module_type {modules[path]['module_type']}, archive {demangled}"
    for r in got:
        if r["record"] != "TensorMetadata":
            continue
        held = walk.modules[r["module_path"]][1].get(r["name"])
        if held is None:
            return f"{r['module_path']}.{r['name']}: no such tensor in the archive"
        if [r["shape"], r["device"]] != [held[0], held[1]]:
            return f"{r['module_path']}.{r['name']}: {r['shape']} on {r['device']}, " \
                   f"archive {held[0]} on {held[1]}"
    return None


# --- inspect-model ---

def run_tool(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)


def check_inspect(binary, archive, row, loaded):
    """[(check name, problem or None, detail)] for inspect-model on one archive."""
    name = os.path.basename(archive)
    refusal = next((why for fmt, why in REFUSED_FORMATS.items() if row["format"].startswith(fmt)),
                   None)
    if row["format"].startswith("safetensors"):
        tensors, metadata = safetensors_state_dict(archive)
        try:
            check_records(binary, archive, tensors, metadata)
            problem = None
        except AssertionError as e:
            problem = str(e)[:600]
        return [(name + " --tensors", problem, "as weights_reference.py's records of the file "
                 "read by json and numpy")]
    if row["format"].startswith(WEIGHTS_FORMATS):
        # a published file, kept in this repository and read before: torch.load runs its pickle
        kwargs = {"weights_only": False} if "weights_only" in torch.load.__code__.co_varnames \
            else {}
        value = torch.load(archive, map_location="cpu", **kwargs)
        try:
            check_saved(binary, archive, value)
            problem = None
        except AssertionError as e:
            problem = str(e)[:600]
        return [(name + " --tensors", problem, "as weights_reference.py's records of torch.load")]
    if refusal:
        run = run_tool(binary, "inspect-model", archive)
        lines = run.stderr.splitlines()
        ok = (run.returncode == 1 and not run.stdout and len(lines) == 1
              and lines[0].startswith(f"vin-inspect: error: {archive}: ") and refusal in lines[0])
        return [(name, None if ok else f"exit {run.returncode}, stderr {run.stderr!r:.300}, "
                 f"expected one line naming the file and '{refusal}'", "refused")]
    walk = ArchiveWalk(archive)
    results = []
    for flags in ([], ["--all"]):
        run = run_tool(binary, "inspect-model", archive, *flags)
        check = " ".join([name, *flags])
        if run.returncode != 0:
            results.append((check, f"exit {run.returncode}: {run.stderr.strip()}", ""))
            continue
        got = run.stdout.splitlines()
        if loaded is not None:
            expected = []
            for r in records(loaded, archive, bool(flags)):
                if r["record"] == "TensorMetadata":
                    r["device"] = walk.device(r["module_path"], r["name"]) or r["device"]
                expected.append(json.dumps(r))
            results.append((check, lines_difference(expected, got),
                            f"{len(expected)} records as torch.jit.load's view"))
        else:
            results.append((check, walk_difference(walk, got),
                             f"{len(walk.modules)} modules as the archive holds them; "
                             f"torch {torch.__version__} cannot load it"))
    return results


# --- capture ---

def inputs_of(archive, spec, model, folder):
    """(tool flags, Python positional arguments) for the CAPTURE entry `spec`."""
    kind, items = spec
    arguments = [a.name for a in model.forward.schema.arguments[1:]]
    torch.manual_seed(0)
    if kind == "shape":
        dims = dict((s.split("=")[0], [int(d) for d in s.split("=")[1].split("x")]) for s in items)
        # made in the order of forward's arguments, as docs/inputs.md says
        values = [torch.randn(dims[a]) for a in arguments if a in dims]
        return [f for s in items for f in ("--shape", s)], values
    arrays = {}
    for name, value in items.items():
        if isinstance(value, tuple):
            value = np.random.default_rng(0).standard_normal(value[1]).astype(np.float32)
        arrays[name] = value
    path = os.path.join(folder, os.path.basename(archive) + ".npz")
    np.savez(path, **arrays)
    values = [torch.from_numpy(arrays[a]) if arrays[a].ndim or arrays[a].dtype == np.float32
              else arrays[a].item() for a in arguments]
    return ["--inputs", path], values


def flatten(value, prefix):
    """(tensor path, tensor) of every tensor in a forward's output, as capture names them."""
    if isinstance(value, torch.Tensor):
        yield prefix, value
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from flatten(v, prefix + [str(i)])
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from flatten(v, prefix + [str(k)])


def close(a, b):
    return (tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype
            and torch.allclose(a.double(), b.double(), rtol=REL, atol=ABS, equal_nan=True))


def check_capture(binary, archive, spec, folder):
    """Problem or None, and a detail, for capture on one archive (see the module docstring)."""
    model = torch.jit.load(archive, map_location="cpu")
    flags, values = inputs_of(archive, spec, model, folder)
    saved = os.path.join(folder, os.path.basename(archive) + ".saved.npz")
    run = run_tool(binary, "capture", archive, *flags, "--save", saved,
                   "--max-tensors", "100000", "--max-bytes", "100000000")
    try:
        python_output = model(*values)
    except RuntimeError as exc:
        # this torch cannot run it (torch 2.6 on silero-vad's stft without return_complex): the
        # tool must say so with the operation's own reason, as contract 7.5 asks
        reason = [line for line in str(exc).splitlines() if line.strip()][-1]
        reason = re.sub(r"^\w+(Error|Exception): ", "", reason.strip())
        lines = run.stderr.splitlines()
        if (run.returncode == 1 and 1 <= len(lines) <= 2 and "the model's forward raised" in
                lines[0] and reason in lines[0]):
            return None, f"the forward raises in Python too: {reason[:80]}"
        return f"Python's forward raises ({reason}); the tool: exit {run.returncode}, " \
               f"{run.stderr.strip()[:300]}", ""
    if run.returncode != 0:
        return f"exit {run.returncode}: {run.stderr.strip()[:400]}", ""
    snapshots = [json.loads(line) for line in run.stdout.splitlines()]
    snapshots = [r for r in snapshots if r["record"] == "TensorSnapshot"]
    with np.load(saved) as npz:
        tensors = {k: torch.from_numpy(npz[k]) for k in npz.files}

    def key(r):
        parts = [r["module_path"], str(r["call_index"]), r["direction"], *r["tensor_path"]]
        return "/".join(re.sub(r"[%/\x00-\x1f]", lambda m: f"%{ord(m.group()):02X}", p)
                        for p in parts)

    for r in snapshots:
        t = tensors.get(key(r))
        if t is None:
            return f"{key(r)}: recorded, not saved", ""
        if list(t.shape) != r["shape"] or t.numel() != r["numel"]:
            return f"{key(r)}: record {r['shape']}, saved {list(t.shape)}", ""
        sample = t.flatten()[:len(r["values"])].tolist()
        if r["values"] and not close(torch.tensor(sample, dtype=torch.float64),
                                     torch.tensor([float(v) for v in r["values"]],
                                                  dtype=torch.float64)):
            return f"{key(r)}: record values differ from the saved tensor", ""
    calls = {}
    for r in snapshots:
        calls.setdefault((r["module_path"], r["call_index"]), []).append(r)
    # the root: its inputs and outputs as Python's forward has them
    expected = list(flatten(python_output, ["output"]))
    root_out = [r for r in calls.get(("<root>", 0), []) if r["direction"] == "output"]
    if [r["tensor_path"] for r in root_out] != [p for p, _ in expected]:
        return (f"root outputs {[r['tensor_path'] for r in root_out]}, Python "
                f"{[p for p, _ in expected]}"), ""
    for r, (_, t) in zip(root_out, expected):
        if not close(tensors[key(r)], t):
            return f"{key(r)}: differs from Python's forward", ""
    # every submodule call whose recorded inputs are its positional arguments, run again
    rerun = 0
    for (path, _), records_ in calls.items():
        if path == "<root>":
            continue
        inputs = [r for r in records_ if r["direction"] == "input"]
        outputs = [r for r in records_ if r["direction"] == "output"]
        module = model
        for part in path.split("."):
            module = getattr(module, part)
        try:
            declared = module.forward.schema.arguments[1:]
        except AttributeError:  # a module whose forward is overloaded (forward__0, ...)
            continue
        if (not inputs or any(r["tensor_path"] != ["args", str(i)]
                              for i, r in enumerate(inputs))
                or len(inputs) != len(declared)
                or any(str(a.type) != "Tensor" for a in declared)):
            continue
        out = list(flatten(module(*[tensors[key(r)].clone() for r in inputs]), ["output"]))
        if [r["tensor_path"] for r in outputs] != [p for p, _ in out]:
            return f"{path}: outputs {[r['tensor_path'] for r in outputs]}, Python " \
                   f"{[p for p, _ in out]}", ""
        for r, (_, t) in zip(outputs, out):
            if not close(tensors[key(r)], t):
                return f"{key(r)}: differs from {path}'s forward run again in Python", ""
        rerun += 1
    return None, (f"{len(snapshots)} snapshots, root as Python's forward, {rerun} module calls "
                  f"run again")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--work", required=True, help="a folder for inputs and saved captures")
    parser.add_argument("--no-torch", action="store_true",
                        help="the binary was built without LibTorch: no capture")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rows = sources(args.corpus)
    results = [("SOURCES.md", "; ".join(sources_problems(args.corpus, rows)) or None,
                f"{len(rows)} files")] if not args.files else []
    for name in args.files or sorted(rows):
        archive = os.path.join(args.corpus, name)
        try:
            loaded = torch.jit.load(archive, map_location="cpu")
        except Exception:  # noqa: BLE001 (any reason torch gives is a reason it cannot load)
            loaded = None
        results += check_inspect(args.binary, archive, rows[name], loaded)
        if name in CAPTURE and not args.no_torch:
            problem, detail = check_capture(args.binary, archive, CAPTURE[name], args.work)
            results.append((f"{name} capture", problem, detail))
    failed = 0
    for check, problem, detail in results:
        if problem:
            failed += 1
            print(f"FAIL {check}: {problem}", flush=True)
        else:
            print(f"PASS {check} ({detail})", flush=True)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed or not results else 0


if __name__ == "__main__":
    sys.exit(main())
