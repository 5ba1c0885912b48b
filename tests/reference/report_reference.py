"""What a report page's data block must hold (contract 13.2), computed again in Python from the
saved records alone, the way a PyTorch user would read them: the module tree (a dotted prefix
without a record is a container), each node's value of a metric (a profile's record field; a
model's direct_parameters summed down the tree; a container the sum of its children), the part
its children leave uncovered, and between two sides each node's change. tests/cli/test_report.py
and tests/report/test_report_page.py compare the tool's page with it.
"""
import json
import re

ROOT = "<root>"
# metric -> the ModuleProfile field it comes from
PROFILE_FIELDS = {"flops": "flops", "time": "time_ms", "parameters": "parameters",
                  "memory": "allocated_bytes"}


def parent_path(path):
    if path == ROOT or "." not in path:
        return ROOT
    return path.rsplit(".", 1)[0]


def read_records(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def page_data(html):
    """The JSON block of a page, parsed."""
    found = re.search(r'<script type="application/json" id="vin-data">(.*?)</script>', html, re.S)
    assert found, "no data block"
    return json.loads(found.group(1))


class Side:
    def __init__(self, records):
        self.profile = any(r["record"] == "ModuleProfile" for r in records)
        key = "module_path" if self.profile else "path"
        kind = "ModuleProfile" if self.profile else "ModuleMetadata"
        self.modules = {}
        for r in records:
            if r["record"] == kind:
                self.modules.setdefault(r[key], r)

    def paths(self):
        return list(self.modules)


def tree(sides):
    """{path: parent} of every node, the NEW side's paths first (with their missing prefixes),
    then the OLD side's."""
    parents = {ROOT: None}
    for side in reversed(sides):
        for path in side.paths():
            chain = []
            while path not in parents:
                chain.append(path)
                path = parent_path(path)
            for p in chain:
                parents[p] = parent_path(p)
    return parents


def children_of(parents):
    kids = {p: [] for p in parents}
    for p, parent in parents.items():
        if parent is not None:
            kids[parent].append(p)
    return kids


def present(side, parents):
    """The nodes a side has: a record of its own, or one below."""
    out = set()
    for path in side.paths():
        while path is not None and path not in out:
            out.add(path)
            path = parents[path]
    return out


def totals(side, parents, metric):
    kids = children_of(parents)
    have = present(side, parents)
    out = {}

    def value(p):
        if p in out:
            return out[p]
        if p not in have:
            out[p] = None
            return None
        known = [v for v in (value(c) for c in kids[p]) if v is not None]
        children = sum(known) if known else None
        record = side.modules.get(p)
        if side.profile:
            v = record.get(PROFILE_FIELDS[metric]) if record is not None else children
        else:
            own = record["direct_parameters"] if record is not None else None
            v = None if own is None and children is None else (own or 0) + (children or 0)
        out[p] = float(v) if v is not None else None
        return out[p]

    for p in parents:
        value(p)
    return out


def self_parts(parents, total):
    kids = children_of(parents)
    return {p: None if total[p] is None or not kids[p] else
            max(0.0, total[p] - sum(total[c] or 0 for c in kids[p])) for p in parents}


def change(old_has, new_has, old, new):
    if not old_has:
        return "added" if new_has else "same"
    if not new_has:
        return "removed"
    if old is None or new is None or old == new:
        return "same"
    return "grew" if new > old else "shrank"


def expected(record_lists, metric):
    """{path: {"total": [per side], "self": [...], "change": ...}} and the counts, for the
    records of one or two sides (OLD first)."""
    sides = [Side(r) for r in record_lists]
    parents = tree(sides)
    per_side = []
    for side in sides:
        t = totals(side, parents, metric)
        per_side.append((t, self_parts(parents, t), present(side, parents)))
    nodes = {}
    counts = {"added": 0, "removed": 0, "grew": 0, "shrank": 0, "unchanged": 0}
    for p in parents:
        nodes[p] = {"total": [s[0][p] for s in per_side], "self": [s[1][p] for s in per_side],
                    "container": not any(p in side.modules for side in sides)}
        if len(sides) == 2:
            c = change(p in per_side[0][2], p in per_side[1][2], per_side[0][0][p], per_side[1][0][p])
            nodes[p]["change"] = c
            if p != ROOT and not nodes[p]["container"]:
                counts["unchanged" if c == "same" else c] += 1
    return nodes, counts


def close(a, b):
    """Equal as the page rounds: six significant digits."""
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-5 * max(abs(a), abs(b), 1e-12)
