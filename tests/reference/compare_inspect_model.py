#!/usr/bin/python3
"""Compares `vin-inspect inspect-model` with Python's torch.jit.load view, record for record.

usage: compare_inspect_model.py --binary PATH --fixtures DIR [ARCHIVE ...]

For every archive (by default each model fixture in DIR), the tool's jsonl output must equal,
line for line and byte for byte, what jit_load_records.py prints for the same archive: plain
`inspect-model` against its plain records, and `inspect-model --all` against its records with
details (jit_load_records.py --all); an archive the built-in reader refuses, the same through
--load-with-libtorch (LibTorch's loader). The two readers are also compared with each other on
every fixture by the unit test "with --all's details too".
Prints PASS or FAIL per archive and mode.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from jit_load_records import records  # noqa: E402

MODEL_FIXTURES = ["everything", "deep", "wide", "dict_model", "convnet", "transformer",
                  "resnet18", "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0",
                  "traced", "frozen", "quantized", "static_quantized",
                  # convnet as PyTorch 1.3 and 1.4 wrote archives (make_fixtures.py)
                  "format_v1",
                  # make_diff_fixtures.py: half and double copies, a retrained one, an edited one
                  "diff/net_half", "diff/net_double", "diff/net_retrained", "diff/net_new_arg"]

# the capture fixtures that are archives (hooks, interfaces, keyword arguments, dtypes)
CAPTURE_MODEL_FIXTURES = ["dtypenet", "exotic", "hookkw", "hooknet", "interfaces", "kwnet",
                          "nested", "raisenet", "subhooks"]
# archives the built-in reader refuses (a __setstate__ that computes training): described only
# through the LibTorch fallback, which is then what is compared
LIBTORCH_FIXTURES = ["computed_state"]

# (flags after the archive, whether the reference includes the details)
MODES = [([], False), (["--all"], True)]
LIBTORCH_MODES = [(["--load-with-libtorch"], False), (["--all", "--load-with-libtorch"], True)]


def expected_lines(archive, details):
    model = torch.jit.load(archive, map_location="cpu")
    return [json.dumps(r) for r in records(model, archive, details)]


def difference(binary, archive, flags, expected):
    """What is wrong with the tool's output for `inspect-model ARCHIVE FLAGS`, or None."""
    run = subprocess.run([binary, "inspect-model", archive, *flags], capture_output=True,
                         text=True)
    if run.returncode != 0:
        return f"exit {run.returncode}: {run.stderr.strip()}"
    return lines_difference(expected, run.stdout.splitlines())


def lines_difference(expected, got):
    """The first difference between the expected jsonl lines and the tool's, or None."""
    if len(got) != len(expected):
        return f"{len(got)} records, Python has {len(expected)}"
    for i, (e, g) in enumerate(zip(expected, got)):
        if e != g:
            return f"record {i + 1} differs:\n  python: {e}\n  tool:   {g}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--capture-fixtures", help="also the capture fixtures' archives here")
    parser.add_argument("--no-torch", action="store_true",
                        help="the binary was built without LibTorch: no fallback to compare")
    parser.add_argument("--skip-unloadable", action="store_true",
                        help="archives this torch cannot load (written by a newer PyTorch, with "
                             "operators it lacks) are skipped with the reason instead of failing "
                             "(the cross-version checks cover them)")
    parser.add_argument("archives", nargs="*")
    args = parser.parse_args()
    cases = [(a, MODES) for a in args.archives]
    if not cases:
        cases = [(os.path.join(args.fixtures, n + ".pt"), MODES) for n in MODEL_FIXTURES]
        if not args.no_torch:
            cases += [(os.path.join(args.fixtures, n + ".pt"), LIBTORCH_MODES)
                      for n in LIBTORCH_FIXTURES]
        if args.capture_fixtures:
            cases += [(os.path.join(args.capture_fixtures, n + ".pt"), MODES)
                      for n in CAPTURE_MODEL_FIXTURES]
    passed = failed = 0
    for archive, modes in cases:
        try:
            expected = {details: expected_lines(archive, details) for details in (False, True)}
        except RuntimeError as exc:
            if not args.skip_unloadable:
                raise
            reason = next((line for line in str(exc).splitlines() if line.strip()), repr(exc))
            print(f"SKIP {os.path.basename(archive)}: torch {torch.__version__} cannot load it "
                  f"({reason.strip()})")
            continue
        for flags, details in modes:
            problem = difference(args.binary, archive, flags, expected[details])
            name = " ".join([os.path.basename(archive), *flags])
            if problem:
                failed += 1
                print(f"FAIL {name}: {problem}")
            else:
                passed += 1
                print(f"PASS {name} ({len(expected[details])} records)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
