#!/usr/bin/python3
"""report's pages in a real browser: Debian's chromium, headless, driven over
--remote-debugging-pipe (devtools_pipe.py). Each page: exactly one request (the file), no script
error and no CSP violation; the state a person sees for each view, metric and fragment; hover,
click, search and keys; a comparison; hostile names shown as text with nothing injected; 10,000
modules within the budgets. Screenshots of three states go to --artifacts.

usage: test_report_page.py --binary PATH --source REPO_ROOT --artifacts DIR [TEST...]
Without a browser the tests are skipped (exit 77), unless VIN_REQUIRE_BROWSER=1 (the Debian 12
configuration of scripts/test.sh, where the set-up installs chromium): then that fails.
"""
import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))
import report_reference as ref  # noqa: E402
from devtools_pipe import Browser  # noqa: E402

ARGS = argparse.Namespace()
TESTS = []
TMP = tempfile.mkdtemp(prefix="vin-report-page-")
READY = "document.documentElement.dataset.ready === '1'"
# each page counts its alert() calls instead of showing them (a hostile name must make none)
GUARD = "window.__alerts = 0; window.alert = function () { window.__alerts++; };"


def test(fn):
    TESTS.append(fn)
    return fn


def data_file(name):
    return os.path.join(ARGS.source, "tests", "report", "data", name)


def write_report(name, *args):
    out = os.path.join(TMP, name)
    p = subprocess.run([ARGS.binary, "report", *args, "-o", out], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    return out


def write_records(name, records):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return path


def profile_records(paths, summary_changes=None, flops=lambda path: 10):
    """A profile of the modules `paths` (root first) as the tool writes one."""
    summary = ref.read_records(data_file("resnet18.profile.jsonl"))[-1]
    records = []
    for p in paths:
        records.append({"record": "ModuleProfile", "module_path": p, "module_type": "m.T",
                        "calls": 1, "parameters": 1, "input_shapes": [[1, 2]],
                        "output_shapes": [[1, 2]], "flops": flops(p), "macs": flops(p) // 2,
                        "self_flops": 0, "time_ms": 1.0, "self_time_ms": 0.5,
                        "allocated_bytes": 8, "peak_bytes": 8})
    summary = dict(summary, modules=len(records), operators=0, **(summary_changes or {}))
    return records + [summary]


class Session:
    """One page of the browser: opened on a report file, checked for requests and errors."""

    def __init__(self, browser):
        self.page = browser.new_page(1280, 900)
        self.page.send("Page.addScriptToEvaluateOnNewDocument", {"source": GUARD})

    def open(self, path, fragment=""):
        url = "file://" + urllib.parse.quote(path) + fragment
        self.page.navigate("about:blank")
        self.page.clear_logs()
        self.page.navigate(url, wait_for=READY)
        self.url = url.split("#")[0]
        return self

    def clean(self):
        """Exactly one request, the file, and no script error or CSP violation."""
        assert self.page.requests == [self.url], self.page.requests
        assert self.page.errors == [], self.page.errors
        assert self.eval("window.__alerts") == 0, "an alert ran"

    def eval(self, expression):
        return self.page.evaluate(expression)

    def boxes(self):
        return self.eval("""[...document.querySelectorAll('#vin-chart > g')].map(g => ({
            path: g.getAttribute('data-path'), kind: g.dataset.kind, value: Number(g.dataset.value),
            depth: Number(g.dataset.depth), change: g.dataset.change || null,
            match: g.hasAttribute('data-match')}))""")

    def text(self, selector):
        """An element's text without the marks that isolate names in it (U+2068, U+2069)."""
        text = self.eval(f"document.querySelector({json.dumps(selector)}).textContent")
        return text.replace("\u2068", "").replace("\u2069", "")

    def pressed(self):
        """The switches pressed, of those shown (the size switch is a comparison's)."""
        return self.eval("[...document.querySelectorAll('button[aria-pressed=true]')]"
                         ".filter(b => b.offsetParent !== null).map(b => b.textContent)")

    def hash(self):
        return self.eval("location.hash")

    def box_center(self, path, kind="module"):
        selector = f"#vin-chart > g[data-kind={kind}]"
        return self.eval(f"""(() => {{
            const g = [...document.querySelectorAll({json.dumps(selector)})]
                .find(g => g.getAttribute('data-path') === {json.dumps(path)});
            if (!g) return null;
            g.scrollIntoView({{block: 'center'}});
            const r = g.getBoundingClientRect();
            return [r.left + Math.min(r.width / 2, 30), r.top + r.height / 2];
        }})()""")

    def click_box(self, path, kind="module"):
        at = self.box_center(path, kind)
        assert at, f"no {kind} box {path}"
        self.page.click(*at)

    def screenshot(self, name):
        os.makedirs(ARGS.artifacts, exist_ok=True)
        self.eval("window.scrollTo(0, 0)")
        self.page.screenshot(os.path.join(ARGS.artifacts, name))


def summary_text(records, metric, label, query):
    """#vin-search-summary as the contract words it, from the Python reference."""
    nodes, _ = ref.expected([records], metric)
    parents = ref.tree([ref.Side(records)])
    pattern = any(c in query for c in "*?[")
    matched = {p for p in parents if (fnmatch.fnmatchcase(p, query) if pattern else query in p)}

    def inside(p):
        p = parents[p]
        while p is not None:
            if p in matched:
                return True
            p = parents[p]
        return False
    covered = sum(nodes[p]["total"][0] or 0 for p in matched if not inside(p))
    share = 100 * covered / nodes[ref.ROOT]["total"][0]
    n = len(matched)
    return f"{n} {'module matches' if n == 1 else 'modules match'}, {share:.2f}% of {label}"


def check_boxes(boxes, compare=False):
    assert 0 < len(boxes) <= 3000, len(boxes)
    for b in boxes:
        assert b["kind"] in ("module", "container", "self", "more"), b
        assert b["path"] is not None and b["depth"] >= 0 and b["value"] >= 0, b
        assert (b["change"] in ("grew", "shrank", "same", "added", "removed")) == compare, b


@test
def the_single_view_draws_the_tree_and_restores_its_state_from_the_fragment(s):
    page = write_report("r18.html", data_file("resnet18.profile.jsonl"))
    records = ref.read_records(data_file("resnet18.profile.jsonl"))
    nodes, _ = ref.expected([records], "flops")
    s.open(page).clean()
    boxes = s.boxes()
    check_boxes(boxes)
    assert boxes[0]["path"] == "<root>" and boxes[0]["depth"] == 0, boxes[0]
    assert ref.close(boxes[0]["value"], nodes["<root>"]["total"][0]), boxes[0]
    layer3 = next(b for b in boxes if b["path"] == "layer3" and b["kind"] == "module")
    assert ref.close(layer3["value"], nodes["layer3"]["total"][0]) and layer3["depth"] == 1, layer3
    assert s.pressed() == ["Icicle", "FLOPs"], s.pressed()
    assert s.hash() == "" and s.text("#vin-search-summary") == ""
    s.screenshot("1-single-icicle.png")

    # the whole state from a link; a query of a pattern; the treemap; the time metric
    s.open(page, "#view=treemap&metric=time&focus=layer3.1&q=" + urllib.parse.quote("*conv*"))
    s.clean()
    assert s.pressed() == ["Treemap", "time"], s.pressed()
    boxes = s.boxes()
    check_boxes(boxes)
    assert boxes[0]["path"] == "layer3.1", boxes[0]
    assert s.text("#vin-search-summary") == summary_text(records, "time", "time", "*conv*"), \
        s.text("#vin-search-summary")
    matched = {b["path"] for b in boxes if b["match"]}
    assert matched and all(fnmatch.fnmatchcase(p, "*conv*") for p in matched), matched
    assert s.eval("document.getElementById('vin-search').value") == "*conv*"
    # a focus that is gone lands on its nearest ancestor, and the fragment says so
    s.open(page, "#focus=layer3.1.gone.deeper&metric=nonsense")
    assert s.boxes()[0]["path"] == "layer3.1" and s.hash() == "#focus=layer3.1", s.hash()
    assert s.pressed() == ["Icicle", "FLOPs"], s.pressed()


@test
def hover_click_keys_and_search_change_what_is_shown(s):
    page = write_report("r18.html", data_file("resnet18.profile.jsonl"))
    records = ref.read_records(data_file("resnet18.profile.jsonl"))
    s.open(page)
    x, y = s.box_center("layer1")
    s.page.mouse_move(x, y)
    tip = s.text("#vin-tip")
    assert s.eval("!document.getElementById('vin-tip').hidden"), "no tooltip"
    for part in ("layer1\n", "torch.nn.modules.container.Sequential", "calls: 1",
                 "FLOPs: total", "share of root"):
        assert part in tip, (part, tip)
    # click zooms, Escape goes up, breadcrumbs show the path
    s.click_box("layer2")
    assert s.hash() == "#focus=layer2" and s.boxes()[0]["path"] == "layer2", s.hash()
    assert s.eval("[...document.querySelectorAll('#vin-crumbs button')].map(b => b.textContent)") == \
        ["<root>", "layer2"]
    s.click_box("layer2.0")
    assert s.hash() == "#focus=layer2.0"
    s.page.key("Escape")
    assert s.hash() == "#focus=layer2", s.hash()
    s.page.key("Escape")
    assert s.hash() == "" and s.boxes()[0]["path"] == "<root>", s.hash()
    # arrow keys select, Enter zooms
    s.eval("document.getElementById('vin-chart').focus()")
    s.page.key("ArrowDown")  # the root
    s.page.key("ArrowDown")  # its first child
    selected = s.eval("document.querySelector('#vin-chart > g.sel').getAttribute('data-path')")
    s.page.key("ArrowRight")
    right = s.eval("document.querySelector('#vin-chart > g.sel').getAttribute('data-path')")
    assert right != selected, (selected, right)
    s.page.key("Enter")
    assert s.boxes()[0]["path"] == right and s.hash() == "#focus=" + urllib.parse.quote(right, safe=""), s.hash()
    s.page.key("Escape")
    # / focuses the search; a substring search says how much it covers
    s.page.key("/")
    assert s.eval("document.activeElement.id") == "vin-search"
    s.page.type_text("layer2")
    assert s.text("#vin-search-summary") == summary_text(records, "flops", "FLOPs", "layer2"), \
        s.text("#vin-search-summary")
    assert s.hash() == "#q=layer2", s.hash()
    assert {b["path"] for b in s.boxes() if b["match"]} >= {"layer2", "layer2.0"}
    # the metric switch: pressed, in the fragment, the boxes resized
    s.page.key("Escape")
    s.eval("document.querySelector('button[data-metric=parameters]').click()")
    assert "Parameters" not in s.pressed() and "parameters" in s.pressed(), s.pressed()
    assert s.hash() == "#metric=parameters&q=layer2", s.hash()
    nodes, _ = ref.expected([records], "parameters")
    assert ref.close(s.boxes()[0]["value"], nodes["<root>"]["total"][0])
    # the module table sorts
    first = s.eval("document.querySelector('#vin-modules tr[data-path]').getAttribute('data-path')")
    assert first == "<root>", first
    s.eval("document.querySelector('#vin-modules th button').click()")  # by module, descending
    rows = s.eval("[...document.querySelectorAll('#vin-modules tr[data-path]')].map(r => r.getAttribute('data-path'))")
    assert rows == sorted(rows, reverse=True), rows[:5]
    # a row zooms the chart to its module
    s.eval("document.querySelector('#vin-modules tr[data-path=\"layer4.1\"] td').click()")
    assert s.boxes()[0]["path"] == "layer4.1" and "focus=layer4.1" in s.hash(), s.hash()
    s.clean()


@test
def search_patterns_match_as_fnmatchcase_and_links_cannot_break_the_page(s):
    page = write_report("r18.html", data_file("resnet18.profile.jsonl"))
    records = ref.read_records(data_file("resnet18.profile.jsonl"))
    for query in ("layer?.0", "layer[1-2].*", "[!l]*", "*[]]*", "layer[z-a3]*", "*.conv?",
                  "<root>", "[", "layer3"):
        s.open(page, "#q=" + urllib.parse.quote(query, safe=""))
        assert s.text("#vin-search-summary") == summary_text(records, "flops", "FLOPs", query), \
            (query, s.text("#vin-search-summary"))
    # what a link names that is no view, metric or size falls back to the default
    for fragment in ("#metric=toString", "#metric=__proto__&view=constructor", "#size=old",
                     "#q=%E0%A4%A", "#focus=&view=treemap"):
        s.open(page, fragment)
        s.clean()
        assert "FLOPs" in s.pressed() and s.boxes(), (fragment, s.pressed())
    # Enter on a focused switch presses it, even after the chart had the keys
    s.eval("document.getElementById('vin-chart').focus()")
    s.page.key("ArrowDown")
    s.eval("document.querySelector('button[data-metric=time]').focus()")
    s.page.key("Enter")
    assert "time" in s.pressed() and s.boxes()[0]["path"] == "<root>", s.pressed()


@test
def a_comparison_colours_and_counts_the_change(s):
    old = data_file("resnet18.profile.jsonl")
    records = ref.read_records(old)
    grown = {}
    for r in records:
        if r["record"] == "ModuleProfile" and (r["module_path"] == "layer3" or r["module_path"].startswith("layer3.")):
            if r["module_path"] == "layer3":
                grown = {f: r[f] for f in ("flops", "time_ms", "allocated_bytes")}
            for f in ("flops", "macs", "self_flops", "time_ms", "self_time_ms", "allocated_bytes"):
                r[f] *= 2
    for r in records:
        if r["record"] == "ModuleProfile" and r["module_path"] == "<root>":
            for f, v in grown.items():
                r[f] += v
    new = write_records("doubled.jsonl", records)
    page = write_report("cmp.html", old, new, "--tolerance", "time_ms=1%")
    s.open(page).clean()
    boxes = s.boxes()
    check_boxes(boxes, compare=True)
    layer3 = next(b for b in boxes if b["path"] == "layer3" and b["kind"] == "module")
    assert layer3["change"] == "grew", layer3
    assert next(b for b in boxes if b["path"] == "layer2")["change"] == "same"
    top = s.eval("(() => { const r = document.querySelector('#vin-changes tr[data-path]');"
                 " return [r.getAttribute('data-path'), [...r.cells].map(c => c.textContent)]; })()")
    assert top[0] == "layer3" and top[1][1] == "+100%", top
    _, counts = ref.expected([ref.read_records(old), records], "flops")
    assert s.text("#vin-change-counts") == (
        f"added {counts['added']}, removed {counts['removed']}, grew {counts['grew']}, "
        f"shrank {counts['shrank']}, unchanged {counts['unchanged']}"), s.text("#vin-change-counts")
    assert s.eval("document.getElementById('vin-banner-env').hidden")
    assert s.pressed() == ["Icicle", "FLOPs", "Size by new"], s.pressed()
    x, y = s.box_center("layer3")
    s.page.mouse_move(x, y)
    assert "+100% (grew)" in s.text("#vin-tip"), s.text("#vin-tip")
    s.screenshot("2-comparison.png")
    s.eval("document.querySelector('button[data-size=old]').click()")
    assert s.hash() == "#size=old" and "Size by old" in s.pressed(), s.hash()

    # a side measured on meta has no times: the time view still draws, every time unchanged
    meta = ref.read_records(old)
    for r in meta:
        if r["record"] == "ModuleProfile":
            r.update(time_ms=None, self_time_ms=None, allocated_bytes=None, peak_bytes=None)
    meta[-1].update(device="meta", device_name="meta", latency_ms=None, instrumented_ms=None)
    page = write_report("meta.html", write_records("meta.jsonl", meta), old, "--metric", "time")
    s.open(page).clean()
    assert s.pressed() == ["Icicle", "time", "Size by new"], s.pressed()
    assert s.text("#vin-change-counts").endswith("grew 0, shrank 0, unchanged 67"), s.text("#vin-change-counts")
    s.eval("document.querySelector('button[data-size=old]').click()")
    s.clean()
    assert s.boxes()[0]["value"] == 0, s.boxes()[0]

    # what was measured differently is named by its record field
    changed = ref.read_records(old)
    changed[-1].update(device="cuda:0", threads={"intra_op": 4, "inter_op": 1})
    page = write_report("env.html", old, write_records("on_gpu.jsonl", changed))
    s.open(page).clean()
    assert not s.eval("document.getElementById('vin-banner-env').hidden")
    banner = s.text("#vin-banner-env")
    assert "device" in banner and "threads" in banner and "torch_version" not in banner, banner


@test
def incomplete_flops_and_model_records(s):
    records = profile_records(["<root>", "a", "b"], {
        "flops_complete": False,
        "uncounted_operators": [{"name": "aten::my_op", "calls": 3, "time_ms": 1.0}]})
    page = write_report("incomplete.html", write_records("incomplete.jsonl", records))
    s.open(page).clean()
    assert not s.eval("document.getElementById('vin-banner-flops').hidden")
    assert "aten::my_op (3 calls)" in s.text("#vin-banner-flops")
    s.eval("document.querySelector('button[data-metric=time]').click()")
    assert s.eval("document.getElementById('vin-banner-flops').hidden")
    # model records: the parameters view alone, containers dashed and summed
    page = write_report("model.html", data_file("resnet18.model.jsonl"))
    s.open(page).clean()
    assert s.pressed() == ["Icicle", "parameters"], s.pressed()
    assert s.eval("document.querySelectorAll('button[data-metric]').length") == 1
    assert s.boxes()[0]["value"] == 11689512


@test
def merged_modules_at_the_focus_open_alone(s):
    paths = ["<root>", "big"] + [f"tiny{i}" for i in range(50)]
    records = profile_records(paths, flops=lambda p: 10**6 + 5000 if p == "<root>" else 10**6 if p == "big" else 100)
    page = write_report("skewed.html", write_records("skewed.jsonl", records))
    s.open(page).clean()
    more = [b for b in s.boxes() if b["kind"] == "more"]
    assert len(more) == 1 and more[0]["path"] == "<root>" and more[0]["value"] == 5000, more
    assert s.text("#vin-chart").count("50 smaller modules") <= 1
    s.click_box("<root>", "more")
    opened = s.boxes()
    assert opened[0]["path"] == "<root>" and {b["path"] for b in opened[1:]} == {f"tiny{i}" for i in range(50)}, opened[:3]
    assert "50 smaller modules" in s.text("#vin-crumbs"), s.text("#vin-crumbs")
    s.page.key("Escape")
    assert "smaller modules" not in s.text("#vin-crumbs") and s.hash() == ""
    assert any(b["kind"] == "more" for b in s.boxes())
    s.clean()


@test
def hostile_names_are_shown_as_text_and_inject_nothing(s):
    names = ["</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<!--<script>",
             "a\u2028b", "\u202eevil.txt", "bad\udcff", "x" * 100000, "a..b", ".lead"]
    records = profile_records(["<root>", *names], flops=lambda p: 1000 if p == "<root>" else 50)
    page = write_report("hostile.html", write_records("hostile.jsonl", records),
                        "--title", "<img src=y onerror=alert(3)>")
    s.open(page).clean()
    assert s.eval("document.querySelectorAll('img, iframe, object, embed').length") == 0
    assert s.eval("document.scripts.length") == 2
    assert s.text("#vin-title") == "<img src=y onerror=alert(3)>"
    paths = set(s.eval("[...document.querySelectorAll('#vin-chart > g')].map(g => g.getAttribute('data-path'))"))
    shown = [n if n != "bad\udcff" else "bad\\xff" for n in names]
    for n in shown[:6] + ["a.", "a..b", "", ".lead"]:
        assert n in paths, (n[:40], sorted(p[:40] for p in paths))
    cells = s.eval("[...document.querySelectorAll('#vin-modules tr[data-path] td:first-child')].map(c => c.textContent)")
    assert set(shown) <= set(cells), set(shown) - set(cells)
    x, y = s.box_center(names[1])
    s.page.mouse_move(x, y)
    assert names[1] in s.text("#vin-tip")
    s.page.key("/")
    s.page.type_text("<img")
    assert s.text("#vin-search-summary").startswith("1 module matches, "), s.text("#vin-search-summary")
    assert "q=%3Cimg" in s.hash(), s.hash()
    s.clean()


@test
def ten_thousand_modules_stay_within_the_budgets(s):
    paths = ["<root>"] + [f"blocks.{i}" for i in range(100)] + \
        [f"blocks.{i}.layers.{j}" for i in range(100) for j in range(99)]
    assert len(paths) == 10001
    records = profile_records(paths, flops=lambda p: 1000 + 7 * len(p) if p.count(".") == 3 else 10)
    page = write_report("big.html", write_records("big.jsonl", records))
    size = os.path.getsize(page)
    assert size < 2000000, f"{size} bytes (13.3: < 2,000,000)"
    start = time.monotonic()
    s.open(page).clean()
    timing = s.eval("performance.now()")
    boxes = s.boxes()
    check_boxes(boxes)
    assert any(b["kind"] == "more" for b in boxes), "no merged box"
    assert {b["kind"] for b in boxes} >= {"module", "container"}
    more = next(b for b in boxes if b["kind"] == "more")
    s.click_box(more["path"], "more")
    assert s.boxes()[0]["path"] == more["path"] or s.boxes()[0]["path"].startswith(more["path"] + "."), \
        (more, s.boxes()[0])
    s.eval("document.querySelector('button[data-view=treemap]').click()")
    check_boxes(s.boxes())
    s.screenshot("3-ten-thousand-treemap.png")
    s.clean()
    print(f"  (10,001 modules: {size} bytes, {len(boxes)} boxes, ready {timing:.0f} ms after "
          f"navigation start, {time.monotonic() - start:.2f} s to open here; bench/bench_report.py "
          "measures the draw)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("names", nargs="*")
    parser.parse_args(namespace=ARGS)
    missing = Browser.missing_status()
    if missing is not None:
        return missing
    failed = 0
    with Browser() as browser:
        for fn in TESTS:
            if ARGS.names and fn.__name__ not in ARGS.names:
                continue
            try:
                fn(Session(browser))
                print(f"PASS {fn.__name__}")
            except Exception:  # noqa: BLE001 - every failure is reported, then the next test runs
                failed += 1
                print(f"FAIL {fn.__name__}")
                traceback.print_exc()
    print(f"{len(TESTS) - failed} passed, {failed} failed; screenshots in {ARGS.artifacts}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
