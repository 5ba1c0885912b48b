#!/usr/bin/python3
"""scan end to end (contract 14): real pickles written by Python's pickle module, real torch.save
files, numpy's object arrays; the published bypasses of other scanners each as its own case;
verdicts, exit statuses, records, --allow, directories, docs/ci.md's recipe as written.

usage: test_scan.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import os
import pickle
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from typing import Tuple

import cli_common
from cli_common import ARGS, assert_clean_error, fixture, run, test

TMP = tempfile.mkdtemp(prefix="vin-scan-")


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def path(name):
    return os.path.join(TMP, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def scan(*args):
    p = run("scan", *args)
    records = [json.loads(l) for l in p.stdout.splitlines()] if p.stdout and p.stdout[0] == "{" else []
    return p, records


def verdict_of(file, *extra):
    p, records = scan(file, *extra)
    summary = records[-1]
    assert summary["record"] == "ScanSummary", records
    return p.returncode, summary, [r for r in records if r["record"] == "ScanFinding"]


@test
def plain_pickles_that_call_os_system_run_code_in_every_protocol():
    for protocol in range(0, 6):
        status, summary, findings = verdict_of(write(f"evil{protocol}.pkl", pickle.dumps(Evil(), protocol=protocol)))
        assert status == 1 and summary["verdict"] == "runs-code", (protocol, summary)
        assert summary["globals"] == ["posix.system"], summary
        f = next(f for f in findings if f["kind"] == "global")
        assert f["name"] == "posix.system" and f["severity"] == "dangerous" and f["called"], f
        assert summary["torch_weights_only"] is False


@test
def state_dicts_and_checkpoints_load_as_data():
    import collections
    sd = collections.OrderedDict([("a", 1), ("b", [1.5, "x", b"y", None, True])])
    status, summary, findings = verdict_of(write("sd.pkl", pickle.dumps(sd, protocol=2)))
    assert status == 0 and summary["verdict"] == "weights-only" and not findings, (summary, findings)
    assert summary["globals"] == ["_codecs.encode", "collections.OrderedDict"], summary  # b"y"
    assert summary["torch_weights_only"] is True
    for name in ("state_dict.pt", "everything_state_dict.pt"):
        candidate = fixture(name) if os.path.exists(fixture(name)) else fixture("inputs/" + name)
        if not os.path.exists(candidate):
            continue
        status, summary, findings = verdict_of(candidate)
        assert status == 0 and summary["verdict"] == "weights-only", (name, summary, findings)


@test
def published_bypasses_each_run_code():
    # 1. a payload in a legacy torch.save file's second pickle (after the magic number)
    legacy = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2) + pickle.dumps(Evil(), protocol=2) + \
        pickle.dumps({}, protocol=2) + pickle.dumps({}, protocol=2) + pickle.dumps([], protocol=2)
    status, summary, _ = verdict_of(write("legacy_second.pt", legacy))
    assert status == 1 and summary["verdict"] == "runs-code", summary
    # 2. STACK_GLOBAL whose operands come from the memo
    memo = (b"\x80\x04\x8c\x02osq\x00\x8c\x06systemq\x01" + b"00" + b"h\x00h\x01\x93" +
            b"\x8c\x02ls\x85R.")
    status, summary, findings = verdict_of(write("memo_stack_global.pkl", memo))
    assert status == 1 and summary["globals"] == ["os.system"], summary
    # 3. a pickle in a zip member not named .pkl
    with zipfile.ZipFile(path("hidden_member.zip"), "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps({"a": 1}, protocol=2))
        z.writestr("archive/extra", pickle.dumps(Evil(), protocol=2))
    status, summary, findings = verdict_of(path("hidden_member.zip"))
    assert status == 1 and any(f["member"] == "archive/extra" for f in findings), findings
    # 4. torch._utils's allowed rebuild function handed builtins.eval
    gadget = (b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\nq\x00(cbuiltins\neval\nq\x01"
              b"N\x8c\x011\x85}tR.")
    status, summary, findings = verdict_of(write("rebuild_gadget.pkl", gadget))
    assert status == 1 and "builtins.eval" in summary["globals"], summary
    assert any(f["name"] == "builtins.eval" and f["severity"] == "dangerous" for f in findings)
    # 5. a stream that breaks right after its call
    cut = pickle.dumps(Evil(), protocol=2)[:-1]
    status, summary, findings = verdict_of(write("cut_after_call.pkl", cut))
    assert status == 1 and any(f["kind"] == "structure" for f in findings), findings
    # 6. a pickle inside a pickle
    class Nested:
        def __reduce__(self):
            return (pickle.loads, (pickle.dumps(Evil(), protocol=2),))
    status, summary, findings = verdict_of(write("nested.pkl", pickle.dumps(Nested(), protocol=2)))
    assert status == 1 and "posix.system" in summary["globals"], summary


def scripted_archive(name, module):
    import torch
    torch.jit.save(torch.jit.script(module), path(name))
    return path(name)


@test
def torchscript_load_time_code_runs_code_only_where_it_does_more_than_copy_state():
    import torch
    from torch import nn
    sys.path.insert(0, os.path.join(ARGS.source, "tests", "hostile"))
    import make_attacks as attacks  # the archives whose __setstate__ does harm (inspect's attacks)
    # torch.nn's quantized modules: __setstate__ assigns the state and prepacks the weight
    quantized = torch.quantization.quantize_dynamic(nn.Sequential(nn.Linear(4, 3)), {nn.Linear},
                                                    dtype=torch.qint8)
    status, summary, findings = verdict_of(scripted_archive("quantized.pt", quantized))
    assert status == 0 and summary["verdict"] == "weights-only" and not findings, (summary, findings)
    assert any(".classes.quantized." in g for g in summary["globals"]), summary
    for name, module, call, severity in [
            ("creates_file.pt", attacks.CreatesFile(), "torch.from_file", "dangerous"),
            ("overwrites_itself.pt", attacks.OverwritesItself(path("x")), "torch.from_file", "dangerous"),
            ("prints.pt", attacks.Prints(), "print", "not-allowed"),
            ("loops.pt", attacks.Loops(), "while", "not-allowed")]:
        status, summary, findings = verdict_of(scripted_archive(name, attacks.Wraps(module)))
        assert status == 1 and summary["verdict"] == "runs-code", (name, summary)
        f = next(f for f in findings if f["kind"] == "torchscript")
        assert (f["name"], f["severity"]) == (call, severity), (name, f)
        assert f["member"].endswith(".py") and f["offset"] is None, f
        assert "__setstate__" in f["reason"], f
    assert not os.path.exists(attacks.PWNED_SETSTATE)  # nothing ran
    # a custom operator called at load: a library's code the file chooses to run
    library = torch.library.Library("vinscan", "DEF")
    library.define("touch(Tensor x) -> Tensor")

    class CallsCustomOperator(nn.Module):
        def __init__(self):
            super().__init__()
            self.buf = torch.zeros(1)

        @torch.jit.export
        def __getstate__(self) -> Tuple[bool, torch.Tensor]:
            return (self.training, self.buf)

        @torch.jit.export
        def __setstate__(self, state: Tuple[bool, torch.Tensor]) -> None:
            self.training = state[0]
            self.buf = torch.ops.vinscan.touch(state[1])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    status, summary, findings = verdict_of(scripted_archive("custom_op.pt", CallsCustomOperator()))
    assert status == 1, summary
    assert [f["name"] for f in findings] == ["ops.vinscan.touch"], findings
    # a harmless copy of the code where LibTorch never looks (TOP/xcode/) changes nothing
    with zipfile.ZipFile(path("creates_file.pt")) as z:
        members = [(i.filename, z.read(i.filename)) for i in z.infolist()]
    top = members[0][0].split("/")[0]
    quiet = next(d for n, d in members if n.startswith(top + "/code/") and b"from_file" in d)
    quiet = quiet.replace(b'torch.from_file("/tmp/vin-hostile-setstate-pwned", True, 16)', b"self.buf")
    name = next(n for n, d in members if n.startswith(top + "/code/") and b"from_file" in d)
    decoy = members + [(name.replace("/code/", "/xcode/"), quiet)]
    status, summary, _ = verdict_of(write("decoy.pt", bytes(zip_with(decoy))))
    assert status == 1, summary
    # the same archive damaged (a local header naming a member otherwise than the directory):
    # its code/ read leniently still runs code at load
    damaged = zip_with(members + [(top + "/extra/notes.txt", b"notes")])
    at = damaged.rindex(b"PK\x03\x04")
    damaged[at + 30:at + 30 + len(top)] = b"X" * len(top)
    status, summary, findings = verdict_of(write("damaged_archive.pt", bytes(damaged)))
    assert status == 1 and findings[0]["name"] == "damaged zip", (summary, findings)
    assert any(f["kind"] == "torchscript" and f["name"] == "torch.from_file" for f in findings), findings


def zip_with(members):
    """A stored zip of (name, bytes) members, as Python's zipfile writes it."""
    import io
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return bytearray(buf.getvalue())


def central_header_at(data, n=0):
    """Where the n-th central directory header starts."""
    at = -1
    for _ in range(n + 1):
        at = data.index(b"PK\x01\x02", at + 1)
    return at


@test
def damaged_zips_are_read_leniently_and_run_code_where_a_loader_would_reach_a_call():
    evil = pickle.dumps(Evil(), protocol=2)
    benign = pickle.dumps({"a": 1}, protocol=2)
    # a CRC that does not match: the reader refuses it, a lenient loader reads the call
    crc = zip_with([("archive/data.pkl", evil)])
    crc[14] ^= 0xFF  # the local header's CRC
    at = central_header_at(crc)
    crc[at + 16] ^= 0xFF  # and the directory's
    # the encryption flag over plain bytes (picklescan's malicious1_0x1.zip: miniz ignores it)
    flagged = zip_with([("archive/data.pkl", evil)])
    flagged[6] |= 1
    flagged[central_header_at(flagged) + 8] |= 1
    # the central directory naming another member than the local header does
    renamed = zip_with([("archive/data.pkl", evil)])
    at = central_header_at(renamed)
    renamed[at + 46:at + 46 + len("archive/data.pkl")] = b"archive/data.pkX"
    for name, data in (("crc.zip", crc), ("flagged.zip", flagged), ("renamed.zip", renamed)):
        status, summary, findings = verdict_of(write(name, bytes(data)))
        assert status == 1 and summary["verdict"] == "runs-code", (name, summary, findings)
        assert findings[0]["kind"] == "container" and findings[0]["name"] == "damaged zip", findings
        assert any(f["name"] == "posix.system" and "read leniently" in f["member"] for f in findings), findings
    # a protocol 0 pickle (no PROTO to find it by) whose local header names it otherwise than
    # the directory does: miniz goes by the directory's data.pkl
    p0 = zip_with([("archive/data.pkl", pickle.dumps(Evil(), protocol=0))])
    p0[30:30 + len("archive/data.pkl")] = b"archive/data.pkx"
    status, summary, findings = verdict_of(write("p0_local_name.zip", bytes(p0)))
    assert status == 1 and any(f["name"] == "posix.system" for f in findings), findings
    # the same damage over a state dict: cannot be judged, nothing runs
    quiet = zip_with([("archive/data.pkl", benign)])
    quiet[14] ^= 0xFF
    status, summary, findings = verdict_of(write("crc_benign.zip", bytes(quiet)))
    assert status == 2 and summary["verdict"] == "cannot-judge", summary
    # a member named to leave the folder: a container finding, and the pickles still walked
    status, summary, findings = verdict_of(write("dotdot.zip", bytes(zip_with([("../x.pkl", benign)]))))
    assert status == 2 and [f["name"] for f in findings] == ["unsafe member name"], findings
    assert findings[0]["member"] == "../x.pkl", findings
    status, _, _ = verdict_of(write("dotdot_evil.zip", bytes(zip_with([("/abs/x.pkl", evil)]))))
    assert status == 1


@test
def storage_records_that_disagree_with_their_tensors_are_container_findings():
    import io
    import torch
    buf = io.BytesIO()
    torch.save({"w": torch.arange(6, dtype=torch.float32), "i": torch.zeros(3, dtype=torch.int64)}, buf)
    members = [(i.filename, zipfile.ZipFile(buf).read(i.filename)) for i in zipfile.ZipFile(buf).infolist()]
    status, summary, _ = verdict_of(write("good_sd.pt", bytes(zip_with(members))))
    assert status == 0, summary
    records = [n for n, _ in members if "/data/" in n]
    assert len(records) == 2, members
    short = [(n, d[:-4] if n == records[0] else d) for n, d in members]  # 4 bytes too few
    status, summary, findings = verdict_of(write("short_record.pt", bytes(zip_with(short))))
    assert status == 2 and summary["verdict"] == "cannot-judge", summary
    f = next(f for f in findings if f["name"] == "storage record disagrees")
    assert f["kind"] == "container" and f["member"] == records[0], f
    missing = [(n, d) for n, d in members if n != records[1]]
    status, summary, findings = verdict_of(write("missing_record.pt", bytes(zip_with(missing))))
    assert status == 2 and any("no record holds it" in f["reason"] for f in findings), findings


@test
def model_files_inside_zips_and_tars_are_judged_as_the_files_they_are():
    import io
    import tarfile
    evil_pt = zip_with([("archive/data.pkl", pickle.dumps(Evil(), protocol=2)),
                        ("archive/version", b"3\n")])
    good_pt = zip_with([("archive/data.pkl", pickle.dumps({"a": 1}, protocol=2)),
                        ("archive/version", b"3\n")])
    outer = zip_with([("models/good.pt", bytes(good_pt)), ("README.md", b"# models\n"),
                      ("models/evil.pt", bytes(evil_pt))])
    status, summary, findings = verdict_of(write("outer.zip", bytes(outer)))
    assert status == 1, summary
    f = next(f for f in findings if f["name"] == "posix.system")
    assert f["member"] == "models/evil.pt/archive/data.pkl", f
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in (("notes.txt", b"hello\n"), ("bundle.zip", bytes(outer)),
                           ("good.pt", bytes(good_pt))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    status, summary, findings = verdict_of(write("bundle.tar", buf.getvalue()))
    assert status == 1 and summary["format"] == "tar", summary
    f = next(f for f in findings if f["name"] == "posix.system")
    assert f["member"] == "bundle.zip/models/evil.pt/archive/data.pkl", f
    # a protocol 0 pickle in a tar reads as text, and is judged as the pickle its name says
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        data = pickle.dumps(Evil(), protocol=0)
        info = tarfile.TarInfo("model.pkl")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    status, summary, findings = verdict_of(write("p0.tar", buf.getvalue()))
    assert status == 1 and findings[0]["member"] == "model.pkl", findings
    # a tar of good files loads as data; the text beside them is no model
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for name, data in (("notes.txt", b"hello\n"), ("good.pt", bytes(good_pt))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    status, summary, findings = verdict_of(write("good.tar", buf.getvalue()))
    assert status == 0 and not findings, (summary, findings)


@test
def the_published_hostile_corpus_is_judged_as_its_publishers_and_the_contract_say():
    # tests/hostile/scan_published: the test data of picklescan, modelscan, ModelAudit, burn and
    # safetensors-cpp (SOURCES.md); expected.tsv gives each file's exit status and a name one of
    # its findings must carry (picklescan's expected dangerous global where it has one), and
    # says why where that is not what the publisher's class suggests
    folder = os.path.join(ARGS.source, "tests", "hostile", "scan_published")
    with open(os.path.join(folder, "expected.tsv")) as f:
        rows = [l.rstrip("\n").split("\t") for l in f if not l.startswith("#")]
    assert len(rows) == len([n for n in os.listdir(folder) if "__" in n]) > 140, len(rows)
    counts = {}
    for name, publisher, status, must_name, why in rows:
        status = int(status)
        p, records = scan(os.path.join(folder, name))
        assert p.returncode == status, (name, p.returncode, records[-1:], p.stderr[-300:])
        summary = records[-1]
        assert summary["record"] == "ScanSummary" and summary["verdict"] == \
            {0: "weights-only", 1: "runs-code", 2: "cannot-judge"}[status], (name, summary)
        if must_name:
            names = {r["name"] for r in records[:-1]} | set(summary["globals"])
            assert must_name in names, (name, must_name, names)
        # hostile files run code, benign ones load as data, but for the reasons written down
        expected = {"hostile": 1, "suspicious": 1, "benign": 0, "invalid": 2}[publisher]
        assert status == expected or why or (publisher == "hostile" and status == 2), (name, status)
        counts[status] = counts.get(status, 0) + 1
    print(f"  ({len(rows)} published files: {counts.get(1, 0)} run code, {counts.get(2, 0)} cannot be "
          f"judged, {counts.get(0, 0)} load as data)")


@test
def every_published_model_of_the_fixtures_loads_as_data():
    # tests/fixtures/real: TorchScript archives (quantized ones whose __setstate__ prepacks,
    # torchtext's and metatensor's with torch.classes objects), torch.save files, safetensors,
    # PyTorch 1.0's preview container, written by their projects
    folder = os.path.join(ARGS.source, "tests", "fixtures", "real")
    files = sorted(os.path.join(folder, n) for n in os.listdir(folder) if n != "SOURCES.md")
    p, records = scan(*files)
    summaries = [r for r in records if r["record"] == "ScanSummary"]
    assert len(summaries) == len(files) > 100, len(summaries)
    assert [s["file"] for s in summaries if s["verdict"] != "weights-only"] == [], \
        [r for r in records if r["record"] == "ScanFinding"][:5]
    assert p.returncode == 0


@test
def what_cannot_be_judged_exits_2_and_allow_extends_the_list():
    status, summary, _ = verdict_of(write("text.txt", b"just text\n"))
    assert status == 2 and summary["verdict"] == "cannot-judge", summary
    status, summary, _ = verdict_of(write("broken.pkl", b"\x80\x02}q\x00(X\xff"))
    assert status == 2 and summary["verdict"] == "cannot-judge", summary
    import collections
    dd = pickle.dumps(collections.defaultdict(int), protocol=2)
    assert verdict_of(write("dd.pkl", dd))[0] == 1
    status, summary, _ = verdict_of(path("dd.pkl"), "--allow", "collections.defaultdict",
                                    "--allow", "builtins.int")
    assert status == 0, summary
    for refused in ("os.path.join", "builtins.eval", "subprocess.run", "sys.modules"):
        assert_clean_error(run("scan", path("dd.pkl"), "--allow", refused), 2, re.escape(refused))
    assert_clean_error(run("scan", path("missing.pkl")), 2, r"missing\.pkl")


@test
def a_directory_is_scanned_recursively_and_the_worst_verdict_wins():
    folder = path("tree")
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    shutil.copy(path("sd.pkl"), os.path.join(folder, "a.pkl"))
    shutil.copy(path("evil2.pkl"), os.path.join(folder, "sub", "b.pkl"))
    p, records = scan(folder)
    summaries = [r for r in records if r["record"] == "ScanSummary"]
    assert [s["file"] for s in summaries] == [os.path.join(folder, "a.pkl"),
                                              os.path.join(folder, "sub", "b.pkl")], summaries
    assert p.returncode == 1
    table = run("scan", folder, "--format", "table").stdout
    assert re.search(r"^runs-code +pickle +.*b\.pkl +dangerous global posix\.system \(called\)$", table, re.M), table
    markdown = run("scan", folder, "--format", "markdown").stdout
    assert markdown.startswith("**vin-inspect scan**: 2 files, 1 would run code"), markdown
    doc = json.loads(run("scan", folder, "--format", "json").stdout)
    assert list(doc) == ["summaries", "findings"] and len(doc["summaries"]) == 2, doc


@test
def the_ci_recipe_runs_as_written():
    with open(os.path.join(ARGS.source, "docs", "ci.md")) as f:
        text = f.read()
    section = text.split("## A safety gate: `scan`", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = [l.strip() for l in block.splitlines() if l.strip().startswith("vin-inspect ")]
    assert len(commands) == 2, commands
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(ARGS.binary)) + ":" + os.environ["PATH"])
    for evil, status in ((False, 0), (True, 1)):
        with tempfile.TemporaryDirectory() as tmp:
            os.makedirs(os.path.join(tmp, "models"))
            shutil.copy(path("sd.pkl"), os.path.join(tmp, "models", "sd.pkl"))
            if evil:
                shutil.copy(path("evil2.pkl"), os.path.join(tmp, "models", "evil.pkl"))
            env["GITHUB_STEP_SUMMARY"] = os.path.join(tmp, "summary.md")
            results = [subprocess.run(["bash", "-c", c], cwd=tmp, env=env, capture_output=True,
                                      text=True) for c in commands]
            assert results[1].returncode == status, (evil, results[1].stderr)
            with open(env["GITHUB_STEP_SUMMARY"]) as f:
                assert f.read().startswith("**vin-inspect scan**")


@test
def torch_weights_only_is_what_this_torch_says_where_it_is_the_tables_torch():
    try:
        import torch
    except ImportError:
        print("  (skipped: no torch in this Python)")
        return
    if not torch.__version__.startswith("2.14"):
        print(f"  (skipped: torch {torch.__version__}; the table is torch 2.14's, checked there)")
        return
    import glob
    torch.save({"w": torch.zeros(3), "n": 5}, path("good_zip.pt"))
    torch.save({"w": torch.zeros(3)}, path("good_legacy.pt"), _use_new_zipfile_serialization=False)
    checked = 0
    for file in sorted(glob.glob(path("*.pkl")) + glob.glob(path("*.pt"))):
        _, summary, _ = verdict_of(file)
        if summary["torch_weights_only"] is None:  # a TorchScript archive: torch.jit.load's
            continue
        try:  # a torch.save file through torch.load; a bare pickle through its unpickler
            if file.endswith(".pt"):
                torch.load(file, weights_only=True)
            else:
                import torch._weights_only_unpickler as w
                with open(file, "rb") as f:
                    w.load(f)
            accepted = True
        except Exception:  # noqa: BLE001 - any refusal
            accepted = False
        assert summary["torch_weights_only"] == accepted, (file, summary, accepted)
        checked += 1
    assert checked >= 10, checked
    print(f"  ({checked} files: torch_weights_only as torch {torch.__version__}'s torch.load says)")


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
