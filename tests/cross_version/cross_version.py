#!/usr/bin/python3
"""Cross-version checks between the vin-inspect builds against LibTorch 1.13 (Debian 12), 2.6
(Debian 13) and 2.14 (Debian testing), on the archives each version's torch wrote
(scripts/test_cross_version.sh runs them).

usage:
  cross_version.py records --binary B --out DIR --set NAME=BUILD_DIR [--set ...]
      writes DIR/NAME/<archive>.<mode>.txt: exit status, stdout and stderr of `B inspect-model
      ARCHIVE` plain and with --all, for every archive fixture of BUILD_DIR (its fixtures/ and
      capture_fixtures/, the lists of tests/reference/compare_inspect_model.py) and the
      torch.save state dicts of its fixtures/inputs/ (zip and legacy format)
  cross_version.py identical DIR_A DIR_B
      every file of DIR_A has a byte-identical twin in DIR_B and the reverse: both builds describe
      every archive, whichever torch wrote it, alike
  cross_version.py libtorch --binary B --set NAME=BUILD_DIR [--set ...]
      B's LibTorch against this Python's torch (the same version) on every archive of the set:
      where torch.jit.load loads it, `capture` must load it too (and reach binding the inputs);
      where it fails on an operator it does not have (`Unknown builtin op: NS::NAME`), B must exit
      1 with one line naming the archive and that operator; where it refuses a newer file format
      (the set's newer_version.pt), one line naming the archive and the version; any other torch
      failure is a failure.
      (Whether captures agree is compare_capture.py's part, run on the other version's capture
      fixtures.)

Each prints `PASS ...`/`FAIL ...` per case, then `N passed, M failed`, and exits 0 only when
something was checked and everything passed.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))

from compare_inspect_model import CAPTURE_MODEL_FIXTURES, MODEL_FIXTURES  # noqa: E402

MODES = {"plain": [], "all": ["--all"]}
UNKNOWN_OP = re.compile(r"Unknown builtin op: ([A-Za-z_]\w*::\w+(?:\.\w+)?)")
NEWER_FORMAT = re.compile(r"PyTorch file with version (\d+), but the maximum supported version "
                          r"for reading is (\d+)")
# an archive whose file format version (99) no LibTorch reads: torch refuses it as too new, and
# capture must name the version, not fail some other way (make_fixtures.py)
NEWER_FORMAT_FIXTURE = "newer_version"


def archives(build_dir):
    """(name, path) of the archive fixtures of one build tree, in a fixed order."""
    found = [(n, os.path.join(build_dir, "fixtures", n + ".pt")) for n in MODEL_FIXTURES]
    found += [(n, os.path.join(build_dir, "capture_fixtures", n + ".pt"))
              for n in CAPTURE_MODEL_FIXTURES]
    missing = [p for _, p in found if not os.path.isfile(p)]
    if missing:
        sys.exit(f"cross_version.py: missing archives: {', '.join(missing)}")
    return found


# the state dicts each torch wrote with torch.save, in the zip and the legacy format, and in the
# tar format of PyTorch 0.1-0.3 (make_fixtures.py, by tests/fixtures/torch_save_tar_writer.py):
# weights files every build must describe alike (contract 11)
WEIGHTS_FIXTURES = ["everything_state_dict", "everything_state_dict_legacy",
                    "everything_state_dict_tar"]


def weights_files(build_dir):
    return [(n, os.path.join(build_dir, "fixtures", "inputs", n + ".pt")) for n in WEIGHTS_FIXTURES]


def parse_sets(values):
    sets = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            sys.exit(f"cross_version.py: --set wants NAME=BUILD_DIR, got {value!r}")
        sets.append((name, path))
    return sets


def run(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout, result.stderr


def summary(passed, failed):
    print(f"{passed} passed, {failed} failed")
    return 0 if passed and not failed else 1


def records(args):
    count = 0
    for set_name, build_dir in parse_sets(args.set):
        out = os.path.join(args.out, set_name)
        os.makedirs(out, exist_ok=True)
        for name, path in archives(build_dir) + weights_files(build_dir):
            for mode, flags in MODES.items():
                status, stdout, stderr = run(args.binary, "inspect-model", path, *flags)
                # the file's own path differs between the roots; only a weights file's
                # WeightsFile record names it
                stdout = stdout.replace(path, "ARCHIVE")
                stderr = stderr.replace(path, "ARCHIVE")
                with open(os.path.join(out, f"{name.replace('/', '_')}.{mode}.txt"), "w") as f:
                    f.write(f"exit {status}\n--- stdout\n{stdout}--- stderr\n{stderr}")
                count += 1
    print(f"wrote {count} outputs under {args.out}")
    return 0


def identical(args):
    def listing(root):
        return sorted(os.path.relpath(os.path.join(d, f), root)
                      for d, _, files in os.walk(root) for f in files)

    a, b = listing(args.a), listing(args.b)
    passed = failed = 0
    for rel in sorted(set(a) | set(b)):
        if rel not in a or rel not in b:
            failed += 1
            print(f"FAIL {rel}: only under {args.a if rel in a else args.b}")
            continue
        with open(os.path.join(args.a, rel)) as fa, open(os.path.join(args.b, rel)) as fb:
            left, right = fa.read().splitlines(), fb.read().splitlines()
        if left == right and left[0] == "exit 0":
            passed += 1
            print(f"PASS {rel} ({len(left) - 3} lines)")
            continue
        failed += 1
        first = next((i for i, (x, y) in enumerate(zip(left, right)) if x != y),
                     min(len(left), len(right)))
        print(f"FAIL {rel}: line {first + 1} differs:\n  {args.a}: "
              f"{left[first] if first < len(left) else '(end)'}\n  {args.b}: "
              f"{right[first] if first < len(right) else '(end)'}")
    return summary(passed, failed)


def libtorch(args):
    import torch

    passed = failed = 0
    for set_name, build_dir in parse_sets(args.set):
        newer = (NEWER_FORMAT_FIXTURE, os.path.join(build_dir, "fixtures", NEWER_FORMAT_FIXTURE + ".pt"))
        for name, path in archives(build_dir) + [newer]:
            case = f"{set_name}/{name}"
            try:
                torch.jit.load(path, map_location="cpu")
                loadable, missing_op = True, None
            except RuntimeError as exc:
                match = UNKNOWN_OP.search(str(exc))
                newer_format = NEWER_FORMAT.search(str(exc))
                if newer_format:
                    status, _, stderr = run(args.binary, "capture", path, "--shape", "x=1")
                    lines = stderr.strip().splitlines()
                    wanted = f"archive file format version {newer_format.group(1)} is newer than LibTorch"
                    if status == 1 and len(lines) == 1 and path in lines[0] and wanted in lines[0]:
                        passed += 1
                        print(f"PASS {case} (torch {torch.__version__} reads versions up to "
                              f"{newer_format.group(2)}: {lines[0]})")
                    else:
                        failed += 1
                        print(f"FAIL {case}: torch refuses file format version "
                              f"{newer_format.group(1)}; expected exit 1 and one line naming it "
                              f"and the archive, got exit {status}: {stderr.strip()[:500]}")
                    continue
                if not match:
                    failed += 1
                    print(f"FAIL {case}: torch {torch.__version__} cannot load it: "
                          f"{str(exc).strip().splitlines()[0]}")
                    continue
                loadable, missing_op = False, match.group(1)
            # capture always loads with LibTorch; a --shape naming no argument stops it right
            # after the load, at binding the inputs (a usage error, 2, naming forward's arguments)
            status, stdout, stderr = run(args.binary, "capture", path, "--shape",
                                         "no_such_argument=1")
            if loadable:
                if status == 2 and "forward has no argument 'no_such_argument'" in stderr:
                    passed += 1
                    print(f"PASS {case} (LibTorch {torch.__version__} loads it, as torch does)")
                else:
                    failed += 1
                    print(f"FAIL {case}: torch loads it; LibTorch: exit {status}: "
                          f"{stderr.strip()[:500]}")
                continue
            lines = stderr.strip().splitlines()
            if status == 1 and len(lines) == 1 and path in lines[0] and missing_op in lines[0]:
                passed += 1
                print(f"PASS {case} (torch {torch.__version__} lacks {missing_op}: {lines[0]})")
            else:
                failed += 1
                print(f"FAIL {case}: torch lacks {missing_op}; expected exit 1 and one line "
                      f"naming it and the archive, got exit {status}: {stderr.strip()[:500]}")
    return summary(passed, failed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("records")
    p.add_argument("--binary", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--set", action="append", required=True)
    p.set_defaults(run=records)
    p = commands.add_parser("identical")
    p.add_argument("a")
    p.add_argument("b")
    p.set_defaults(run=identical)
    p = commands.add_parser("libtorch")
    p.add_argument("--binary", required=True)
    p.add_argument("--set", action="append", required=True)
    p.set_defaults(run=libtorch)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
