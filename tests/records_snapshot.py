"""Every record the tool prints for the files the suites make and keep, as one JSON snapshot, and
the differences between two snapshots: how a refactor shows that records stayed byte-identical
(issue 69). Not a CTest suite; a maintainer runs it with the binary before and after a change:

    /usr/bin/python3 tests/records_snapshot.py take BINARY BUILD_DIR OUT.json
    /usr/bin/python3 tests/records_snapshot.py compare BEFORE.json AFTER.json

BUILD_DIR is a build folder whose suites have run (its fixtures/, weights/ and export work files);
the committed corpora (tests/fixtures/real, tests/fixtures/pt2) are read from the source tree.
inspect-model (plain, --all, --all --format json and table), inspect-config, diff of neighbouring
files, and capture, compare and profile on the scripted fixtures (profile's times, memory and
machine left out: they differ run to run).
"""
import glob
import json
import os
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# scripted fixtures the forward commands run, with their --shape
RUNS = {"convnet.pt": ["images=1x3x8x8"], "deep.pt": ["x=2x8"], "resnet18.pt": ["x=1x3x32x32"],
        "wide.pt": ["x=2x4"], "transformer.pt": ["x=2x5x16"], "everything.pt": None}
UNSTABLE = ("_ms", "latency", "throughput", "bytes", "peak", "overhead", "device_name",
            "threads", "torch_version", "vin_inspect_version", "warnings", "calibration")


def model_files(build):
    files = sorted(glob.glob(os.path.join(build, "fixtures", "*.pt")))
    files += sorted(glob.glob(os.path.join(build, "fixtures", "diff", "*")))
    files += sorted(glob.glob(os.path.join(SOURCE, "tests", "fixtures", "real", "*")))
    files += sorted(glob.glob(os.path.join(SOURCE, "tests", "fixtures", "pt2", "*", "*.pt*")))
    for folder in ("weights", "export", "cross_version"):
        files += sorted(p for p in glob.glob(os.path.join(build, folder, "**", "*"), recursive=True)
                        if os.path.isfile(p) and not p.endswith((".jsonl", ".json", ".md", ".txt"))
                        or p.endswith(".index.json"))
    return [f for f in files if not f.endswith(("SOURCES.md", ".jsonl"))]


def run(binary, args):
    p = subprocess.run([binary, *args], capture_output=True, timeout=600)
    return [p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")]


def stable_profile(text):
    """profile's records without what differs run to run: times, memory, the machine, and the
    operators' order (by time)."""
    out = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        out.append(json.dumps({k: v for k, v in record.items()
                               if not any(u in k for u in UNSTABLE)}))
    return "\n".join(sorted(out))


def take(binary, build, out):
    snapshot = {}
    files = model_files(build)
    for path in files:
        name = os.path.relpath(path, SOURCE) if path.startswith(SOURCE) else \
            os.path.relpath(path, build)
        for extra in ([], ["--all"], ["--all", "--format", "json"], ["--all", "--format", "table"]):
            snapshot[" ".join(["model", name, *extra])] = run(binary, ["inspect-model", path, *extra])
        snapshot["config " + name] = run(binary, ["inspect-config", path])
    for a, b in zip(files, files[1:]):
        snapshot[f"diff {os.path.basename(a)} {os.path.basename(b)}"] = run(binary, ["diff", a, b])
    fixtures = os.path.join(build, "fixtures")
    for name, shapes in RUNS.items():
        path = os.path.join(fixtures, name)
        inputs = ["--inputs", os.path.join(fixtures, "inputs", "everything_positional.npz")] \
            if shapes is None else [a for s in shapes for a in ("--shape", s)]
        snapshot["capture " + name] = run(binary, ["capture", path, *inputs])
        snapshot["capture --stats " + name] = run(binary, ["capture", path, *inputs, "--stats"])
        snapshot["compare " + name] = run(binary, ["compare", path, path, *inputs])
        p = run(binary, ["profile", path, *inputs, "--warmup", "1", "--runs", "2"])
        snapshot["profile " + name] = [p[0], stable_profile(p[1]), ""]
    with open(out, "w") as f:
        json.dump(snapshot, f, indent=0, sort_keys=True)
    print(f"{len(snapshot)} outputs of {len(files)} files -> {out}")


def compare(before, after):
    with open(before) as f:
        a = json.load(f)
    with open(after) as f:
        b = json.load(f)
    differ = 0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"only in {'after' if key in b else 'before'}: {key}")
            differ += 1
            continue
        (sa, oa, ea), (sb, ob, eb) = a[key], b[key]
        if (sa, oa) != (sb, ob):
            print(f"RECORDS DIFFER: {key}: exit {sa} -> {sb}")
            differ += 1
        elif ea != eb:
            print(f"stderr differs: {key}:\n  - {ea.strip()[:300]}\n  + {eb.strip()[:300]}")
    print(f"{len(a)} outputs compared; {differ} with other records or exit status")
    return 1 if differ else 0


if __name__ == "__main__":
    if sys.argv[1] == "take":
        take(os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(compare(sys.argv[2], sys.argv[3]))
