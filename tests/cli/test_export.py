#!/usr/bin/python3
"""torch.export archives (.pt2, contract 10): inspect-model of the fixtures torch 2.6 and 2.14
wrote (tests/fixtures/pt2, made by tests/fixtures/make_pt2_fixtures.py) equals the Python
reference beside each, field by field; where this Python's torch has torch.export (the Debian 13
and testing configurations) the fixtures are made again and compared with the reference of the
moment too. Archives other people published: a torch 2.11 PT2 Archive, an AOTInductor package.
capture runs a .pt2 on the tool's interpreter of the exported graph (contract 12): its records
equal torch.export.unflatten's with forward hooks (tests/fixtures/pt2_run, made by
tests/fixtures/make_pt2_run_fixtures.py), compare runs it against itself, its saved tensors
and its TorchScript twin, and profile counts what the twin's profile counts (contract 12.3). No LibTorch needed for the
rest: the build without it runs them.

usage: test_export.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import io
import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile
import zipfile

import cli_common
from cli_common import ARGS, assert_clean_error, run, test


def pt2_fixtures(version=None):
    return os.path.join(ARGS.source, "tests", "fixtures", "pt2", *([version] if version else []))


def check_against_reference(folder, layout, schema_major):
    names = sorted(n[:-4] for n in os.listdir(folder) if n.endswith(".pt2"))  # resnet18 too, made now
    assert len(names) >= 10, names
    for name in names:
        archive = os.path.join(folder, name + ".pt2")
        with open(os.path.join(folder, name + ".reference.jsonl")) as f:
            want = [json.loads(line) for line in f]
        p = run("inspect-model", archive)
        assert p.returncode == 0, (name, p.stderr)
        got = [json.loads(line) for line in p.stdout.splitlines()]
        header = got[0]
        assert header["record"] == "ExportArchive" and header["file"] == archive, header
        assert header["layout"] == layout, (name, header)
        assert header["torch_version"] == want[0]["torch_version"], (name, header)
        assert header["extra_files"] == want[0]["extra_files"], (name, header)
        assert header["models"] == ["model"], header
        assert header["schema_version"].split(".")[0] == schema_major, header
        # ModelMetadata and every module: paths and order, types, counts, training unknown
        assert got[1:] == want[1:], (name, [(a, b) for a, b in zip(got[1:], want[1:]) if a != b])
        # --tensors: each parameter, buffer and constant with its dtype, shape, bytes and the
        # CRC-32 of its storage's bytes (the eager model's), tied tensors once in the totals
        with open(os.path.join(folder, name + ".tensors.jsonl")) as f:
            want_tensors = [json.loads(line) for line in f]
        p = run("inspect-model", archive, "--tensors")
        got = [json.loads(line) for line in p.stdout.splitlines()][1:]
        assert got == want_tensors, (name, [(a, b) for a, b in zip(got, want_tensors) if a != b])
        # --operators: the program's calls per module, as the loaded program's nodes count them
        with open(os.path.join(folder, name + ".operators.jsonl")) as f:
            want_calls = [json.loads(line) for line in f]
        p = run("inspect-model", archive, "--operators")
        calls = [r for r in map(json.loads, p.stdout.splitlines()) if r["record"] == "OperatorCount"]
        assert calls == want_calls and calls, (name, calls, want_calls)
        # --signature: the graph signature's inputs and outputs, kinds, names and targets as
        # the loaded program's graph_signature holds them; forward's user inputs and outputs
        # (dtypes, shapes, symbolic sizes) and the symbols' ranges
        with open(os.path.join(folder, name + ".signature.jsonl")) as f:
            want_signature = [json.loads(line) for line in f]
        assert [r["record"] for r in want_signature] == ["GraphSignature", "MethodSignature"]
        p = run("inspect-model", archive, "--signature")
        signature = [r for r in map(json.loads, p.stdout.splitlines())
                     if r["record"] in ("GraphSignature", "MethodSignature")]
        assert signature == want_signature, (name, signature, want_signature)


@test
def pt2_of_torch_2_6_equals_the_python_reference():
    # the flat zip of torch 2.1-2.7: the program JSON, nested torch.save state dict and constants
    check_against_reference(pt2_fixtures("torch-2.6"), "export_zip", "8")


@test
def pt2_of_torch_2_14_equals_the_python_reference():
    # the PT2 Archive of 2.8 on: a root folder, models/model.json, raw weights and their config
    check_against_reference(pt2_fixtures("torch-2.14"), "pt2_archive", "8")


INPUT_KINDS = ("user_input", "parameter", "buffer", "tensor_constant", "custom_obj", "token",
               "constant_input")
OUTPUT_KINDS = ("user_output", "loss_output", "buffer_mutation", "gradient_to_parameter",
                "gradient_to_user_input", "user_input_mutation", "token")


def as_torch_2_2(source, target):
    """The torch 2.6 flat zip `source` rewritten in the spellings of torch 2.1-2.2, as a real
    2.2 archive shows them (KladovValentin/hades-pid's exported_program.pt2, which states no
    licence and so is not committed): schema_version the integer 2, no torch_version, a
    module call graph of the root alone, every variant of a union written with the unused ones
    null, a bare-integer storage_offset, requires_grad false in every placeholder's TensorMeta
    (its parameters' is in the state dict, as _rebuild_parameter's argument), the nested
    torch.save files named .json."""
    def respell(value):
        if isinstance(value, list):
            return [respell(v) for v in value]
        if not isinstance(value, dict):
            return value
        out = {k: respell(v) for k, v in value.items()}
        if len(out) == 1:
            (key,) = out
            kinds = INPUT_KINDS if key in INPUT_KINDS else OUTPUT_KINDS if key in OUTPUT_KINDS \
                else None
            if kinds:
                return {k: out.get(k) for k in kinds}
            if key.startswith("as_"):
                return {key: out[key], **({"as_none": None} if key != "as_none" else {"as_int": None})}
        if isinstance(out.get("storage_offset"), dict):
            out["storage_offset"] = out["storage_offset"].get("as_int")
        return out
    with zipfile.ZipFile(source) as z, zipfile.ZipFile(target, "w") as w:
        for info in z.infolist():
            data = z.read(info.filename)
            name = info.filename
            if name == "serialized_exported_program.json":
                program = json.loads(data)
                program["schema_version"] = 2
                program.pop("torch_version", None)
                gm = program["graph_module"]
                gm["module_call_graph"] = gm["module_call_graph"][:1]
                for meta in gm["graph"]["tensor_values"].values():
                    meta["requires_grad"] = False
                program = {**program, "graph_module": {**gm, "graph": respell(gm["graph"]),
                                                        "signature": respell(gm["signature"])}}
                data = json.dumps(program).encode()
            elif name in ("serialized_state_dict.pt", "serialized_constants.pt"):
                name = name[:-3] + ".json"
            elif name == "serialized_example_inputs.pt":
                continue
            elif name == "version":
                data = b"2"
            w.writestr(name, data)


@test
def pt2_in_the_spellings_of_torch_2_2_equals_the_reference():
    # the same records from the spellings of a 2.1-2.2 flat zip: the modules that no tensor
    # names (a ReLU, a pooling layer) placed among their siblings by the order the nodes ran
    folder = pt2_fixtures("torch-2.6")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(n[:-4] for n in os.listdir(folder) if n.endswith(".pt2")):
            old = os.path.join(tmp, name + ".pt2")
            as_torch_2_2(os.path.join(folder, name + ".pt2"), old)
            with open(os.path.join(folder, name + ".reference.jsonl")) as f:
                want = [json.loads(line) for line in f][1:]
            p = run("inspect-model", old)
            assert p.returncode == 0, (name, p.stderr)
            got = [json.loads(line) for line in p.stdout.splitlines()]
            assert {k: got[0][k] for k in ("layout", "schema_version", "torch_version")} == {
                "layout": "export_zip", "schema_version": "2", "torch_version": None}, got[0]
            assert got[1:] == want, (name, [(a, b) for a, b in zip(got[1:], want) if a != b])
            # the signature and operators alike
            p = run("diff", old, os.path.join(folder, name + ".pt2"))
            assert p.returncode == 0, (name, p.stdout, p.stderr)


def parameter_pickle(parameters):
    """data.pkl of a state dict of nn.Parameters as torch.save pickles them, written opcode by
    opcode (protocol 2): `parameters` is [(name, storage key, shape, requires_grad, state)], each
    float32 and contiguous, rebuilt by _rebuild_parameter(data, requires_grad, hooks), or, with
    a state (its Python attributes), by _rebuild_parameter_with_state as torch 2.x pickles one."""
    def text(value):
        data = value.encode()
        return b"X" + struct.pack("<I", len(data)) + data

    def name(module, function):
        return b"c" + module.encode() + b"\n" + function.encode() + b"\n"

    def ints(values):
        return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"
    ordered_dict = name("collections", "OrderedDict") + b")R"
    out = b"\x80\x02}("
    for key, storage, shape, requires_grad, state in parameters:
        strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
        tensor = (name("torch._utils", "_rebuild_tensor_v2") + b"((" + text("storage") +
                  name("torch", "FloatStorage") + text(storage) + text("cpu") +
                  b"J" + struct.pack("<i", math.prod(shape)) + b"tQ" + b"J\0\0\0\0" +
                  ints(shape) + ints(strides) + b"\x89" + ordered_dict + b"tR")
        rebuild = "_rebuild_parameter_with_state" if state else "_rebuild_parameter"
        out += (text(key) + name("torch._utils", rebuild) + b"(" + tensor +
                (b"\x88" if requires_grad else b"\x89") + ordered_dict)
        if state:
            out += b"}(" + b"".join(text(k) + text(v) for k, v in state.items()) + b"u"
        out += b"tR"
    return out + b"u."


@test
def pt2_of_torch_2_2_takes_requires_grad_from_its_saved_parameters():
    # torch 2.2 wrote requires_grad false in every placeholder's TensorMeta, a trained model's
    # parameters' too (hades-pid's 366,087 parameters were described as 0 trainable); what the
    # model held is in the state dict, each nn.Parameter pickled as _rebuild_parameter(data,
    # requires_grad, hooks): fc.weight trainable (with an attribute, so through
    # _rebuild_parameter_with_state), fc.bias frozen
    folder = pt2_fixtures("torch-2.6")
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "linear.pt2")
        as_torch_2_2(os.path.join(folder, "linear.pt2"), old)
        with zipfile.ZipFile(old) as z:
            members = {n: z.read(n) for n in z.namelist()}
        with zipfile.ZipFile(io.BytesIO(members["serialized_state_dict.json"])) as nested:
            records = {n.rsplit("/", 1)[1]: nested.read(n) for n in nested.namelist()
                       if n.rsplit("/", 2)[-2] == "data"}
        assert sorted((k, len(v)) for k, v in records.items()) == [("0", 48), ("1", 12)], records
        state = io.BytesIO()
        with zipfile.ZipFile(state, "w") as w:
            w.writestr("archive/data.pkl", parameter_pickle([
                ("fc.weight", "0", [3, 4], True, {"note": "trained"}),
                ("fc.bias", "1", [3], False, None)]))
            w.writestr("archive/byteorder", "little")
            for key, data in records.items():
                w.writestr("archive/data/" + key, data)
            w.writestr("archive/version", "3")
        members["serialized_state_dict.json"] = state.getvalue()
        with zipfile.ZipFile(old, "w") as w:
            for member, data in members.items():
                w.writestr(member, data)
        with open(os.path.join(folder, "linear.tensors.jsonl")) as f:
            want = [json.loads(line) for line in f]
        for r in want:  # the reference's model, its bias frozen
            if r["record"] in ("ModelMetadata", "ModuleMetadata") and r.get("path") != "<root>":
                r["trainable_parameters"] = 12
            if r["record"] == "TensorMetadata" and r["name"] == "bias":
                r["requires_grad"] = False
        p = run("inspect-model", old, "--tensors")
        assert p.returncode == 0, p.stderr
        got = [json.loads(line) for line in p.stdout.splitlines()][1:]
        assert got == want, [(a, b) for a, b in zip(got, want) if a != b]


def spelled(path, spelling):
    """A dotted module path as dynamo's source names it in each spelling torch 2.1-2.6 wrote
    (torch's own normalisation leaves such an expression where it cannot evaluate it)."""
    segments = path.split(".") if path else []

    def step(source, segment, index_form):
        if segment.isdigit():
            return index_form(source, segment)
        if segment.isidentifier():
            return f"{source}.{segment}"
        return f"{source}[{segment!r}]"
    source = {"modules": "L['self']", "self": "self"}.get(spelling, "L['self']")
    for segment in segments:
        if spelling == "modules":
            source = f"{source}._modules[{segment!r}]"
        elif spelling == "getattr":
            source = step(source, segment, lambda s, n: f"getattr({s}, {n!r})")
        else:
            source = step(source, segment, lambda s, n: f"{s}[{n}]")
    return source


def with_stacks_spelled(source, target, spelling):
    """`source` (a fixture of torch 2.14) with its call graph of the root alone, as torch
    2.1-2.5 wrote it, so that every module no tensor names comes from the nodes, and each
    nn_module_stack path spelled `spelling`: a source expression (`brackets`:
    L['self'].layers[0]; `getattr`: getattr(L['self'].layers, '0'); `modules`:
    L['self']._modules['layers']._modules['0']; `self`: self.layers[0]), or `torch_2_1`, torch
    2.1's entries key:(path,type) with bracketed paths; and `ambiguous`, an entry of a global
    (G['helper'].fc) and one of a slice of a Sequential added under each stack's root."""
    with zipfile.ZipFile(source) as z, zipfile.ZipFile(target, "w") as w:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename.endswith(("models/model.json", "serialized_exported_program.json")):
                program = json.loads(data)
                gm = program["graph_module"]
                gm["module_call_graph"] = gm["module_call_graph"][:1]
                for node in gm["graph"]["nodes"]:
                    stack = node.get("metadata", {}).get("nn_module_stack")
                    if not stack:
                        continue
                    entries = []
                    for entry in stack.split(";"):
                        key, rest = entry.split(",", 1)
                        path, _, type_name = rest.rpartition(",")
                        if spelling == "torch_2_1":
                            entries.append(f"{key}:({spelled(path, 'brackets')},{type_name})")
                        elif spelling == "ambiguous":
                            entries.append(entry)
                        else:
                            entries.append(f"{key},{spelled(path, spelling)},{type_name}")
                    if spelling == "ambiguous":
                        entries[1:1] = ["g,G['helper'].fc,torch.nn.modules.linear.Linear",
                                        "s,L['self'].seq[1:],torch.nn.modules.container.Sequential"]
                    node["metadata"]["nn_module_stack"] = ";".join(entries)
                data = json.dumps(program).encode()
            w.writestr(info, data)


@test
def nn_module_stack_in_every_spelling_gives_the_same_modules():
    # the modules and their types come from the nodes where the call graph lists the root
    # alone; a path written as a Python expression is the module it names, what names no
    # module unambiguously (a global, a slice) is left out, never a module of its own
    folder = pt2_fixtures("torch-2.14")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("containers", "seq_root", "cnn_eval", "twice_unused"):
            with open(os.path.join(folder, name + ".reference.jsonl")) as f:
                want = [json.loads(line) for line in f][1:]
            with open(os.path.join(folder, name + ".operators.jsonl")) as f:
                want_calls = [json.loads(line) for line in f]
            for spelling in ("brackets", "getattr", "modules", "self", "torch_2_1", "ambiguous"):
                archive = os.path.join(tmp, f"{name}.{spelling}.pt2")
                with_stacks_spelled(os.path.join(folder, name + ".pt2"), archive, spelling)
                p = run("inspect-model", archive, "--operators")
                assert p.returncode == 0, (name, spelling, p.stderr)
                got = [json.loads(line) for line in p.stdout.splitlines()][1:]
                calls = [r for r in got if r["record"] == "OperatorCount"]
                got = [r for r in got if r["record"] != "OperatorCount"]
                assert got == want, (name, spelling, [(a, b) for a, b in zip(got, want) if a != b])
                assert calls == want_calls, (name, spelling, calls, want_calls)


@test
def pt2_made_now_equals_the_python_reference_of_now():
    # the fixtures as this Python's torch writes them, against its own reference
    probe = subprocess.run([sys.executable, "-c", "import torch.export"], capture_output=True)
    if probe.returncode != 0:
        print("  (skipped: this Python's torch has no torch.export; the committed fixtures of "
              "torch 2.6 and 2.14 are checked above)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        # torchvision's resnet18 too where this Python has torchvision (45 MB: never committed)
        vision = subprocess.run([sys.executable, "-c", "import torchvision"],
                                capture_output=True).returncode == 0
        subprocess.run([sys.executable, "-W", "ignore",
                        os.path.join(ARGS.source, "tests", "fixtures", "make_pt2_fixtures.py"),
                        *(["--torchvision"] if vision else []), tmp],
                       check=True, capture_output=True)
        if vision:
            assert os.path.exists(os.path.join(tmp, "resnet18.pt2"))
        with zipfile.ZipFile(os.path.join(tmp, "linear.pt2")) as z:
            layout = "pt2_archive" if z.namelist()[0].count("/") else "export_zip"
        check_against_reference(tmp, layout, "8")


@test
def forward_lists_its_arguments_that_are_not_tensors():
    # forward(x, y, scale: float, n: int, flag: bool, mode: str, bias=None): export specialises
    # the last five, which torch 2.6 and 2.14 write as constant_input specs; each is an argument
    # all the same, typed as a TorchScript signature spells it (in 2.2's spellings too: above)
    want = [("x", "Tensor"), ("y", "Tensor"), ("scale", "float"), ("n", "int"), ("flag", "bool"),
            ("mode", "str"), ("bias", "None")]
    for version in ("torch-2.6", "torch-2.14"):
        archive = os.path.join(pt2_fixtures(version), "scalars.pt2")
        p = run("inspect-model", archive, "--signature")
        assert p.returncode == 0, p.stderr
        records = [json.loads(line) for line in p.stdout.splitlines()]
        (method,) = [r for r in records if r["record"] == "MethodSignature"]
        assert [(a["name"], a["type"]) for a in method["arguments"]] == want, method
        assert all(not a["has_default"] and a["default"] is None for a in method["arguments"])
        (graph,) = [r for r in records if r["record"] == "GraphSignature"]
        assert [i["kind"] for i in graph["inputs"]][-5:] == ["constant_input"] * 5, graph
        table = run("inspect-model", archive, "--signature", "--format", "table").stdout
        assert ("forward(x: float32[2, 4], y: float32[2, 3], scale: float, n: int, flag: bool, "
                "mode: str, bias: None) -> float32[2, 3]") in table, table
    # an int argument torch 2.14 keeps symbolic: a SymInt input, its symbol in dimensions
    p = run("inspect-model", os.path.join(pt2_fixtures("torch-2.14"), "symint.pt2"), "--signature")
    (method,) = [r for r in map(json.loads, p.stdout.splitlines())
                 if r["record"] == "MethodSignature"]
    assert [(a["name"], a["type"]) for a in method["arguments"]] == [
        ("x", "Tensor"), ("steps", "SymInt")], method
    assert len(method["dimensions"]) == 1 and method["dimensions"][0]["min"] == 0, method


@test
def pt2_tensors_tied_weights_count_once_and_crc_is_the_stored_storage():
    for version in ("torch-2.6", "torch-2.14"):
        archive = os.path.join(pt2_fixtures(version), "tied.pt2")
        p = run("inspect-model", archive, "--tensors")
        assert p.returncode == 0, p.stderr
        records = [json.loads(line) for line in p.stdout.splitlines()]
        model = records[1]
        assert model["total_parameters"] == 60 and model["parameter_bytes"] == 240, model
        tensors = [r for r in records if r["record"] == "TensorMetadata"]
        assert [(t["module_path"], t["name"], t["kind"]) for t in tensors] == [
            ("embed", "weight", "parameter"), ("out", "weight", "parameter")], tensors
        assert tensors[0]["storage_crc32"] == tensors[1]["storage_crc32"] is not None, tensors
        for t in tensors:
            assert (t["shape"], t["dtype"], t["numel"], t["nbytes"]) == \
                ([10, 6], "torch.float32", 60, 240), t
    # the PT2 Archive's raw storage: the CRC the zip directory records for the member
    with zipfile.ZipFile(os.path.join(pt2_fixtures("torch-2.14"), "tied.pt2")) as z:
        crc = z.getinfo("tied/data/weights/weight_0").CRC
    assert tensors[0]["storage_crc32"] == f"{crc:08x}", tensors
    # constants, float16, bfloat16 and int64 buffers, a non-persistent buffer
    p = run("inspect-model", os.path.join(pt2_fixtures("torch-2.14"), "constants.pt2"), "--tensors")
    records = [json.loads(line) for line in p.stdout.splitlines()]
    kinds = {(r["module_path"], r["name"]): (r["kind"], r["dtype"])
             for r in records if r["record"] == "TensorMetadata"}
    assert kinds == {("lin", "weight"): ("parameter", "torch.float16"),
                     ("lin", "bias"): ("parameter", "torch.float16"),
                     ("<root>", "scale"): ("buffer", "torch.bfloat16"),
                     ("<root>", "steps"): ("buffer", "torch.int64"),
                     ("<root>", "cache"): ("buffer", "torch.float32"),
                     ("<root>", "offset"): ("constant", "torch.float32")}, kinds


@test
def published_pt2_archives_are_described_or_named():
    published = pt2_fixtures("published")
    archive = os.path.join(published, "bact__pitloom__b9ecd1b5__example-model.pt2")
    p = run("inspect-model", archive, "--all")
    assert p.returncode == 0, p.stderr
    records = [json.loads(line) for line in p.stdout.splitlines()]
    assert records[0] == {"record": "ExportArchive", "file": archive, "layout": "pt2_archive",
                          "schema_version": "8.17", "torch_version": "2.11.0",
                          "models": ["model"],
                          "extra_files": ["author", "description", "license", "model_version",
                                          "tags"]}, records[0]
    modules = [(r["path"], r["module_type"], r["direct_parameters"]) for r in records
               if r["record"] == "ModuleMetadata"]
    assert modules == [("<root>", "__main__.MetadataModel", 0),
                       ("line", "torch.nn.modules.linear.Linear", 11)], modules
    # the table too
    table = run("inspect-model", archive, "--format", "table").stdout
    assert "line" in table and "Linear" in table, table
    aoti = os.path.join(published, "pierric__aotinductor-rs__398c933b__ep1.pt2")
    # its ExportArchive first (each compiled model with its device, from its metadata, and
    # its platform, from its library's ELF header), then the refusal (exit 1)
    p = run("inspect-model", aoti)
    assert p.returncode == 1, p.stderr
    assert [json.loads(line) for line in p.stdout.splitlines()] == [
        {"record": "ExportArchive", "file": aoti, "layout": "aoti_package",
         "schema_version": None, "torch_version": None, "models": ["model"], "extra_files": [],
         "aoti": [{"model": "model", "device": "cpu", "platform": "linux-x86_64"}]}], p.stdout
    assert_clean_error(subprocess.CompletedProcess(p.args, p.returncode, "", p.stderr), 1,
                       r"ep1\.pt2: an AOTInductor package \(compiled code, no exported program\)"
                       r" holding model \(cpu, linux-x86_64\)")
    p = run("inspect-model", aoti, "--format", "table")
    assert "compiled model model: device cpu, platform linux-x86_64" in p.stdout, p.stdout


@test
def a_build_without_libtorch_says_running_a_pt2_needs_it():
    # capture, compare and profile run a .pt2 (contract 12): the build without LibTorch says
    # they need it, as for a TorchScript archive (a usage error: exit 2)
    if not ARGS.no_torch:
        print("  (skipped: this build has LibTorch; the tests below run .pt2 files)")
        return
    archive = os.path.join(pt2_fixtures("torch-2.14"), "linear.pt2")
    for command in (("capture", archive), ("compare", archive, archive), ("profile", archive)):
        p = run(*command, "--shape", "x=2x4")
        assert p.returncode == 2 and "built without LibTorch" in p.stderr, (command, p.returncode,
                                                                            p.stderr)


def pt2_run_folder(version):
    return os.path.join(ARGS.source, "tests", "fixtures", "pt2_run", version)


def lacked_operators(folder, name):
    """The operators of NAME.pt2 Debian 12's LibTorch 1.13 lacks (operators.json), less the
    tensor properties the runner reads itself."""
    operators = json.load(open(os.path.join(folder, "operators.json")))
    return [op for op in operators.get("missing_in_torch_1.13", {}).get(name, [])
            if not op.startswith("aten.sym_")]


def unloadable_twins(folder):
    """{NAME: why} of the NAME.pt Debian 12's torch.jit.load (1.13) refuses (operators.json):
    a newer torch's script calls operators 1.13 has not (aten::get_autocast_dtype)."""
    operators = json.load(open(os.path.join(folder, "operators.json")))
    return operators.get("pt_unloadable_in_torch_1.13", {})


def models_made_both_ways(libtorch):
    """(version, folder, name) of every model of tests/fixtures/pt2_run with a TorchScript twin
    (NAME.pt beside NAME.pt2) that this LibTorch can run (what 1.13 lacks is the capture test's
    refusal, and twins_refused_by_an_older_libtorch's)."""
    for version in ("torch-2.6", "torch-2.14"):
        folder = pt2_run_folder(version)
        for name in sorted(n[:-3] for n in os.listdir(folder) if n.endswith(".pt")):
            if not (libtorch.startswith("1.13") and
                    (lacked_operators(folder, name) or name in unloadable_twins(folder))):
                yield version, folder, name


@test
def twins_refused_by_an_older_libtorch():
    # a TorchScript twin that Debian 12's torch.jit.load refuses (a newer torch's operators:
    # autocast's aten::get_autocast_dtype) is refused by the tool built against LibTorch 1.13 too,
    # naming the operator, as a file written by a newer PyTorch; newer LibTorches load it
    if ARGS.no_torch:
        print("  (skipped: needs LibTorch)")
        return
    libtorch = libtorch_version()
    checked = 0
    for version in ("torch-2.6", "torch-2.14"):
        folder = pt2_run_folder(version)
        for name, why in sorted(unloadable_twins(folder).items()):
            p = run("capture", os.path.join(folder, name + ".pt"),
                    "--inputs", os.path.join(folder, name + ".inputs.npz"))
            if libtorch.startswith("1.13"):
                operator = why.split("aten::")[1].split()[0].rstrip(".,") if "aten::" in why else ""
                assert p.returncode == 1 and "cannot load this archive" in p.stderr, (name, p)
                assert operator and operator in p.stderr, (name, why, p.stderr)
            else:
                assert p.returncode == 0, (version, name, p.stderr)
            checked += 1
    print(f"  {checked} twins refused by 1.13 checked under LibTorch {libtorch}")
    assert checked >= 1, checked


def compared(*arguments):
    p = run("compare", *arguments)
    records = [json.loads(line) for line in p.stdout.splitlines()]
    return p, records[:-1], (records[-1] if records else None)


@test
def compare_of_a_pt_and_its_pt2_pairs_every_call():
    # contract 12.3: every model of tests/fixtures/pt2_run made both ways from the same weights
    # (NAME.pt beside NAME.pt2) compares clean, both ways round: calls paired by path and call
    # index, their tensors by path, else by position (an LSTM's (h, c) is ["output", "1", i] in
    # TorchScript and ["output", i + 1] in the program), else in the order that pairs them
    # (unflatten gives a call's inputs in reverse order of first use); calls one side shows
    # otherwise are structure differences (structure_differs), not divergences
    if ARGS.no_torch:
        print("  (skipped: compare needs LibTorch)")
        return
    libtorch = libtorch_version()
    checked = 0
    for version, folder, name in models_made_both_ways(libtorch):
        pt, pt2 = (os.path.join(folder, name + ext) for ext in (".pt", ".pt2"))
        inputs = os.path.join(folder, name + ".inputs.npz")
        for a, b in ((pt, pt2), (pt2, pt)):
            p, pairs, summary = compared(a, b, "--inputs", inputs)
            assert p.returncode == 0, (version, name, p.stderr, summary)
            assert summary["pairs"] > 0 and summary["beyond"] == 0, (version, name, summary)
            differing = {(c["module_path"], c["call_index"], c["direction"])
                         for c in pairs if c["structure_differs"]}
            assert summary["structure_differences"] == len(differing), summary
            assert all(c["only_in"] for c in pairs if c["structure_differs"]), pairs
            if name == "structure_differs":
                # the Identity has no call in the program; the block's program output is
                # the one value it defines, not (result, its input)
                assert differing == {("skip", 0, "input"), ("skip", 0, "output"),
                                     ("block", 0, "output")}, differing
            elif name == "transformer":
                # TorchScript's TransformerEncoderLayer in eval takes the fused fast path
                # under LibTorch 2 (no call of self_attn, linear1, ...), which torch 2.14's
                # program calls: calls one side does not make
                side = "b" if a == pt else "a"
                assert all(c["only_in"] == side for c in pairs if c["structure_differs"]), (
                    version, differing)
            elif name == "autocast":
                # mid is called inside the wrap_with_autocast graph, which is no module call
                # (as unflatten shows): a call only the .pt makes
                assert differing == {("mid", 0, "input"), ("mid", 0, "output")}, differing
            else:
                assert not differing, (version, name, differing)
            if name == "lstm" and a == pt:
                by_b = {tuple(c["tensor_path"]): c["tensor_path_b"]
                        for c in pairs if c["module_path"] == "lstm"
                        and c["direction"] == "output"}
                assert by_b == {("output", "0"): None, ("output", "1", "0"): ["output", "1"],
                                ("output", "1", "1"): ["output", "2"]}, by_b
        checked += 1
    print(f"  {checked} models compare clean made both ways (LibTorch {libtorch})")
    assert checked >= 16, checked


@test
def compare_of_a_pt2_with_itself_and_with_its_saved_tensors():
    # a .pt2 on both sides, and against what capture --save wrote of it: every tensor paired,
    # exit 0; one saved tensor changed is the first divergence, at its key (exit 1)
    if ARGS.no_torch:
        print("  (skipped: compare needs LibTorch)")
        return
    import numpy as np
    folder = pt2_run_folder("torch-2.14")
    archive = os.path.join(folder, "conv_bn_relu.pt2")
    inputs = os.path.join(folder, "conv_bn_relu.inputs.npz")
    p, pairs, summary = compared(archive, archive, "--inputs", inputs, "--atol", "0", "--rtol", "0")
    assert p.returncode == 0 and summary["pairs"] == len(pairs) > 0, (p.stderr, summary)
    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "saved.npz")
        p = run("capture", archive, "--inputs", inputs, "--save", saved)
        assert p.returncode == 0, p.stderr
        arrays = dict(np.load(saved))
        assert len(arrays) == summary["pairs"], (sorted(arrays), summary)
        p, _, summary = compared(archive, saved, "--inputs", inputs, "--atol", "0", "--rtol", "0")
        assert p.returncode == 0 and summary["pairs"] == len(arrays), (p.stderr, summary)
        changed = "features.1/0/output/output"
        assert changed in arrays, sorted(arrays)
        arrays[changed] = arrays[changed] + 1
        edited = os.path.join(tmp, "edited.npz")
        with open(edited, "wb") as f:
            np.savez(f, **arrays)
        p, _, summary = compared(archive, edited, "--inputs", inputs)
        assert p.returncode == 1 and summary["beyond"] >= 1, (p.returncode, summary)
        assert summary["first_divergence"] == {"module_path": "features.1", "call_index": 0,
                                               "direction": "output",
                                               "tensor_path": ["output"]}, summary


@test
def a_pt2_takes_shape_specs_and_refuses_sizes_outside_its_ranges():
    # --shape binds by name, a positional argument too (the root's record shows it under
    # "kwargs", as a TorchScript capture does); the batch is Dim('batch', min=1, max=32)
    if ARGS.no_torch:
        print("  (skipped: capture needs LibTorch)")
        return
    archive = os.path.join(ARGS.source, "tests", "fixtures", "pt2_run", "torch-2.14",
                           "dynamic_batch.pt2")
    p = run("capture", archive, "--shape", "x=8x4")
    assert p.returncode == 0, p.stderr
    first = json.loads(p.stdout.splitlines()[0])
    assert (first["module_path"], first["tensor_path"], first["shape"]) == (
        "<root>", ["kwargs", "x"], [8, 4]), first
    # refused before the root's call is recorded: as for any forward that did not finish, the
    # summary of what was captured (nothing) on stdout, the reason on stderr, exit 1
    for shape, why in (("x=100x4", r"dynamic_batch\.pt2: the model's forward raised on --shape: "
                                   r"the argument x's dimension 0 is 100, outside \w+'s range "
                                   r"\[1, 32\]\n"),
                       ("x=8x5", r"the argument x's dimension 1 is 5 where the program was "
                                 r"exported for 4\n")):
        p = run("capture", archive, "--shape", shape)
        assert p.returncode == 1 and re.search(why, p.stderr), (shape, p.returncode, p.stderr)
        records = [json.loads(line) for line in p.stdout.splitlines()]
        assert [r["record"] for r in records] == ["CaptureSummary"], records
        assert records[0]["snapshots"] == 0, records


def libtorch_version():
    p = run("--version")
    return p.stdout.split("LibTorch ")[1].split(")")[0] if "LibTorch " in p.stdout else None


def same_records(got, want, exact):
    """Records equal field for field; their values too where the program runs under the torch
    that wrote the reference (contract 12.1: bit for bit). Under another LibTorch only the values'
    count: its kernels are not torch's of the reference (LibTorch 1.13's LSTM gives the torch 2.6
    fixture's LSTM other outputs, its TorchScript twin's too); the unit tests check the values
    there against the twin run by the same LibTorch."""
    if got.keys() != want.keys():
        return False
    for key in got:
        if key == "values" and not exact:
            if len(got[key]) != len(want[key]):
                return False
        elif got[key] != want[key]:
            return False
    return True


def profile_records(path):
    records = [json.loads(line) for line in open(path)]
    return ({r["module_path"]: r for r in records if r["record"] == "ModuleProfile"},
            [r for r in records if r["record"] == "OperatorProfile"], records[-1])


@test
def profile_of_a_pt2_counts_what_its_torchscript_twin_counts():
    # contract 12.3: each node of the program an operator call named by its target without
    # "torch.ops." (aten.conv2d.default), module times from the calls' spans, FLOPs and MACs by
    # the same rules: every model of tests/fixtures/pt2_run made both ways has the FLOPs of its
    # TorchScript twin, in total and per module (a module with no call in the program, an
    # Identity, counts none there), and ProfileSummary.runner says which interpreter ran
    if ARGS.no_torch:
        print("  (skipped: profile needs LibTorch)")
        return
    libtorch = libtorch_version()
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for version, folder, name in models_made_both_ways(libtorch):
            inputs = os.path.join(folder, name + ".inputs.npz")
            profiles = []
            for ext in (".pt", ".pt2"):
                out = os.path.join(tmp, name + ext + ".jsonl")
                p = run("profile", os.path.join(folder, name + ext), "--inputs", inputs,
                        "--runs", "2", "--warmup", "1", "-o", out)
                assert p.returncode == 0, (version, name, ext, p.stderr)
                profiles.append(profile_records(out))
            (modules, _, summary), (program_modules, operators, program_summary) = profiles
            assert (summary["runner"], program_summary["runner"]) == (
                "torchscript", "export_graph"), (summary["runner"], program_summary["runner"])
            if name == "transformer" and not summary["flops_complete"]:
                # TorchScript's TransformerEncoderLayer in eval takes the fused fast path
                # under LibTorch 2, whose aten::_addmm_activation no rule counts; the
                # program's graph has the layer's products one by one: all counted
                assert program_summary["flops"] > summary["flops"], (version, name)
                assert program_summary["flops_complete"], program_summary
                checked += 1
                continue
            assert program_summary["flops"] == summary["flops"] > 0, (version, name)
            # the same operators uncounted (LibTorch 2.6's LSTM kernel aten::mkldnn_rnn_layer,
            # which no rule counts, inside the node aten.lstm.input as in the twin)
            uncounted = [{o["name"] for o in s["uncounted_operators"]}
                         for s in (summary, program_summary)]
            assert uncounted[0] == uncounted[1], (version, name, uncounted)
            for path, module in modules.items():
                if name == "autocast" and path == "mid":
                    # called inside the wrap_with_autocast graph: no call in the program, its
                    # FLOPs the root's (the totals are equal above)
                    assert path not in program_modules, program_modules
                    continue
                got = program_modules.get(path, {"flops": 0})["flops"]
                assert got == module["flops"], (version, name, path, got, module["flops"])
                if path in program_modules:
                    # a class of __main__ is "__main__.Net" in the program, "Net" in
                    # TorchScript (whose __torch__ prefix the tool drops)
                    got_type = program_modules[path]["module_type"]
                    assert got_type.rsplit(".", 1)[-1] == module["module_type"].rsplit(
                        ".", 1)[-1], (path, got_type, module["module_type"])
                    assert program_modules[path]["parameters"] == module["parameters"], path
            assert set(program_modules) <= set(modules), (set(program_modules), set(modules))
            names = [o["operator"] for o in operators]
            assert names and all(n.startswith(("aten.", "higher_order.", "_operator."))
                                 for n in names), names
            assert sum(o["flops"] for o in operators) == summary["flops"], operators
            assert program_summary["parameter_bytes"] == summary["parameter_bytes"]
            checked += 1
        # --trace, --module and --nested-operators as for TorchScript: the nodes' operators
        # with the dispatcher's operators inside them
        folder = pt2_run_folder("torch-2.14")
        out, trace = os.path.join(tmp, "p.jsonl"), os.path.join(tmp, "trace.json")
        p = run("profile", os.path.join(folder, "conv_bn_relu.pt2"), "--inputs",
                os.path.join(folder, "conv_bn_relu.inputs.npz"), "--module", "features.*",
                "--nested-operators", "--trace", trace, "-o", out)
        assert p.returncode == 0, p.stderr
        modules, operators, summary = profile_records(out)
        assert sorted(modules) == [f"features.{i}" for i in range(6)], sorted(modules)
        names = {o["operator"] for o in operators}
        assert {"aten.conv2d.default", "aten::conv2d"} <= names, names
        events = json.load(open(trace))
        events = events["traceEvents"] if isinstance(events, dict) else events
        assert any(e.get("name") == "aten.conv2d.default" for e in events), events[:5]
    print(f"  {checked} models profile as their TorchScript twins count (LibTorch {libtorch})")
    assert checked >= 16, checked


@test
def capture_of_a_pt2_equals_unflatten_with_forward_hooks():
    # every model of tests/fixtures/pt2_run (torch 2.6 and 2.14) captured from its inputs file:
    # the records of torch.export.unflatten and real forward hooks (contract 12.2); a program
    # calling an operator this LibTorch lacks is refused naming it, before anything runs
    if ARGS.no_torch:
        print("  (skipped: capture needs LibTorch)")
        return
    libtorch = libtorch_version()
    checked = refused = 0
    for version in ("torch-2.6", "torch-2.14"):
        folder = pt2_run_folder(version)
        exact = libtorch is not None and version == "torch-" + ".".join(libtorch.split(".")[:2])
        for reference in sorted(n for n in os.listdir(folder) if ".capture" in n):
            name = reference.split(".")[0]
            other = "_other" if "capture_other" in reference else ""
            p = run("capture", os.path.join(folder, name + ".pt2"),
                    "--inputs", os.path.join(folder, f"{name}.inputs{other}.npz"))
            lacked = lacked_operators(folder, name)
            if libtorch.startswith("1.13") and lacked:
                assert p.returncode == 1 and "has no operator" in p.stderr, (name, p.stderr)
                assert any(op.replace("aten.", "aten::").rsplit(".", 1)[0] in p.stderr
                           for op in lacked), (name, p.stderr)
                refused += 1
                continue
            assert p.returncode == 0, (version, reference, p.stderr)
            got = [json.loads(line) for line in p.stdout.splitlines()]
            want = [json.loads(line) for line in open(os.path.join(folder, reference))]
            assert len(got) == len(want), (version, reference, len(got), len(want))
            for g, w in zip(got, want):
                assert same_records(g, w, exact), (version, reference, g, w)
            checked += 1
    print(f"  {checked} captures equal their reference, {refused} refused (LibTorch {libtorch})")
    assert checked >= 20, checked


@test
def torchvision_pt2_runs_as_unflatten_shows_and_as_its_twin():
    # issue 65's torchvision cases, made at test time where this Python has torch.export and
    # torchvision (the Debian 13 and testing configurations; 45 MB, never committed): resnet18
    # and mobilenet_v3_small exported and scripted from one instance, captured against
    # torch.export.unflatten with forward hooks, compared with their TorchScript twins, profiled
    # to their twins' FLOPs
    probe = subprocess.run([sys.executable, "-c", "import torch.export, torchvision"],
                           capture_output=True)
    if ARGS.no_torch or probe.returncode != 0:
        print("  (skipped: needs LibTorch, and torch.export and torchvision in this Python)")
        return
    torch_version = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                                   capture_output=True, text=True).stdout.strip()
    libtorch = libtorch_version()
    exact = libtorch.split(".")[:2] == torch_version.split(".")[:2]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-W", "ignore",
                        os.path.join(ARGS.source, "tests", "fixtures", "make_pt2_run_fixtures.py"),
                        tmp, "--torchvision"], check=True, capture_output=True)
        for name in ("resnet18", "mobilenet_v3_small"):
            pt2 = os.path.join(tmp, name + ".pt2")
            inputs = os.path.join(tmp, name + ".inputs.npz")
            p = run("capture", pt2, "--inputs", inputs)
            assert p.returncode == 0, (name, p.stderr)
            got = [json.loads(line) for line in p.stdout.splitlines()]
            want = [json.loads(line) for line in open(os.path.join(tmp, name + ".capture.jsonl"))]
            assert len(got) == len(want) > 50, (name, len(got), len(want))  # default quotas
            for g, w in zip(got, want):
                assert same_records(g, w, exact), (name, g, w)
            twin = os.path.join(tmp, name + ".pt")
            assert os.path.exists(twin), os.listdir(tmp)
            p, _, summary = compared(twin, pt2, "--inputs", inputs)
            assert p.returncode == 0 and summary["pairs"] > 100, (name, p.stderr, summary)
            flops = []
            for model in (twin, pt2):
                out = os.path.join(tmp, "profile.jsonl")
                p = run("profile", model, "--inputs", inputs, "--runs", "1", "--warmup", "1",
                        "-o", out)
                assert p.returncode == 0, (name, model, p.stderr)
                flops.append(profile_records(out)[2]["flops"])
            assert flops[0] == flops[1] > 0, (name, flops)
            print(f"  {name}: {len(got)} records as the reference ({'values' if exact else 'counts'}),"
                  f" {summary['pairs']} pairs within tolerance, {flops[1]} FLOPs as the twin's")


@test
def an_unknown_model_is_a_usage_error_and_a_damaged_program_names_its_entry():
    archive = os.path.join(pt2_fixtures("torch-2.14"), "linear.pt2")
    assert_clean_error(run("inspect-model", archive, "--model", "nope"), 2,
                       r"--model nope: .*linear\.pt2 holds no such model \(it holds model\)")

    with tempfile.TemporaryDirectory() as tmp:
        for name, transform, why in (
                ("newer.pt2", lambda j: {**j, "schema_version": {"major": 9, "minor": 0}},
                 r"has schema version 9\.0; the newest this reader understands is 8\.x"),
                ("two_fields.pt2", lambda j: {**j, "graph_module": {**j["graph_module"], "signature": {
                    "input_specs": [{"parameter": {"arg": {"name": "p"}, "parameter_name": "w"},
                                     "buffer": {"arg": {"name": "b"}, "buffer_name": "b"}}],
                    "output_specs": []}}},
                 r"a union with two fields"),
                ("deep.pt2", None, r"nests values more than 2048 levels deep")):
            damaged = os.path.join(tmp, name)
            with zipfile.ZipFile(archive) as src, zipfile.ZipFile(damaged, "w") as out:
                for info in src.infolist():
                    data = src.read(info.filename)
                    if info.filename.endswith("models/model.json"):
                        if transform:
                            data = json.dumps(transform(json.loads(data))).encode()
                        else:
                            data = data[:-1] + b', "deep": ' + b"[" * 3000 + b"]" * 3000 + b"}"
                    out.writestr(info.filename, data)
            assert_clean_error(run("inspect-model", damaged), 1,
                               name.replace(".", r"\.") + r": a torch\.export archive that cannot "
                               r"be read: linear/models/model\.json.*" + why)


@test
def a_pt2_archive_of_several_models_is_read_by_model():
    # one PT2 Archive holding two programs (as torch.export.pt2_archive's package_pt2 writes
    # them: models/<name>.json, data/weights/<name>_weights_config.json), made of the torch 2.14
    # tied and linear fixtures, each model's weights renamed apart
    folder = pt2_fixtures("torch-2.14")
    with tempfile.TemporaryDirectory() as tmp:
        multi = os.path.join(tmp, "multi.pt2")
        with zipfile.ZipFile(multi, "w") as out:
            for name in ("tied", "linear"):
                with zipfile.ZipFile(os.path.join(folder, name + ".pt2")) as z:
                    for info in z.infolist():
                        rest = info.filename.split("/", 1)[1]
                        data = z.read(info.filename)
                        if rest == "models/model.json":
                            rest = f"models/{name}.json"
                        elif rest.endswith("_config.json"):
                            config = json.loads(data)
                            for entry in config["config"].values():
                                entry["path_name"] = f"{name}_{entry['path_name']}"
                            data = json.dumps(config).encode()
                            rest = rest.replace("/model_", f"/{name}_")
                        elif rest.startswith(("data/weights/", "data/constants/")):
                            head, _, leaf = rest.rpartition("/")
                            rest = f"{head}/{name}_{leaf}"
                        elif name == "linear" and not rest.startswith("data/sample_inputs"):
                            continue  # archive_format and the like, once
                        else:
                            rest = rest.replace("sample_inputs/model", f"sample_inputs/{name}")
                        out.writestr("multi/" + rest, data)
        assert_clean_error(run("inspect-model", multi), 2,
                           r"multi\.pt2 holds several models \(tied, linear\): --model NAME")
        for name in ("tied", "linear"):
            p = run("inspect-model", multi, "--model", name)
            assert p.returncode == 0, p.stderr
            got = [json.loads(line) for line in p.stdout.splitlines()]
            assert got[0]["models"] == ["tied", "linear"], got[0]
            with open(os.path.join(folder, name + ".reference.jsonl")) as f:
                want = [json.loads(line) for line in f][1:]
            assert got[1:] == want, (name, got, want)

@test
def diff_of_two_torches_pt2_and_of_saved_records():
    # the same models, seeded alike, exported by torch 2.6 (flat zip) and 2.14 (PT2 Archive):
    # modules, counts and weights (data_crc32) agree; the container is not compared; every
    # record both .pt2 hold is (forward's signature, the graph signature, the operators)
    every = ["model", "modules", "tensors", "signatures", "graph_signature", "operators"]
    for name in ("linear", "cnn_eval", "tied", "constants", "twice_unused"):
        old, new = (os.path.join(pt2_fixtures(v), name + ".pt2") for v in ("torch-2.6", "torch-2.14"))
        p = run("diff", old, new)
        lines = [json.loads(line) for line in p.stdout.splitlines()]
        assert lines[-1]["compared"] == every, p.stdout
        if name in ("linear", "cnn_eval"):
            assert p.returncode == 0, (name, p.stdout, p.stderr)
        else:
            # the programs torch 2.6 and 2.14 wrote differ (2.6 names a tied weight's target
            # twice, orders constants and buffers otherwise, lists an unused module's
            # parameters not; 2.14 asserts its inputs' metadata): said, the model is the same
            assert p.returncode == 1, (name, p.stdout, p.stderr)
            assert {c["subject"] for c in lines[:-1]} <= {"graph_signature", "operator"}, lines
        for fmt in ("jsonl", "json"):
            with tempfile.TemporaryDirectory() as tmp:
                saved = os.path.join(tmp, name + "." + fmt)
                with open(saved, "w") as f:
                    f.write(run("inspect-model", new, "--all", "--operators", "--format",
                                fmt).stdout)
                p = run("diff", saved, new)
                assert p.returncode == 0, (name, fmt, p.stdout, p.stderr)
                assert json.loads(p.stdout.splitlines()[-1])["compared"] == every, p.stdout
    # a changed operator count is reported by module and operator
    with tempfile.TemporaryDirectory() as tmp:
        new = os.path.join(pt2_fixtures("torch-2.14"), "linear.pt2")
        records = run("inspect-model", new, "--operators").stdout.splitlines()
        saved = os.path.join(tmp, "linear.jsonl")
        with open(saved, "w") as f:
            for line in records:
                r = json.loads(line)
                if r["record"] == "OperatorCount":
                    r["calls"] += 1
                f.write(json.dumps(r) + "\n")
        p = run("diff", saved, new)
        assert p.returncode == 1, p.stdout + p.stderr
        change = json.loads(p.stdout.splitlines()[0])
        assert (change["subject"], change["path"], change["field"], change["old"], change["new"]) \
            == ("operator", ["fc", "aten.linear.default"], "calls", 2, 1), change
    # a changed weight is reported with its tensor
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(pt2_fixtures("torch-2.14"), "linear.pt2")
        changed = os.path.join(tmp, "changed.pt2")
        with zipfile.ZipFile(src) as z, zipfile.ZipFile(changed, "w") as out:
            for info in z.infolist():
                data = z.read(info.filename)
                if info.filename == "linear/data/weights/weight_0":
                    data = bytes([data[0] ^ 1]) + data[1:]
                out.writestr(info, data)
        p = run("diff", src, changed)
        assert p.returncode == 1, (p.stdout, p.stderr)
        change = json.loads(p.stdout.splitlines()[0])
        assert (change["subject"], change["path"], change["field"]) == \
            ("tensor", "fc.weight", "data_crc32"), change


@test
def a_pt_and_the_pt2_of_the_same_model_diff_clean():
    # the gate of a move from TorchScript to torch.export: torch.jit.script and torch.export of
    # one model instance (make_pt2_fixtures.py) hold the same modules, counts and weights; the
    # TorchScript side's attributes and methods are not compared with the .pt2's (it has none
    # of the one, and a forward of the other kind), nor its training mode and `__main__.` types
    for version in ("torch-2.6", "torch-2.14"):
        folder = pt2_fixtures(version)
        for name in ("linear", "cnn_eval", "tied", "twice_unused"):
            pt, pt2 = (os.path.join(folder, name + ext) for ext in (".pt", ".pt2"))
            for old, new in ((pt, pt2), (pt2, pt)):
                p = run("diff", old, new)
                assert p.returncode == 0, (version, name, p.stdout, p.stderr)
                assert json.loads(p.stdout.splitlines()[-1])["compared"] == [
                    "model", "modules", "tensors"], p.stdout
        # one weight changed (fc.bias[0] += 1 before torch.jit.script): reported, and only it
        p = run("diff", os.path.join(folder, "linear.changed.pt"), os.path.join(folder, "linear.pt2"))
        assert p.returncode == 1, p.stdout + p.stderr
        changes = [json.loads(line) for line in p.stdout.splitlines()][:-1]
        assert [(c["subject"], c["path"], c["field"]) for c in changes] == [
            ("tensor", "fc.bias", "data_crc32")], changes


@test
def a_field_one_side_cannot_know_is_not_a_change():
    # a .pt2 records no training mode and no type for a module no node of which ran; a .pt
    # records both: the saved records of the .pt2 with them filled in, as a .pt's would be,
    # diff clean against the .pt2, and a known type that differs is still a change
    archive = os.path.join(pt2_fixtures("torch-2.14"), "twice_unused.pt2")
    records = [json.loads(l) for l in run("inspect-model", archive).stdout.splitlines()]
    assert any(r.get("module_type", "") is None for r in records), records
    with tempfile.TemporaryDirectory() as tmp:
        def saved(name, edit):
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                for r in records[1:]:
                    r = dict(r)
                    if r["record"] == "ModuleMetadata":
                        r["training"] = True
                        if r["module_type"] is None:
                            r["module_type"] = "torch.nn.modules.linear.Linear"
                        edit(r)
                    f.write(json.dumps(r) + "\n")
            return path
        like_a_pt = saved("like_a_pt.jsonl", lambda r: None)
        p = run("diff", like_a_pt, archive)
        assert p.returncode == 0, p.stdout + p.stderr

        def other_type(r):
            if r["path"] == "block.0":
                r["module_type"] = "torch.nn.modules.linear.LazyLinear"
        p = run("diff", saved("other_type.jsonl", other_type), archive)
        assert p.returncode == 1, p.stdout + p.stderr
        change = json.loads(p.stdout.splitlines()[0])
        assert (change["path"], change["field"]) == ("block.0", "module_type"), change


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
