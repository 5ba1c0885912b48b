#!/usr/bin/python3
"""Checks the fixtures of running a `.pt2` (tests/fixtures/make_pt2_run_fixtures.py) against
torch, under the torch that made them (the Debian 13 root for torch-2.6, testing for torch-2.14):

- each NAME.outputs*.npz equals, bit for bit, a fresh torch.export.load(NAME.pt2).module() run on
  its inputs file (under inference mode, one thread);
- the reference capture (tests/reference/export_capture_reference.py) with quotas too large to
  stop anything gives root output records whose tensor paths are the outputs' flattened leaves
  and whose values are the outputs.npz arrays, every element (float32 to the JSON double and
  back, exact);
- each NAME.capture*.jsonl equals a fresh reference capture with the default quotas;
- with --remake: the make script run again into a temporary folder writes the same bytes for
  every file (reproducibility; the folder's own torch version must be this torch's), operators.json
  the same operators (the lists another torch marked as missing left aside), each NAME.pt the
  same members but its debug information (`*.debug_pkl` holds the make script's path and line
  numbers; tests/fixtures/make_pt2_run_fixtures.sh always runs it from ROOT/tmp/vin_pt2_run, so
  the committed archives are the same bytes when made again there).

usage: check_pt2_run_fixtures.py DIR [--remake]     exit 0 when all agree, 1 naming each problem
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export_capture_reference as ecr  # noqa: E402
from capture_reference import CaptureLimits, load_inputs  # noqa: E402

UNBOUNDED = CaptureLimits(max_tensors=10 ** 9, max_samples_per_tensor=10 ** 9,
                          max_bytes=10 ** 12, max_traversal_nodes=10 ** 9,
                          max_container_depth=10 ** 3)


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def same_values(recorded, array):
    """Recorded JSON values against the array's elements (row-major): exact for every dtype."""
    flat = array.reshape(-1)
    if len(recorded) != flat.size:
        return False
    if array.dtype.kind == "f":
        return np.array_equal(np.asarray(recorded, dtype=np.float64).astype(array.dtype), flat,
                              equal_nan=True)
    return [v for v in flat.tolist()] == recorded


def check_run(folder, name, run, problems):
    pt2 = os.path.join(folder, name + ".pt2")
    inputs = os.path.join(folder, run["inputs"])
    with np.load(os.path.join(folder, run["outputs"])) as data:
        want = {k: data[k] for k in data.files}
    with open(os.path.join(folder, run["outputs"][:-len(".npz")] + ".json")) as f:
        described = json.load(f)
    # the outputs again, from torch
    from torch.utils._pytree import tree_flatten
    args, kwargs = load_inputs(inputs)
    torch.set_num_threads(1)
    with torch.inference_mode():
        leaves, spec = tree_flatten(ecr.load_exported(pt2).module()(*args, **kwargs))
    tensors = [t for t in leaves if isinstance(t, torch.Tensor)]
    if str(spec) != described["spec"]:
        problems.append(f"{name}: output spec {spec} != {described['spec']}")
    if len(tensors) != len(want):
        problems.append(f"{name}: {len(tensors)} output tensors, {len(want)} in {run['outputs']}")
    for i, t in enumerate(tensors):
        if not np.array_equal(ecr.numpy_of(t), want.get(f"out_{i}"), equal_nan=True):
            problems.append(f"{name}: out_{i} differs from a fresh run of the program")
    # the root's output records, every element recorded
    records, error = ecr.export_capture_run(pt2, [inputs], None, UNBOUNDED)
    if error is not None:
        problems.append(f"{name}: the reference capture raised {error!r}")
        return
    root_outputs = [r for r in records if r["record"] == "TensorSnapshot"
                    and r["module_path"] == ecr.ROOT and r["direction"] == "output"]
    if len(root_outputs) != len(want):
        problems.append(f"{name}: {len(root_outputs)} root output records, {len(want)} outputs")
    arrays = [d for d in described["leaves"] if "array" in d]
    for record, leaf in zip(root_outputs, arrays):
        array = want[leaf["array"]]
        if record["shape"] != list(array.shape) or record["dtype"] != leaf["dtype"]:
            problems.append(f"{name}: {record['tensor_path']} is {record['shape']} "
                            f"{record['dtype']}, {leaf['array']} {list(array.shape)} {leaf['dtype']}")
        elif not same_values(record["values"], array):
            problems.append(f"{name}: {record['tensor_path']}'s values differ from {leaf['array']}")
    # the committed capture with the default quotas
    if "capture" in run:
        fresh, error = ecr.export_capture_run(pt2, [inputs])
        committed = read_jsonl(os.path.join(folder, run["capture"]))
        if fresh != committed:
            diff = [(a, b) for a, b in zip(fresh, committed) if a != b][:1]
            problems.append(f"{name}: {run['capture']} differs from a fresh reference capture "
                            f"({len(fresh)} vs {len(committed)} records; first: {diff})")


def torchscript_members(path):
    """A TorchScript archive's members less its debug information (`*.debug_pkl`: the source
    file's path and lines, which follow where the make script ran from) and the serialization
    id made from them."""
    import zipfile
    with zipfile.ZipFile(path) as z:
        return {i.filename.split("/", 1)[1]: z.read(i) for i in z.infolist()
                if not i.filename.endswith((".debug_pkl", "/.data/serialization_id"))}


def remake(folder, problems):
    with tempfile.TemporaryDirectory() as tmp:
        make = os.path.join(HERE, "..", "fixtures", "make_pt2_run_fixtures.py")
        p = subprocess.run([sys.executable, make, tmp], capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"remaking failed: {p.stderr[-2000:]}")
            return
        made = sorted(os.listdir(tmp))
        present = sorted(n for n in os.listdir(folder) if n != "README.md")
        if made != present:
            problems.append(f"remade files differ in names: {sorted(set(made) ^ set(present))}")
        for n in made:
            if n == "operators.json" and n in present:  # less what another torch marked
                with open(os.path.join(tmp, n)) as a, open(os.path.join(folder, n)) as b:
                    committed = {k: v for k, v in json.load(b).items()
                                 if not k.startswith("missing_in_torch_")}
                    if json.load(a) != committed:
                        problems.append(f"{n}: remade, its operators differ")
            elif n.endswith(".pt") and n in present:
                if torchscript_members(os.path.join(tmp, n)) != \
                        torchscript_members(os.path.join(folder, n)):
                    problems.append(f"{n}: remade, its members differ")
            elif n in present:
                with open(os.path.join(tmp, n), "rb") as a, open(os.path.join(folder, n), "rb") as b:
                    if a.read() != b.read():
                        problems.append(f"{n}: remade, its bytes differ")


def main(argv):
    folder = [a for a in argv if not a.startswith("--")][0]
    with open(os.path.join(folder, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest["torch_version"] != torch.__version__:
        print(f"{folder} was made by torch {manifest['torch_version']}, this is {torch.__version__}",
              file=sys.stderr)
        return 1
    problems = []
    for name, entry in manifest["models"].items():
        for run in entry["runs"]:
            check_run(folder, name, run, problems)
    if "--remake" in argv:
        remake(folder, problems)
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{folder}: {len(manifest['models'])} models, "
          f"{'all agree' if not problems else f'{len(problems)} problems'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
