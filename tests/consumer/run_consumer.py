#!/usr/bin/python3
"""The installed library as a C++ user meets it: installs BUILD_DIR's component dev
(`cmake --install`) into WORK/prefix, configures and builds tests/consumer against that prefix
alone (find_package(vin_inspect), COMPONENTS torch unless --no-torch), and runs the program:
its inspect-model --all records of a fixture, and (LibTorch part) its capture_model records of
one forward, must equal the vin-inspect binary's output for the same archive and inputs.

usage: run_consumer.py --build-dir DIR --binary PATH --fixtures DIR --work DIR [--no-torch]
Prints `PASS ...`/`FAIL ...` per check and `N passed, M failed`; exits 0 only when all pass.
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def step(cmd):
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"FAIL {' '.join(cmd)}: exit {run.returncode}\n{run.stdout[-3000:]}"
                 f"{run.stderr[-3000:]}")
    return run.stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    prefix = os.path.join(args.work, "prefix")
    build = os.path.join(args.work, "build")
    step(["cmake", "--install", args.build_dir, "--prefix", prefix, "--component", "dev"])
    step(["cmake", "-S", HERE, "-B", build, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
          f"-DCMAKE_PREFIX_PATH={os.path.abspath(prefix)}",
          f"-DWITH_TORCH={'OFF' if args.no_torch else 'ON'}"])
    step(["cmake", "--build", build])
    consumer = os.path.join(build, "consumer")

    archive = os.path.join(args.fixtures, "everything.pt")
    inputs = os.path.join(args.fixtures, "inputs", "everything_positional.npz")
    checks = [("inspect-model --all", [archive], ["inspect-model", archive, "--all"])]
    if not args.no_torch:
        checks.append(("capture", [archive, inputs], ["capture", archive, "--inputs", inputs]))
    passed = failed = 0
    for name, consumer_args, tool_args in checks:
        mine = subprocess.run([consumer, *consumer_args], capture_output=True, text=True)
        tool = subprocess.run([args.binary, *tool_args], capture_output=True, text=True)
        lines = mine.stdout.splitlines()
        if mine.returncode == 0 and tool.returncode == 0 and mine.stdout == tool.stdout and lines:
            passed += 1
            print(f"PASS {name}: the consumer's {len(lines)} records equal vin-inspect's")
        else:
            failed += 1
            print(f"FAIL {name}: consumer exit {mine.returncode} ({mine.stderr.strip()[:300]}), "
                  f"vin-inspect exit {tool.returncode}; outputs "
                  f"{'equal' if mine.stdout == tool.stdout else 'differ'}")
    print(f"{passed} passed, {failed} failed")
    return 0 if passed and not failed else 1


if __name__ == "__main__":
    sys.exit(main())
