#!/usr/bin/python3
"""`vin-inspect inspect-model` on weights files against PyTorch (contract 11), case by case.

usage: compare_weights.py --binary PATH --work DIR [CASE ...]

Each case is a real state dict (torch.nn modules' own state_dict(), and dicts of every dtype,
scalars, empty tensors and odd keys) written by torch.save (the zip and the legacy format), in
torch.save's tar format of PyTorch 0.1-0.3 by tests/fixtures/torch_save_tar_writer.py, and as
safetensors by tests/fixtures/safetensors_writer.py (both from the formats' specifications). The records the tool
prints for the safetensors file (`--tensors`) must equal what weights_reference.py computes from
torch.load(weights_only=True) of the torch.save file: the modules in path order, the counts,
each tensor's key, dtype, shape and data_crc32 (a CRC-32 of the reference's own bytes), the
WeightsFile's dtypes and metadata. Then diff: the same weights give exit 0, one changed element
is reported under its key's data_crc32 (exit 1), and `--ignore data_crc32` compares structure.
Prints PASS or FAIL per check, then `N passed, M failed`.
"""
import argparse
import json
import os
import struct
import subprocess
import sys

import numpy
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "fixtures"))

import safetensors_writer as st  # noqa: E402
import torch_save_tar_writer  # noqa: E402
from case_runner import Checks  # noqa: E402
from weights_reference import checkpoint_records, records  # noqa: E402


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
        self.head = nn.Linear(8, 10)


class RegistrationOrder(nn.Module):
    """Submodules registered in no name order, a ModuleList past 9 and a parameter of the root:
    named_modules() gives head, enc, enc.0, enc.1, blocks, blocks.0, ..., blocks.11, fc1, bn,
    which a torch.save file's keys keep and a safetensors file's sorted names do not."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(2))
        self.head = nn.Linear(2, 2)
        self.enc = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        self.blocks = nn.ModuleList([nn.Linear(2, 2) for _ in range(12)])
        self.fc1 = nn.Linear(2, 2)
        self.bn = nn.BatchNorm1d(2)


class Scriptable(nn.Module):
    """A model saved in every format: TorchScript, .pt2 (where this torch exports), state dict,
    safetensors, a checkpoint nesting its state dict under DataParallel's `module.`."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.bn(self.conv(x)).mean((2, 3)))


def every_format(work, model, tag):
    """{format: path} of `model` saved in every format this torch writes."""
    paths = {f: os.path.join(work, f"{tag}.{f}") for f in
             ("script.pt", "state_dict.pt", "safetensors", "checkpoint.pt")}
    torch.jit.save(torch.jit.script(model), paths["script.pt"])
    torch.save(model.state_dict(), paths["state_dict.pt"])
    st.save(model.state_dict(), paths["safetensors"])
    torch.save({"model": {"module." + k: v for k, v in model.state_dict().items()}, "epoch": 1},
               paths["checkpoint.pt"])
    if hasattr(torch, "export") and hasattr(torch.export, "save"):
        paths["pt2"] = os.path.join(work, f"{tag}.pt2")
        torch.export.save(torch.export.export(model, (torch.randn(1, 3, 8, 8),)), paths["pt2"])
    return paths


def every_dtype():
    d = {}
    for i, dtype in enumerate([torch.float64, torch.float32, torch.float16, torch.bfloat16,
                               torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                               torch.bool, torch.complex64]):
        t = (torch.arange(6, dtype=torch.float64) - 2).reshape(2, 3)
        d[f"t{i}.values"] = (t > 0) if dtype == torch.bool else t.to(dtype)
    d["scalar"] = torch.tensor(3.5)
    d["empty.rows"] = torch.zeros(0, 4)
    d["a..b"] = torch.ones(2)          # an empty segment: a tensor of the root
    d[".leading"] = torch.ones(1)
    d["naïve.poids"] = torch.ones(3)   # UTF-8 keys
    d["transposed.w"] = torch.arange(12.0).reshape(3, 4).t()  # not contiguous
    return d


def cases():
    torch.manual_seed(0)
    conv = ConvNet().state_dict()
    deep = nn.Sequential(*[nn.Linear(3, 3) for _ in range(12)]).state_dict()
    return {
        "convnet": conv,
        "convnet_half": {k: v.half() if v.is_floating_point() else v for k, v in conv.items()},
        "convnet_bfloat16": {k: v.bfloat16() if v.is_floating_point() else v
                             for k, v in conv.items()},
        "deep_sequential": deep,  # layers 0-11: numeric order
        "registration_order": RegistrationOrder().state_dict(),
        "transformer": nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 2, 32), 2).state_dict(),
        "lstm": nn.LSTM(8, 16, num_layers=2).state_dict(),
        "every_dtype": every_dtype(),
        "empty": {},
    }


def tagged(t):
    """`t` with an attribute of its own, as training libraries set on parameters."""
    t.tag = "tied"
    return t


def saved_cases():
    """torch.save files beside state dicts: checkpoints, a bare tensor, tied and viewed tensors."""
    torch.manual_seed(1)
    net = ConvNet()
    adam = torch.optim.Adam(net.parameters())
    net.head(torch.randn(2, 8)).sum().backward()
    adam.step()
    sgd = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    net.head(torch.randn(2, 8)).sum().backward()
    sgd.step()
    embed = nn.Embedding(10, 4)
    base = torch.arange(24.0)
    whole = torch.arange(12.0).reshape(3, 4)
    return {
        # the optimizer's per-parameter state holds twice the model's elements: not the state dict
        "checkpoint_adam": {"model": net.state_dict(), "optimizer": adam.state_dict(),
                            "epoch": 3, "loss": 0.25, "name": "run" * 100, "best": None,
                            "dtype": torch.float16, "history": [], "sizes": (1, 2),
                            "big": 2 ** 70, "flag": True, "numpy_best": numpy.float64(0.75),
                            "numpy_step": numpy.int64(7),
                            "args": argparse.Namespace(lr=0.1), "tags": {"a"}},
        "checkpoint_sgd": {"epoch": 1, "state_dict": {"module." + k: v for k, v in
                                                      net.state_dict().items()},
                           "optimizer": sgd.state_dict()},
        "bare_tensor": torch.arange(12.0).reshape(3, 4).t(),
        "tied": {"embed.weight": embed.weight.data, "out.weight": embed.weight.data,
                 "out.bias": torch.zeros(10)},
        "views": {"a.first": base[:6].view(2, 3), "a.rest": base[6:], "b.strided": base[::5],
                  "b.narrow": base.view(4, 6)[:, 1:3]},
        "parameters": {"w": nn.Parameter(torch.ones(3)), "frozen": nn.Parameter(
            torch.zeros(2), requires_grad=False)},
        "protocol_4": net.state_dict(),
        # views of one storage at other offsets and shapes list each other (counted apart)
        "row_col": {"whole": whole, "row": whole[1], "col": whole[:, 2]},
        "dataparallel": nn.DataParallel(RegistrationOrder()).state_dict(),
        "nested_state": {"state": RegistrationOrder().state_dict(), "step": 7,
                         "betas": (0.9, 0.999)},
        # tensors with Python state (attributes set on them): torch 2.x pickles them through
        # _rebuild_from_type_v2, and they are still the state dict's tensors
        "python_state": {"state": {"layer1.weight": tagged(torch.ones(2, 2)),
                                   "layer1.scale": tagged(nn.Parameter(torch.ones(3)))},
                         "epoch": 1},
        "no_state_dict": {"epoch": 3, "names": ["a", "b"]},
    }


def diff_to_zero(binary, a, b):
    p = tool(binary, "diff", a, b)
    assert p.returncode == 0, (a, b, p.returncode, p.stdout[-600:], p.stderr)
    return True


def tool(binary, *args):
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120)


def jsonl(text):
    return [json.loads(line) for line in text.splitlines()]


def check_records(binary, path, state_dict, metadata={"format": "pt"}):  # noqa: B006
    """The safetensors file at `path` against the reference's records of `state_dict`."""
    return check_described(binary, path, "safetensors", metadata,
                           records(state_dict, sorted_names=True), [])


def check_saved(binary, path, value, fmt="torch_save_zip"):
    """The torch.save file at `path` against the reference's records of the value it holds."""
    *parts, values = checkpoint_records(value)
    return check_described(binary, path, fmt, None, parts, values)


def save_legacy(value, path, **kwargs):
    """torch.save in the format before PyTorch 1.6 (what `_use_new_zipfile_serialization=False`
    still writes)."""
    torch.save(value, path, _use_new_zipfile_serialization=False, **kwargs)


def load_own(path):
    """torch.load of a file this script wrote (its objects are ours): every torch here reads
    the tar format, none with weights_only=True."""
    if "weights_only" in torch.load.__code__.co_varnames:
        return torch.load(path, weights_only=False)
    return torch.load(path)


def check_tar(binary, path, value, **kwargs):
    """`value` in torch.save's tar format (PyTorch 0.1-0.3, by torch_save_tar_writer.py) against
    the reference's records of what torch.load reads back from it."""
    torch_save_tar_writer.write(value, path, **kwargs)
    return check_saved(binary, path, load_own(path), "torch_save_tar")


def check_described(binary, path, fmt, metadata, reference, values, file=None):
    """inspect-model --tensors of `path` against the reference's five parts and values: every
    record, and their order (contract 11.2): WeightsFile, ModelMetadata, each module followed by
    its tensors in named_modules() order, then the checkpoint's values and its tensors outside
    the state dict."""
    p = tool(binary, "inspect-model", path, "--tensors")
    assert p.returncode == 0, p.stderr
    lines = jsonl(p.stdout)
    weights, model, modules, tensors, outside = reference
    head = lines[0]
    assert head["record"] == "WeightsFile", head
    assert head["file"] == (file or path) and head["format"] == fmt, head
    assert head["metadata"] == metadata, head["metadata"]
    for field in ("state_dict_path", "files", "dtypes"):
        assert head[field] == weights[field], (field, head[field], weights[field])
    got_model = {k: v for k, v in lines[1].items() if k != "record"}
    assert lines[1]["record"] == "ModelMetadata" and got_model == model, (got_model, model)
    kinds = [r["record"] for r in lines]
    tail = len(values) + len(outside)
    assert kinds[len(kinds) - tail:] == ["CheckpointValue"] * len(values) + \
        ["TensorMetadata"] * len(outside), "the checkpoint's values and tensors come last"
    body, after = lines[2:len(lines) - tail], lines[len(lines) - tail:]
    got_values = [{k: v for k, v in r.items() if k != "record"} for r in after[:len(values)]]
    assert got_values == values, (got_values, values)
    got_outside = [{k: v for k, v in r.items() if k != "record"} for r in after[len(values):]]
    assert got_outside == outside, (got_outside, outside)
    got_modules = [{k: v for k, v in r.items() if k != "record"}
                   for r in body if r["record"] == "ModuleMetadata"]
    assert got_modules == modules, (got_modules, modules)
    got_tensors, current = {}, None
    for r in body:
        assert r["record"] in ("ModuleMetadata", "TensorMetadata"), r["record"]
        if r["record"] == "ModuleMetadata":
            current = r["path"]
        else:
            assert r["module_path"] == current, ("a tensor not after its module", r)
            got_tensors.setdefault(current, []).append(
                {k: v for k, v in r.items() if k != "record"})
    # a module's tensors come in the file's order (the writer's: by element size, then key)
    by_key = lambda rs: sorted(rs, key=lambda r: r["key"])  # noqa: E731
    assert {m: by_key(r) for m, r in got_tensors.items()} == \
        {m: by_key(r) for m, r in tensors.items() if r}, "tensors differ"
    return len(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    binary = os.path.abspath(args.binary)
    checks = Checks()

    chosen = cases()
    for name, state_dict in chosen.items():
        if args.cases and name not in args.cases:
            continue
        pt = os.path.join(args.work, name + ".pt")
        safetensors = os.path.join(args.work, name + ".safetensors")
        torch.save(state_dict, pt)
        st.save(state_dict, safetensors, metadata={"format": "pt"})
        kwargs = {"weights_only": True} if "weights_only" in torch.load.__code__.co_varnames \
            else {}
        loaded = torch.load(pt, **kwargs)
        checks.run(name, "records of the safetensors file equal the reference's of torch.load",
                   lambda: check_records(binary, safetensors, loaded))
        checks.run(name, "records of the torch.save file equal the reference's of torch.load",
                   lambda: check_saved(binary, pt, loaded))
        legacy = os.path.join(args.work, name + ".legacy.pt")
        save_legacy(state_dict, legacy)
        checks.run(name, "records of the legacy torch.save file equal the reference's",
                   lambda: check_saved(binary, legacy, loaded, "torch_save_legacy"))
        tar = os.path.join(args.work, name + ".tar.pt")
        checks.run(name, "records of the tar torch.save file (PyTorch 0.1-0.3) equal the "
                   "reference's; it diffs to 0 with the zip file",
                   lambda: check_tar(binary, tar, state_dict) and diff_to_zero(binary, pt, tar))
    for name, value in saved_cases().items():
        if args.cases and name not in args.cases:
            continue
        pt = os.path.join(args.work, name + ".pt")
        torch.save(value, pt, **({"pickle_protocol": 4} if name == "protocol_4" else {}))
        loaded = torch.load(pt) if "weights_only" not in torch.load.__code__.co_varnames \
            else torch.load(pt, weights_only=False)  # our own file: its objects are ours
        checks.run(name, "records of the torch.save file equal the reference's of torch.load",
                   lambda: check_saved(binary, pt, loaded))
        legacy = os.path.join(args.work, name + ".legacy.pt")
        save_legacy(value, legacy,
                    **({"pickle_protocol": 4} if name == "protocol_4" else {}))
        checks.run(name, "records of the legacy torch.save file equal the reference's",
                   lambda: check_saved(binary, legacy, loaded, "torch_save_legacy"))
        tar = os.path.join(args.work, name + ".tar.pt")
        # tensors at offsets on storage views, as sliced storages were saved
        checks.run(name, "records of the tar torch.save file (storage views) equal the "
                   "reference's", lambda: check_tar(binary, tar, value, views=True))

    work = args.work
    conv = chosen["convnet"]

    def diff_same_weights():
        a, b = os.path.join(work, "same_a.safetensors"), os.path.join(work, "same_b.safetensors")
        st.save(conv, a, metadata={"format": "pt"})
        st.save(conv, b, metadata={"written": "again"})  # the container differs, not the model
        p = tool(binary, "diff", a, b)
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)

    def tar_big_endian():
        # storages, counts and metadata written big-endian (sys_info says so), as a big-endian
        # machine saved them (torch reads that on a big-endian machine only): the records of the
        # little-endian file, but storage_crc32, the CRC of the storage's bytes as the file
        # holds them
        little = os.path.join(work, "convnet.tar.pt")
        big = os.path.join(work, "convnet_big_endian.tar.pt")
        torch_save_tar_writer.write(conv, big, big_endian=True)

        def described(path):
            p = tool(binary, "inspect-model", path, "--tensors")
            assert p.returncode == 0, p.stderr
            return [{k: v for k, v in r.items() if k not in ("storage_crc32", "file")}
                    for r in jsonl(p.stdout)]
        assert described(big) == described(little)
        diff_to_zero(binary, little, big)

    def dataparallel_strips_to_the_plain_one():
        # DataParallel's `module.` prefix taken off: its module `module` is the model, and a
        # parameter of the model's root lands on the root (issue 64)
        torch.manual_seed(3)
        plain = RegistrationOrder()
        paths = {}
        for tag, value in (("plain", plain.state_dict()),
                           ("wrapped", nn.DataParallel(plain).state_dict())):
            paths[tag] = os.path.join(work, f"strip_{tag}.pt")
            torch.save(value, paths[tag])
            paths[tag + "_legacy"] = os.path.join(work, f"strip_{tag}.legacy.pt")
            save_legacy(value, paths[tag + "_legacy"])
        paths["plain_safetensors"] = os.path.join(work, "strip_plain.safetensors")
        st.save(plain.state_dict(), paths["plain_safetensors"])
        for wrapped in ("wrapped", "wrapped_legacy"):
            for other in ("plain", "plain_legacy", "plain_safetensors"):
                for a, b in ((paths[wrapped], paths[other]), (paths[other], paths[wrapped])):
                    p = tool(binary, "diff", a, b, "--strip-prefix", "module.")
                    assert (p.returncode, p.stderr) == (0, ""), (a, b, p.stdout[-600:], p.stderr)
        p = tool(binary, "diff", paths["wrapped"], paths["plain"])
        assert p.returncode == 1, "without --strip-prefix they differ"

    def checkpoint_document_model_first():
        # --format json: the checkpoint's values and other tensors after the modules, as in
        # jsonl; saved json and jsonl records of it diff to 0 with the file
        path = os.path.join(work, "checkpoint_adam.pt")
        p = tool(binary, "inspect-model", path, "--all", "--format", "json")
        assert p.returncode == 0, p.stderr
        document = json.loads(p.stdout)
        keys = list(document)
        assert keys[-3:] == ["modules", "checkpoint_values", "checkpoint_tensors"], keys
        assert all(t["kind"] == "checkpoint" and t["module_path"] == "<root>"
                   for t in document["checkpoint_tensors"])
        assert all(t["kind"] == "parameter" for m in document["modules"] for t in m["tensors"])
        params = [v for v in document["checkpoint_values"] if v["key"].endswith(".params")]
        assert params and all(v["type"] == "list" and v["value"] == list(range(len(v["value"])))
                              for v in params), params
        for fmt in ("json", "jsonl"):
            saved = os.path.join(work, "checkpoint_adam." + fmt)
            with open(saved, "w") as f:
                f.write(tool(binary, "inspect-model", path, "--all", "--format", fmt).stdout)
            for a, b in ((saved, path), (path, saved)):
                q = tool(binary, "diff", a, b)
                assert q.returncode == 0, (fmt, q.stdout[-600:], q.stderr)
        table = tool(binary, "inspect-model", path, "--tensors", "--format", "table").stdout
        assert "Checkpoint tensors:\n  optimizer.state.4.step: float32[] cpu, 4 B" in table, table[-800:]

    def diff_one_element():
        a, b = os.path.join(work, "one_a.safetensors"), os.path.join(work, "one_b.safetensors")
        changed = {k: v.clone() for k, v in conv.items()}
        changed["head.weight"][3, 5] += 1.0
        st.save(conv, a)
        st.save(changed, b)
        p = tool(binary, "diff", a, b)
        assert p.returncode == 1, (p.returncode, p.stderr)
        changes = [r for r in jsonl(p.stdout) if r["record"] == "Change"]
        assert [(c["subject"], c["path"], c["field"]) for c in changes] == \
            [("tensor", "head.weight", "data_crc32")], changes
        p = tool(binary, "diff", a, b, "--ignore", "data_crc32")
        assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)

    def every_format_pair():
        # the same weights as TorchScript, .pt2, state dict, safetensors and a checkpoint:
        # exit 0 in every pair (the checkpoint's `module.` taken off by --strip-prefix); one
        # changed element (fc.bias[0] += 1) is that tensor's data_crc32 and nothing else
        torch.manual_seed(2)
        model = Scriptable().eval()
        same = every_format(work, model, "same")
        with torch.no_grad():
            model.fc.bias[0] += 1
        changed = every_format(work, model, "changed")
        strip = ["--strip-prefix", "module."]
        for a in same:
            for b in same:
                p = tool(binary, "diff", same[a], same[b], *strip)
                assert p.returncode == 0, (a, b, p.stdout[-600:], p.stderr)
                summary = jsonl(p.stdout)[-1]
                assert "tensors" in summary["compared"], (a, b, summary)
                p = tool(binary, "diff", same[a], changed[b], *strip)
                changes = [(c["subject"], c["path"], c["field"]) for c in jsonl(p.stdout)
                           if c["record"] == "Change"]
                assert p.returncode == 1 and changes == [("tensor", "fc.bias", "data_crc32")], \
                    (a, b, changes, p.stderr)
        # without --strip-prefix the checkpoint's tensors are other tensors
        p = tool(binary, "diff", same["script.pt"], same["checkpoint.pt"])
        assert p.returncode == 1 and any(c.get("kind") == "added" for c in jsonl(p.stdout)), \
            p.stdout[-600:]

    def sharded_sets():
        # a state dict in two shards with an index, as Hugging Face's save_pretrained writes it:
        # safetensors shards and torch.save (.bin) shards; by the index and by the directory
        for ext, write in ((".safetensors", lambda sd, p: st.save(sd, p, metadata={"format": "pt"})),
                           (".bin", lambda sd, p: torch.save(sd, p))):
            folder = os.path.join(work, "sharded" + ext.replace(".", "_"))
            os.makedirs(folder, exist_ok=True)
            keys = list(conv)
            parts = {f"model-0000{i + 1}-of-00002{ext}": {k: conv[k] for k in half}
                     for i, half in enumerate((keys[:4], keys[4:]))}
            weight_map = {}
            for name, part in parts.items():
                write(part, os.path.join(folder, name))
                weight_map.update({k: name for k in part})
            total = sum(t.numel() * t.element_size() for t in conv.values())
            index_name = ("model.safetensors" if ext == ".safetensors" else "pytorch_model.bin") + \
                ".index.json"
            index = os.path.join(folder, index_name)
            with open(index, "w") as f:
                json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
            # .bin shards keep the state dict's order (module order from its keys); the
            # safetensors shards sort their names as text
            weights, model, modules, tensors, outside = records(
                conv, saved=ext == ".bin", sorted_names=ext == ".safetensors")
            for listed in tensors.values():
                for t in listed:
                    t["file"] = weight_map[t["key"]]
                    if ext == ".bin":  # the shard's own storages: a tensor shares none across
                        t["shared_with"] = [k for k in t["shared_with"]
                                            if weight_map[k] == t["file"]]
            weights["files"] = sorted(parts)
            for path in (index, folder):
                check_described(binary, path, "sharded", {"total_size": total},
                                (weights, model, modules, tensors, outside), [], file=index)
            p = tool(binary, "diff", folder, os.path.join(work, "convnet.safetensors"))
            assert p.returncode == 0, (ext, p.stdout[-500:], p.stderr)

    def header_length_like_other_formats():
        # a header of 128 bytes (a pickle's first byte, 0x80) and of 0x4b50 (the bytes PK)
        for length in (128, 0x4B50):
            text = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})
            path = os.path.join(work, f"length_{length}.safetensors")
            with open(path, "wb") as f:
                f.write(struct.pack("<Q", length) + text.encode().ljust(length) + bytes(8))
            p = tool(binary, "inspect-model", path)
            assert p.returncode == 0, p.stderr
            assert jsonl(p.stdout)[1]["total_parameters"] == 2

    def through_a_pipe():
        path = os.path.join(work, "convnet.safetensors")
        with open(path, "rb") as f:
            piped = subprocess.run([binary, "inspect-model", "/dev/stdin", "--tensors"], stdin=f,
                                   capture_output=True, text=True, timeout=120)
        plain = tool(binary, "inspect-model", path, "--tensors")
        assert piped.returncode == 0, piped.stderr
        assert piped.stdout == plain.stdout.replace(path, "/dev/stdin"), "a pipe reads otherwise"

    if not args.cases:
        checks.run("diff", "the same weights in two safetensors files give exit 0",
                   diff_same_weights)
        checks.run("safetensors", "a file through a pipe gives the same records", through_a_pipe)
        checks.run("tar", "a big-endian tar torch.save file gives the little-endian one's records",
                   tar_big_endian)
        checks.run("diff", "one changed element is its key's data_crc32; --ignore data_crc32 "
                   "gives 0", diff_one_element)
        checks.run("checkpoint", "json, jsonl and table put the model first; saved records "
                   "of a checkpoint diff to 0 with it", checkpoint_document_model_first)
        checks.run("diff", "a DataParallel state dict with --strip-prefix module. diffs to 0 "
                   "with the plain one, a root parameter included, in every format",
                   dataparallel_strips_to_the_plain_one)
        checks.run("diff", "a model as TorchScript, .pt2, state dict, safetensors and checkpoint "
                   "gives exit 0 in every pair; one changed element is its data_crc32",
                   every_format_pair)
        checks.run("sharded", "a sharded set (safetensors and .bin shards) by its index and its "
                   "directory equals the reference's; it diffs to 0 with the whole file",
                   sharded_sets)
        checks.run("safetensors", "a header length starting 0x80 or PK is read as safetensors",
                   header_length_like_other_formats)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
