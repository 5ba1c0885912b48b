#!/usr/bin/python3
"""report end to end, without a browser (tests/report/test_report_page.py opens the pages): the
sides it takes and refuses, -o and --max-bytes, the page's CSP and its one data block, and the
data against the Python reference computed from the same records (tests/reference/
report_reference.py).

usage: test_report.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import base64
import hashlib
import json
import os
import re
import sys
import tempfile

import cli_common
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "reference"))
import report_reference as ref  # noqa: E402
from cli_common import ARGS, assert_clean_error, fixture, run, test, torch_test

TMP = tempfile.mkdtemp(prefix="vin-report-")


def data_file(name):
    return os.path.join(ARGS.source, "tests", "report", "data", name)


def tmp(name):
    return os.path.join(TMP, name)


OUTPUTS = iter(range(1000000))


def output():
    """A page's path no run has seen (run() checks that each file it was handed stays as it was)."""
    return tmp(f"page{next(OUTPUTS)}.html")


def report(*args):
    return run("report", *args)


def written(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def doubled_layer3(src, dst):
    """resnet18's profile with layer3 and everything in it costing twice as much (FLOPs, time,
    memory), the root grown by as much: what a change that doubles a stage gives."""
    records = ref.read_records(src)
    grown = {}
    for r in records:
        if r["record"] == "ModuleProfile" and (r["module_path"] == "layer3" or r["module_path"].startswith("layer3.")):
            for f in ("flops", "macs", "self_flops", "time_ms", "self_time_ms", "allocated_bytes"):
                if r["module_path"] == "layer3" and f in ("flops", "time_ms", "allocated_bytes"):
                    grown[f] = r[f]
                r[f] = r[f] * 2
    for r in records:
        if r["record"] == "ModuleProfile" and r["module_path"] == "<root>":
            for f, v in grown.items():
                r[f] += v
    with open(dst, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
    return dst


@test
def a_profile_page_holds_its_script_style_and_data_under_a_csp():
    out = tmp("single.html")
    p = report(data_file("resnet18.profile.jsonl"), "-o", out)
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "", p.stderr
    page = written(out)
    assert page.startswith("<!DOCTYPE html>"), page[:100]
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert csp and page.index(csp.group(0)) < page.index("<script"), "no CSP before the scripts"
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    styles = re.findall(r"<style>(.*?)</style>", page, re.S)
    assert len(scripts) == 1 and len(styles) == 1, (len(scripts), len(styles))

    def source(text):
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"
    policy = csp.group(1)
    assert policy.startswith("default-src 'none'; "), policy
    assert f"script-src {source(scripts[0])}" in policy and f"style-src {source(styles[0])}" in policy, policy
    # nothing is fetched: no URL of any kind in the page's own markup, script or style
    own = (page.split('id="vin-data">')[0] + scripts[0]).replace("http://www.w3.org/2000/svg", "")
    fetch = re.search(r"(?:src|href)\s*=|url\(|@import|https?:|//[a-z]", own)
    assert not fetch, f"the page names something to fetch: {own[fetch.start() - 40:fetch.end() + 40]!r}"
    data = ref.page_data(page)
    assert data["kind"] == "profile" and data["compare"] is False and data["metric"] == "flops", data["metric"]
    assert len(page.encode()) < 80000, f"a resnet18 page of {len(page.encode())} bytes (13.3: < 80,000)"
    print(f"  (resnet18 page: {len(page.encode())} bytes)")


@test
def the_data_is_what_python_computes_from_the_same_records():
    old = data_file("resnet18.profile.jsonl")
    new = doubled_layer3(old, tmp("resnet18_doubled.jsonl"))
    for sides in ([old], [old, new]):
        out = output()
        p = report(*sides, "-o", out)
        assert p.returncode == 0, p.stderr
        data = ref.page_data(written(out))
        records = [ref.read_records(s) for s in sides]
        index = {row[0]: i for i, row in enumerate(data["nodes"])}
        for metric in ("flops", "time", "parameters", "memory"):
            nodes, counts = ref.expected(records, metric)
            assert set(nodes) == set(index), set(nodes) ^ set(index)
            for path, want in nodes.items():
                i = index[path]
                assert bool(data["nodes"][i][2]) == want["container"], path
                parent = data["nodes"][i][1]
                assert (data["nodes"][parent][0] if parent >= 0 else None) == \
                    (None if path == ref.ROOT else ref.parent_path(path)), path
                for s in range(len(sides)):
                    for part in ("total", "self"):
                        got = data["values"][metric][s][part][i]
                        assert ref.close(got, want[part][s]), (metric, path, part, s, got, want[part][s])
                if len(sides) == 2:
                    letter = data["changes"][metric]["node"][i]
                    got = {"g": "grew", "s": "shrank", "=": "same", "a": "added", "r": "removed"}[letter]
                    assert got == want["change"], (metric, path, got, want["change"])
            if len(sides) == 2:
                assert data["changes"][metric]["counts"] == counts, (metric, data["changes"][metric]["counts"], counts)
    # the container: resnet18 has none, so the model records' parameters view checks the sums
    out = tmp("model.html")
    assert report(data_file("resnet18.model.jsonl"), "-o", out).returncode == 0
    data = ref.page_data(written(out))
    nodes, _ = ref.expected([ref.read_records(data_file("resnet18.model.jsonl"))], "parameters")
    assert data["kind"] == "model" and data["metric"] == "parameters" and len(data["metrics"]) == 1
    assert data["values"]["parameters"][0]["total"][0] == nodes[ref.ROOT]["total"][0] == 11689512


@test
def the_comparison_says_layer3_doubled_and_what_else_changed():
    old = data_file("resnet18.profile.jsonl")
    new = doubled_layer3(old, tmp("resnet18_doubled.jsonl"))
    out = tmp("cmp.html")
    p = report(old, new, "-o", out, "--tolerance", "time_ms=1%")
    assert p.returncode == 0, p.stderr
    data = ref.page_data(written(out))
    assert data["compare"] is True and data["environment_differs"] == [], data["environment_differs"]
    index = {row[0]: i for i, row in enumerate(data["nodes"])}
    assert data["changes"]["flops"]["node"][index["layer3"]] == "g"
    assert data["changes"]["flops"]["node"][index["layer2"]] == "="
    grew = [p for p in index if data["changes"]["flops"]["node"][index[p]] == "g"]
    assert "layer3" in grew and all(p in ("<root>", "layer3") or p.startswith("layer3.") for p in grew), grew
    # time: 1% lets nothing pass that doubled, and keeps what did not change unchanged
    assert data["changes"]["time"]["node"][index["layer3.0.conv1"]] == "g"
    assert data["changes"]["time"]["node"][index["layer2.0.conv1"]] == "="


@test
def output_is_required_and_dash_is_standard_output():
    side = data_file("resnet18.profile.jsonl")
    assert_clean_error(report(side), 2, r"--output is required")
    p = report(side, "-o", "-")
    assert p.returncode == 0 and p.stdout.startswith("<!DOCTYPE html>"), p.stderr
    assert_clean_error(report(side, "-o", side), 2, r"input of this command")


@test
def a_page_past_max_bytes_is_refused_and_nothing_written():
    out = tmp("big.html")
    assert_clean_error(report(data_file("resnet18.profile.jsonl"), "-o", out, "--max-bytes", "1000"),
                       1, r"resnet18\.profile\.jsonl: the page would be \d+ bytes, more than --max-bytes 1000")
    assert not os.path.exists(out)
    assert_clean_error(report(data_file("resnet18.profile.jsonl"), "-o", out, "--max-bytes", "0"),
                       2, r"--max-bytes")


@test
def sides_that_are_not_profile_or_model_records_are_refused_naming_the_file():
    out = tmp("x.html")
    config = tmp("config.jsonl")
    with open(config, "w") as f:
        f.write('{"record": "ModelStructureSpec", "config_type": "a.C", "target_type": "a.T"}\n')
    assert_clean_error(report(config, "-o", out), 1, r"config\.jsonl: inspect-config records")
    yaml = tmp("net.yaml")
    with open(yaml, "w") as f:
        f.write("a: 1\n")
    assert_clean_error(report(yaml, "-o", out), 1, r"net\.yaml")
    assert_clean_error(report(tmp("missing.jsonl"), "-o", out), 1, r"missing\.jsonl")
    assert not os.path.exists(out)


@test
def a_profile_against_a_model_and_a_model_with_another_metric_are_usage_errors():
    out = tmp("x.html")
    profile, model = data_file("resnet18.profile.jsonl"), data_file("resnet18.model.jsonl")
    assert_clean_error(report(profile, model, "-o", out), 2,
                       r"resnet18\.profile\.jsonl is a profile and .*resnet18\.model\.jsonl a model")
    assert_clean_error(report(model, "-o", out, "--metric", "time"), 2, r"parameters view only")
    assert_clean_error(report(profile, "-o", out, "--metric", "peak"), 2, r"--metric")
    assert_clean_error(report(profile, profile, "-o", out, "--tolerance", "peak_bytes=5%"), 2,
                       r"peak_bytes")
    assert_clean_error(report(profile, profile, profile, "-o", out), 2, r"")


@test
def a_weights_file_gives_the_parameters_view_without_libtorch():
    out = tmp("weights.html")
    p = report(fixture("state_dict.pt"), "-o", out)
    assert p.returncode == 0, p.stderr
    data = ref.page_data(written(out))
    assert data["kind"] == "model" and data["values"]["parameters"][0]["total"][0] > 0, data["values"]


@test
def hostile_names_and_the_title_stay_data():
    side = tmp("hostile.jsonl")
    names = ["</script><script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<!--<script>",
             "a\u2028b", "\u202eevil", "bad\udcff", "x" * 100000]
    records = [{"record": "ModuleProfile", "module_path": "<root>", "module_type": "T", "calls": 1,
                "parameters": 0, "input_shapes": [], "output_shapes": [], "flops": 100, "macs": 50,
                "self_flops": 0, "time_ms": 1.0, "self_time_ms": 0.1, "allocated_bytes": 8,
                "peak_bytes": 8}]
    for n in names:
        records.append(dict(records[0], module_path=n, module_type=n, flops=10))
    summary = json.loads(open(data_file("resnet18.profile.jsonl")).read().splitlines()[-1])
    summary.update(modules=len(records), operators=0)
    with open(side, "w") as f:
        for r in records + [summary]:
            f.write(json.dumps(r) + "\n")
    out = tmp("hostile.html")
    p = report(side, "-o", out, "--title", "</title><script>alert(2)</script>")
    assert p.returncode == 0, p.stderr
    page = written(out)
    block = page.split('id="vin-data">', 1)[1].split("</script>", 1)[0]
    assert not re.search(r"[<>&]", block) and "\u2028" not in block, "markup characters in the data block"
    assert page.count("<script") == 2 and page.count("</script>") == 2, "a name closed or opened a script"
    data = ref.page_data(page)
    paths = {row[0] for row in data["nodes"]}
    assert set(names[:5]) <= paths and "bad\\xff" in paths and "x" * 100000 in paths, paths - set(names)
    assert data["title"] == "</title><script>alert(2)</script>"


@torch_test
def a_model_file_is_profiled_first_with_profiles_run_options():
    out = tmp("run.html")
    archive = fixture("everything.pt")
    assert_clean_error(report(archive, "-o", out), 2, r"--inputs|--shape")
    p = report(archive, "-o", out, "--inputs", fixture("inputs/everything_positional.npz"),
               "--warmup", "0", "--runs", "1")
    assert p.returncode == 0, p.stderr
    data = ref.page_data(written(out))
    header = data["sides"][0]["header"]
    assert data["kind"] == "profile" and header["runs"] == 1 and header["warmup"] == 0, header
    assert data["sides"][0]["source"] == archive and data["sides"][0]["operators"], data["sides"][0]


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
