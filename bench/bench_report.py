#!/usr/bin/env python3
"""The report page's budgets (contract 13.3), measured: the page's own bytes, a resnet18
profile's page, and a 10,000-module profile's page, its size and how long headless Chromium
takes from navigation start to the first frame after the page says `data-ready` (best and median
of --runs, each a fresh load), for the single view and the comparison of two such profiles.

  /usr/bin/python3 bench/bench_report.py --binary build/ci/apps/vin-inspect [--runs 5]

Prints one Markdown table for docs/performance.md. Needs chromium (scripts/setup.sh installs it).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import urllib.parse

SOURCE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SOURCE, "tests", "report"))
from devtools_pipe import Browser  # noqa: E402

# set before the page's own script runs: the time of the first frame after data-ready
PROBE = """
new MutationObserver((changes, observer) => {
  if (!document.documentElement || document.documentElement.dataset.ready !== '1') return;
  observer.disconnect();
  requestAnimationFrame(() => { window.__vinFrame = performance.now(); });
}).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-ready']});
"""


def records_of(paths, flops, summary):
    out = []
    for p in paths:
        out.append({"record": "ModuleProfile", "module_path": p, "module_type": "bench.Block",
                    "calls": 1, "parameters": 4096, "input_shapes": [[8, 512]],
                    "output_shapes": [[8, 512]], "flops": flops(p), "macs": flops(p) // 2,
                    "self_flops": 0, "time_ms": 0.01 * len(p), "self_time_ms": 0.001,
                    "allocated_bytes": 16384, "peak_bytes": 16384})
    return out + [dict(summary, modules=len(out), operators=0)]


def write(path, records):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return path


def report(binary, out, *sides):
    subprocess.run([binary, "report", *sides, "-o", out], check=True)
    return out


def draw_times(browser, page_path, runs):
    page = browser.new_page(1280, 900)
    page.send("Page.addScriptToEvaluateOnNewDocument", {"source": PROBE})
    url = "file://" + urllib.parse.quote(page_path)
    times = []
    for _ in range(runs):
        page.navigate("about:blank")
        page.navigate(url, wait_for="window.__vinFrame !== undefined", timeout=60)
        times.append(page.evaluate("window.__vinFrame"))
        assert page.evaluate("document.querySelectorAll('#vin-chart > g').length") <= 3000
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="vin-bench-report-")
    data = os.path.join(SOURCE, "tests", "report", "data")
    with open(os.path.join(data, "resnet18.profile.jsonl")) as f:
        summary = json.loads(f.read().splitlines()[-1])
    paths = ["<root>"] + [f"blocks.{i}" for i in range(100)] + \
        [f"blocks.{i}.layers.{j}" for i in range(100) for j in range(99)]
    big = write(os.path.join(tmp, "big.jsonl"),
                records_of(paths, lambda p: 1000 + 7 * len(p) if p.count(".") == 3 else 10, summary))
    bigger = write(os.path.join(tmp, "big2.jsonl"),
                   records_of(paths, lambda p: 1100 + 7 * len(p) if p.count(".") == 3 else 10, summary))
    pages = [
        ("resnet18 profile", report(args.binary, os.path.join(tmp, "r18.html"),
                                    os.path.join(data, "resnet18.profile.jsonl"))),
        ("10,001 modules", report(args.binary, os.path.join(tmp, "big.html"), big)),
        ("10,001 modules, comparison", report(args.binary, os.path.join(tmp, "cmp.html"), big, bigger)),
    ]
    page = open(pages[0][1]).read()
    own = len(page.encode()) - len(page.split('id="vin-data">', 1)[1].split("</script>", 1)[0].encode())
    print(f"the page's own code, style and markup: {own} bytes (budget 40,000)\n")
    print("| page | bytes | budget | first frame after data-ready, best | median | budget |")
    print("| --- | --- | --- | --- | --- | --- |")
    with Browser() as browser:
        for name, path in pages:
            size = os.path.getsize(path)
            times = draw_times(browser, path, args.runs)
            budget = "80,000" if "resnet" in name else "2,000,000"
            print(f"| {name} | {size:,} | {budget} | {min(times):.0f} ms | "
                  f"{statistics.median(times):.0f} ms | {'' if 'resnet' in name else '1,500 ms'} |")


if __name__ == "__main__":
    main()
