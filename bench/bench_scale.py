#!/usr/bin/env python3
"""Time the readers on inputs that grow in one dimension (issue 26): each row at 10,000 and
100,000 entries should take about ten times as long, not a hundred.

  bench/bench_scale.py --binary build/ci/apps/vin-inspect

Rows: inspect-config of a rendering with N declared fields; diff of a rendering with one
N-key mapping against itself; diff of saved records whose module holds N attributes. Prints
one line per row and size (the median of three runs, in seconds) and the ratio of the two."""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def declared(n):
    return ("!vin.Big\n" + "".join(f"f{i}: {i}\n" for i in range(n)) + "__declared__:\n"
            "  vin.Big:\n" + "".join(f"    f{i}: int\n" for i in range(n)))


def mapping(n):
    return "!vin.Cfg\nextras:\n" + "".join(f"  k{i}: {i}\n" for i in range(n))


def attributes(n):
    records = [{"record": "ModelMetadata", "model_type": "m", "total_parameters": 0,
                "trainable_parameters": 0},
               {"record": "ModuleMetadata", "path": "<root>", "module_type": "m",
                "direct_parameters": 0, "trainable_parameters": 0, "direct_buffers": 0,
                "training": False, "attributes": {f"a{i}": i for i in range(n)}}]
    return "".join(json.dumps(r) + "\n" for r in records)


ROWS = [("inspect-config, N declared fields", declared, ".yaml", ["inspect-config", "{f}"]),
        ("diff, one N-key mapping", mapping, ".yaml", ["diff", "{f}", "{f}"]),
        ("diff, N attributes in saved records", attributes, ".jsonl", ["diff", "{f}", "{f}"])]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--sizes", default="10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for label, make, suffix, command in ROWS:
            seconds = []
            for n in sizes:
                path = os.path.join(tmp, f"{n}{suffix}")
                with open(path, "w") as f:
                    f.write(make(n))
                runs = []
                for _ in range(3):
                    start = time.monotonic()
                    p = subprocess.run([args.binary, *[c.replace("{f}", path) for c in command]],
                                       capture_output=True)
                    runs.append(time.monotonic() - start)
                    if p.returncode != 0:
                        raise SystemExit(f"{label} N={n}: exit {p.returncode}: {p.stderr[:300]!r}")
                seconds.append(statistics.median(runs))
                print(f"{label:40s} N={n:>7}: {seconds[-1]:7.2f} s")
            print(f"{label:40s} ratio {seconds[-1] / seconds[0]:.1f} for {sizes[-1] // sizes[0]}x")


if __name__ == "__main__":
    main()
