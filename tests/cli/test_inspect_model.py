#!/usr/bin/python3
"""inspect-model end to end: its records in every format against the goldens, the details
flags, bad inputs (each with its one-line error), archives LibTorch cannot load or that
only running their code would describe (--load-with-libtorch), PyTorch 1.0 to 1.2
archives (model.json), what is read without LibTorch (GPU archives, quantized modules,
damaged pickles and members), and pipes read like files (inspect-model, inspect-config
and diff).

usage: test_inspect_model.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import cli_common
from cli_common import (ARGS, assert_clean_error, assert_equal, fixture, golden, model_source, run,
                        run_script, run_with_pipes, same_but_file_names, shared_examples, test,
                        torch_test)


# --- inspect-model output ---------------------------------------------------------------------

@test
def jsonl_is_the_default_and_matches_golden():
    p = run("inspect-model", fixture("everything.pt"))
    assert p.returncode == 0, p.stderr
    assert_equal(p.stdout, golden("everything.jsonl"))
    assert p.stderr == "", p.stderr


@test
def json_document_matches_golden():
    p = run("inspect-model", fixture("everything.pt"), "--format", "json")
    assert p.returncode == 0, p.stderr
    assert_equal(p.stdout, golden("everything.json"))


@test
def table_matches_golden():
    p = run("inspect-model", fixture("everything.pt"), "--format", "table")
    assert p.returncode == 0, p.stderr
    assert_equal(p.stdout, golden("everything.table"))


@test
def model_is_an_alias():
    a = run("model", fixture("convnet.pt"))
    b = run("inspect-model", fixture("convnet.pt"))
    assert a.returncode == 0 and a.stdout == b.stdout and a.stdout


@test
def table_stays_readable_for_5000_modules():
    p = run("model", fixture("wide.pt"), "--format", "table")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 5054 + 4 + 5, len(lines)  # title, rules, header + modules + 4 totals
    widths = {len(l) for l in lines[1:5054 + 4]}
    assert max(widths) <= 100, max(widths)
    assert re.search(r"^Modules: +5,054$", p.stdout, re.M), p.stdout[-300:]
    assert "      lin  torch.nn.modules.linear.Linear" in p.stdout


@test
def details_flags_add_records_in_every_format():
    archive = fixture("convnet.pt")
    plain = [json.loads(l) for l in run("model", archive).stdout.splitlines()]
    every = run("model", archive, "--all")
    assert every.returncode == 0, every.stderr
    lines = [json.loads(l) for l in every.stdout.splitlines()]
    kinds = [l["record"] for l in lines]
    assert kinds[0] == "ModelMetadata" and kinds[1] == "MethodSignature", kinds[:3]
    assert list(lines[0])[-2:] == ["parameter_bytes", "buffer_bytes"], lines[0]
    # each module line is the plain one plus its attributes, followed by its tensors
    modules = [l for l in lines if l["record"] == "ModuleMetadata"]
    assert [{k: v for k, v in m.items() if k != "attributes"} for m in modules] == plain[1:]
    conv = next(m for m in modules if m["path"] == "stem.0")
    assert conv["attributes"]["kernel_size"] == [3, 3] and conv["attributes"]["in_channels"] == 3
    after_conv = lines[lines.index(conv) + 1]
    assert after_conv["record"] == "TensorMetadata" and after_conv["module_path"] == "stem.0"
    assert after_conv["name"] == "weight" and after_conv["shape"] == [16, 3, 3, 3]
    assert re.fullmatch(r"[0-9a-f]{8}", after_conv["storage_crc32"]), after_conv
    tensors = [l for l in lines if l["record"] == "TensorMetadata"]
    assert sum(t["nbytes"] for t in tensors if t["kind"] == "parameter") == lines[0]["parameter_bytes"]
    # each flag alone adds only its part
    only = {flag: [json.loads(l) for l in run("model", archive, flag).stdout.splitlines()]
            for flag in ("--tensors", "--attributes", "--signature")}
    assert {l["record"] for l in only["--tensors"]} == {"ModelMetadata", "ModuleMetadata", "TensorMetadata"}
    assert all("attributes" not in l for l in only["--tensors"])
    assert all("attributes" in l for l in only["--attributes"] if l["record"] == "ModuleMetadata")
    assert [l["record"] for l in only["--signature"]].count("MethodSignature") == 1
    # json: the same facts in one document
    doc = json.loads(run("model", archive, "--all", "--format", "json").stdout)
    assert list(doc)[:6] == ["model_type", "total_parameters", "trainable_parameters",
                             "parameter_bytes", "buffer_bytes", "methods"], list(doc)
    assert doc["methods"][0]["name"] == "forward"
    assert [t["name"] for t in doc["modules"][3]["tensors"]] == [
        "weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    # table: tensors under their module, the size in the summary, the signature
    table = run("model", fixture("resnet18.pt"), "--all", "--format", "table").stdout
    assert re.search(r"^Model size: +44\.6 MiB$", table, re.M), table[-600:]
    assert re.search(r"^    - weight +float32\[64, 3, 7, 7\] cpu +9,408 +9,408 +36\.8 KiB", table, re.M)
    assert "kernel_size=[7, 7]" in table and "  forward(x: Tensor) -> Tensor\n" in table


@test
def shared_worked_example_is_reproduced():
    examples = shared_examples()
    if examples is None:
        return
    p = run("inspect-model", "tinynet.pt", cwd=examples)
    assert p.returncode == 0, p.stderr
    with open(os.path.join(examples, "inspect-model.jsonl")) as f:
        assert_equal(p.stdout, f.read())


# --- bad input: exit 1, one line naming the file ----------------------------------------------

BAD_INPUTS = [
    ("missing.pt", r"missing\.pt: no such file$"),
    # the fixture directory itself: a directory stands for the one weights file or index in it
    ("", r": a directory of \d+ weights files and no index \(.*\); name the one to read"),
    # refused in the format table's words: what it is, not what inspect-model reads
    ("empty.pt", r"empty\.pt: empty file, not a model file \(an archive or a weights file\)$"),
    ("text.pt", r"text\.pt: a text file, not a model file \(an archive or a weights file\); "
                r"torch\.jit\.save writes zip archives$"),
    ("truncated.pt", r"truncated\.pt: truncated or damaged zip archive"),
    ("plain.zip", r"plain\.zip: a zip archive without data\.pkl, not a model file"),
]


@test
def each_bad_input_gets_a_clear_one_line_error():
    for name, pattern in BAD_INPUTS:
        path = fixture(name) if name else ARGS.fixtures
        p = run("inspect-model", path)
        try:
            assert_clean_error(p, 1, pattern)
            assert p.stderr.startswith(f"vin-inspect: error: {path}"), p.stderr
        except AssertionError as e:
            raise AssertionError(f"{name or 'directory'}: {e}") from None


@test
def saved_records_are_named_as_records_wherever_a_model_is_expected():
    # what inspect-model, inspect-config and diff write (jsonl or json), given where a model or a
    # configuration is expected: named as records and by the command that wrote them, in every
    # build (capture, compare and profile tell the file apart before they ask for LibTorch)
    with tempfile.TemporaryDirectory() as tmp:
        saved = []
        for command, args in (("inspect-model", [fixture("convnet.pt")]),
                              ("inspect-config", [os.path.join(ARGS.source, "configs/net.yaml")]),
                              ("diff", [fixture("convnet.pt"), fixture("everything.pt")])):
            for form in ("jsonl", "json"):
                path = os.path.join(tmp, f"{command}.{form}")
                p = run(command, *args, "--format", form, "-o", path)
                assert p.returncode in (0, 1), p.stderr
                what = "jsonl" if form == "jsonl" else "a --format json document"
                saved.append((path, f"saved records ({what}, as {command} writes)"))
        for path, named in saved:
            for args, status in ((["inspect-model", path], 1), (["inspect-config", path], 1),
                                 (["capture", path, "--shape", "x=1"], 1),
                                 (["profile", path, "--shape", "x=1"], 1),
                                 (["compare", path, fixture("convnet.pt"), "--shape", "x=1"], 2)):
                p = run(*args)
                try:
                    assert_clean_error(p, status, re.escape(f"{path}: {named}"))
                except AssertionError as e:
                    raise AssertionError(f"{args}: {e}") from None
        # a JSON file that is no records is named JSON, and inspect-config reads it as YAML
        plain = os.path.join(tmp, "plain.json")
        with open(plain, "w") as f:
            f.write('{"depth": 5}\n')
        assert_clean_error(run("inspect-model", plain), 1,
                           re.escape(f"{plain}: a JSON file, not a model file (an archive or a "
                                     f"weights file)"))
        p = run("inspect-config", plain)
        assert p.returncode == 0 and '"path": ["depth"]' in p.stdout, p.stderr


@torch_test
def details_are_bounded_by_what_was_read():
    # one 2 MB string held once in the pickle and named by 100 modules: the records stop at the
    # detail budget (64 MiB here) instead of printing 200 MB, and the model record says so
    with tempfile.TemporaryDirectory() as tmp:
        archive = os.path.join(tmp, "shared_string.pt")
        run_script(tmp, "shared_string.py", model_source("shared_string.py"), archive)
        p = run("inspect-model", archive, "--attributes")
        assert p.returncode == 0, p.stderr
        assert len(p.stdout) < 70 << 20, len(p.stdout)
        records = [json.loads(line) for line in p.stdout.splitlines()]
        assert records[0]["record"] == "ModelMetadata", records[0]
        assert records[0]["stopped_by"] == "detail_budget", records[0]
        texts = [r["attributes"]["text"] for r in records if r.get("path", "").startswith("leaves.")]
        assert len(texts) == 100, len(texts)
        assert texts[0] == "x" * (2 << 20)
        assert texts[-1] == {"type_marker": "builtins.str"}, texts[-1]
        shown = sum(isinstance(t, str) for t in texts)
        assert 25 <= shown <= 32, shown  # 64 MiB of 2 MiB values
        p = run("inspect-model", archive, "--attributes", "--format", "table")
        assert p.returncode == 0 and "\nStopped by: detail_budget\n" in p.stdout, p.stderr
        # the module LibTorch loaded shares the string too, and is described within the same budget
        p = run("inspect-model", archive, "--attributes", "--load-with-libtorch")
        assert p.returncode == 0 and len(p.stdout) < 70 << 20, (p.stderr, len(p.stdout))
        loaded = [json.loads(line) for line in p.stdout.splitlines()]
        assert loaded[0]["stopped_by"] == "detail_budget", loaded[0]
        assert [r.get("attributes") for r in loaded] == [r.get("attributes") for r in records]
        p = run("inspect-model", archive)  # without details nothing is budgeted
        assert p.returncode == 0 and "stopped_by" not in p.stdout, p.stderr


@torch_test
def structure_of_an_archive_libtorch_cannot_load_is_still_described():
    # written by a "newer PyTorch" (format version 99): inspect-model reads the archive itself;
    # capture, which must run it, says why LibTorch cannot
    p = run("inspect-model", fixture("newer_version.pt"))
    assert p.returncode == 0 and not p.stderr, p.stderr
    first = json.loads(p.stdout.splitlines()[0])
    assert first["record"] == "ModelMetadata" and first["model_type"] == "fixture_models.Everything", first
    p = run("capture", fixture("newer_version.pt"), "--inputs", fixture("inputs/single.npy"))
    assert_clean_error(p, 1, r"newer_version\.pt: archive file format version 99 is newer than "
                             r"LibTorch [0-9.]+ can read \(at most 10\)")


@test
def a_pytorch_1_2_archive_is_described_from_its_model_json():
    # the format before data.pkl (issue 27, finding 3: was "a zip archive without data.pkl, not a
    # PyTorch archive"); the records make_fixtures.py computed from the eager model
    for flags, expected in (([], "model_json.jsonl"), (["--all"], "model_json.all.jsonl")):
        p = run("inspect-model", fixture("model_json.pt"), *flags)
        assert p.returncode == 0 and not p.stderr, p.stderr
        with open(fixture(expected)) as f:
            assert_equal(p.stdout, f.read(), f"inspect-model {flags}")
    p = run("diff", fixture("model_json.pt"), fixture("model_json.pt"))
    assert p.returncode == 0 and '"identical": true' in p.stdout, p.stdout + p.stderr
    # what does not read it says what it is and how to write it again
    p = run("inspect-config", fixture("model_json.pt"))
    assert_clean_error(p, 1, r"model_json\.pt: a TorchScript archive of PyTorch 1\.0 to 1\.2 "
                             r"\(model\.json\), which .*only inspect-model and diff read "
                             r"it here\. Load it with PyTorch 1\.x's torch\.jit\.load and save it "
                             r"again with torch\.jit\.save")


@torch_test
def a_pytorch_1_2_archive_is_not_run():
    p = run("capture", fixture("model_json.pt"), "--shape", "input=1x1x4x4")
    assert_clean_error(p, 1, r"model_json\.pt: a TorchScript archive of PyTorch 1\.0 to 1\.2 "
                             r"\(model\.json\), which LibTorch 2 and builds of 1\.x "
                             r"without legacy import cannot load")
    p = run("compare", fixture("model_json.pt"), fixture("model_json.pt"), "--shape",
            "input=1x1x4x4")
    assert_clean_error(p, 2, r"model_json\.pt: a TorchScript archive of PyTorch 1\.0 to 1\.2")


@test
def an_archive_saved_on_a_gpu_is_described_without_cuda_or_libtorch():
    # storages located on cuda:0: the same records as the CPU archive, and LibTorch never loaded
    p = run("--log-level", "debug", "inspect-model", fixture("cuda_tensors.pt"))
    assert p.returncode == 0, p.stderr
    assert p.stdout == run("inspect-model", fixture("everything.pt")).stdout
    assert "LibTorch" not in p.stderr, p.stderr


@torch_test
def an_archive_the_reader_cannot_describe_is_refused_unless_libtorch_is_asked_for():
    # __setstate__ computes `training`: only running the archive's code would tell its value
    path = fixture("computed_state.pt")
    for cmd in (("inspect-model", path), ("diff", path, path)):
        p = run("--log-level", "debug", *cmd)
        status = 2 if cmd[0] == "diff" else 1
        assert p.returncode == status and p.stdout == "", (p.returncode, p.stdout, p.stderr)
        last = p.stderr.rstrip().splitlines()[-1]
        assert last == (
            f"vin-inspect: error: {path}: cannot be described without running the archive's code "
            "(__torch__.fixture_models.ComputedState's __setstate__ sets training from something "
            "other than its state); vin-inspect never does that on its own: --load-with-libtorch "
            "reads it with LibTorch's loader, which runs the archive's TorchScript"), p.stderr
        assert "loading LibTorch" not in p.stderr, p.stderr
    # asked for: LibTorch runs __setstate__ (training = not False), with one debug line saying so
    p = run("--log-level", "debug", "inspect-model", path, "--load-with-libtorch")
    assert p.returncode == 0, p.stderr
    lines = [l for l in p.stderr.splitlines() if "reading it with LibTorch instead" in l]
    assert len(lines) == 1 and "--load-with-libtorch" in lines[0], p.stderr
    root = json.loads(p.stdout.splitlines()[1])
    assert root["path"] == "<root>" and root["training"] is True, root  # saved in eval mode
    p = run("diff", path, path, "--load-with-libtorch")
    assert p.returncode == 0, p.stderr


BROKEN_CLASS_SOURCE = model_source("broken_class.py")


@test
def a_class_source_the_reader_cannot_read_is_an_error_naming_the_class():
    # issue 26: the line after the broken string used to end the class, its methods were left
    # out, and --signature printed no MethodSignature with exit 0
    with tempfile.TemporaryDirectory() as tmp:
        good, broken = os.path.join(tmp, "net.pt"), os.path.join(tmp, "broken.pt")
        run_script(tmp, "make.py", BROKEN_CLASS_SOURCE, good, broken)
        p = run("inspect-model", good, "--signature")
        assert p.returncode == 0 and '"record": "MethodSignature", "name": "forward"' in p.stdout, p
        for flags in ([], ["--signature"], ["--all"]):
            p = run("inspect-model", broken, *flags)
            assert p.returncode == 1 and p.stdout == "", (flags, p.returncode, p.stdout)
            assert p.stderr.startswith(
                f"vin-inspect: error: {broken}: cannot be described without running the archive's "
                "code (line 8 of code/__torch__.py, in class __torch__.Net, is not TorchScript this "
                "reader knows)"), p.stderr
            assert len(p.stderr.splitlines()) == 1, p.stderr


@test
def a_damaged_pickle_is_reported_as_damaged_without_libtorch():
    hostile = os.path.join(ARGS.source, "tests", "hostile", "archive", "memo_index_huge.pt")
    p = run("--log-level", "debug", "inspect-model", hostile)
    assert p.returncode == 1 and "LibTorch" not in p.stderr, p.stderr
    assert p.stderr.rstrip().splitlines()[-1].endswith(
        "the record data.pkl cannot be read safely: memo index 2147483647 at byte 3 is larger than a pickle "
        "of 448 bytes can use"), p.stderr


@test
def quantized_modules_are_described_from_their_setstate_source_without_libtorch():
    # torch.ao.nn.quantized modules pickle a state tuple that their __setstate__ assigns
    p = run("--log-level", "debug", "inspect-model", fixture("static_quantized.pt"))
    assert p.returncode == 0, p.stderr
    assert "LibTorch" not in p.stderr, p.stderr
    types = [json.loads(l)["module_type"] for l in p.stdout.splitlines()[1:]]
    assert "torch.ao.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d" in types or \
        "torch.nn.intrinsic.quantized.modules.conv_relu.ConvReLU2d" in types, types


@test
def a_damaged_member_is_reported_without_a_backtrace():
    with open(fixture("everything.pt"), "rb") as f:
        data = bytearray(f.read())
    # corrupt the stored bytes of data.pkl (stored uncompressed, so the CRC check fails)
    start = data.find(b"everything/data.pklFB")
    assert start > 0
    for i in range(start + 200, start + 260):
        data[i] ^= 0x5A
    with tempfile.TemporaryDirectory() as tmp:
        bad = os.path.join(tmp, "bitflip.pt")
        with open(bad, "wb") as f:
            f.write(data)
        p = run("inspect-model", bad)
        assert_clean_error(p, 1, r"bitflip\.pt: cannot read the record data\.pkl \(damaged "
                                 r"archive: its data does not match its checksum\)")


@test
def an_unreadable_file_is_reported():
    if os.geteuid() == 0:
        print("  (skipped: root reads every file)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "secret.pt")
        shutil.copy(fixture("convnet.pt"), path)
        os.chmod(path, 0)
        assert_clean_error(run("inspect-model", path), 1, r"secret\.pt: cannot open")


# --- pipes ------------------------------------------------------------------------------------

@test
def pipes_are_read_like_files_and_only_once():
    # a pipe can be read once: a command that opened it twice would wait for ever (timeout)
    config = os.path.join(ARGS.source, "configs", "net.yaml")
    archive = fixture("everything.pt")
    for command in (["inspect-config", config], ["inspect-model", archive, "--all"],
                    ["diff", archive, archive], ["diff", config, config]):
        plain = run(*command)
        piped = run_with_pipes(command[0], f"<({command[1]})", *command[2:])
        assert piped.returncode == plain.returncode, (command, piped.stderr)
        assert same_but_file_names(piped.stdout, plain.stdout), (command, piped.stdout[:300])
    p = run_with_pipes("inspect-config", "<(/dev/null)")
    assert p.returncode == 1 and p.stderr.startswith("vin-inspect: error: /dev/fd/"), p.stderr
    with tempfile.TemporaryDirectory() as tmp:
        zeros = os.path.join(tmp, "zeros")
        with open(zeros, "wb") as f:
            f.write(bytes(1 << 20))
        p = run_with_pipes("inspect-model", f"<({zeros})")
        assert_clean_error(p, 1, r"/dev/fd/\d+: a stream that starts as none of the files this "
                                 r"tool reads")



@test
def a_stream_that_starts_as_no_file_kind_is_refused_after_its_first_bytes():
    # 64 bytes of noise without a NUL, then the writer keeps the pipe open: the tool must refuse
    # from those bytes, not wait for (or copy) the rest of the stream (issue 41)
    noise = bytes(range(1, 65))[::-1]
    for command in (["inspect-model"], ["inspect-config"], ["diff", fixture("convnet.pt")]):
        p = subprocess.Popen([ARGS.binary, *command, "/dev/stdin"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=False)
        p.stdin.write(noise)
        p.stdin.flush()
        try:
            status = p.wait(timeout=30)  # the pipe is still open: no end of file has come
        finally:
            p.stdin.close()
        err = p.stderr.read().decode()
        assert status in (1, 2), (command, status, err)
        assert "starts as none of the files this tool reads" in err, err
        assert "refused after its first 64 bytes" in err, err


@test
def a_byte_order_mark_before_jsonl_records_is_read_as_jsonl():
    with tempfile.TemporaryDirectory() as tmp:
        plain = os.path.join(tmp, "plain.jsonl")
        marked = os.path.join(tmp, "marked.jsonl")
        with open(plain, "w") as f:
            f.write(run("inspect-model", fixture("convnet.pt")).stdout)
        with open(marked, "wb") as f:
            f.write(b"\xef\xbb\xbf" + open(plain, "rb").read())
        p = run("diff", marked, plain)
        assert p.returncode == 0, p.stdout + p.stderr
        assert json.loads(p.stdout.splitlines()[-1])["identical"] is True


@torch_test
def a_torch_package_and_a_saved_whole_module_are_named_as_what_they_are():
    # what people have besides TorchScript archives, each refused naming what it is (issue 41)
    with tempfile.TemporaryDirectory() as tmp:
        package, module, state = (os.path.join(tmp, n) for n in ("net.package.pt", "whole.pt", "sd.pt"))
        subprocess.run([sys.executable, "-c", f"""
import torch
from torch.package import PackageExporter
net = torch.nn.Linear(2, 3)
with PackageExporter({package!r}) as e:
    e.extern("torch.**")
    e.save_pickle("model", "model.pkl", net)
torch.save(net, {module!r})
torch.save(net.state_dict(), {state!r})
"""], check=True)
        p = run("inspect-model", package)
        assert_clean_error(p, 1, r"net\.package\.pt: a torch\.package archive .*PackageImporter")
        p = run("inspect-model", module)
        assert_clean_error(p, 1, r"whole\.pt: a torch\.save file holding a pickled Python object "
                                 r"of class torch\.nn\.modules\.linear\.Linear .*torch\.jit\.save")
        # a state dict is a weights file: described (tests/reference/compare_weights.py)
        p = run("inspect-model", state, "--tensors")
        assert p.returncode == 0, p.stderr
        records = [json.loads(line) for line in p.stdout.splitlines()]
        assert records[0]["record"] == "WeightsFile" and records[0]["format"] == "torch_save_zip"
        assert [r["key"] for r in records if r["record"] == "TensorMetadata"] == ["weight", "bias"]

if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
