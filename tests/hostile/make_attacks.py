#!/usr/bin/python3
"""Writes the attack corpus into OUTDIR (at test time: some files come from torch.jit.save, which
writes a random serialization id, and some are megabytes once made) with a manifest.json that
says which commands run each file and what they must do. run_hostile.py runs it.

usage: make_attacks.py OUTDIR

Every class of attack on the tool that a session found by hand (issue 11), each as a small
recipe: archives whose __setstate__ writes files, overwrites the archive, prints into the
records, loops for ever or allocates gigabytes (inspecting must run none of it); inputs that
overflowed the stack (a 30,000-digit YAML scalar, a jsonl value and pickles nested hundreds of
thousands deep, a type string nesting List[ 10,000 deep, code/ with 10,000 nested parentheses);
inputs that cost unbounded time or memory (a torch.save tuple shared and doubled 30 times, code/
of 2 million statements, bzip2 members of 1000 MB, a data.pkl of 50 million Nones, an .npz of
bzip2 arrays, an 8 MB YAML scalar aliased 5,000 times, module trees whose paths grow
quadratically with their depth); element counts that overflow; and zips whose local headers and
directory disagree, whose members overlap or lie outside the archive (issue 45).

Expectations in the manifest: "error" (that exit status, nothing on stdout, a one-line message
naming the file), "safe" (exit 0 with records on stdout, or a clean error): for files that are
harmless to read as data, whatever the code inside them would do when run, or "forward_error"
(that exit status, the records so far on stdout, the error naming the file), each with the text
the error must hold where one is named.
"""
import bz2
import gzip
import io
import json
import os
import pickle
import pickletools
import re
import struct
import sys
import zipfile
import zlib
from typing import Tuple

import numpy as np
import torch
from torch import nn

# files that must never appear: __setstate__ code would create them if it ran
PWNED = "/tmp/vin-hostile-pwned"
# the fixture writers (safetensors, torch.save's tar format) write hostile files too
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "fixtures"))
PWNED_SETSTATE = "/tmp/vin-hostile-setstate-pwned"
OUT = None
MANIFEST = []


def add(name, data, runs):
    """Writes `name` and records how it is run: [(args, expectation, status[, stderr_has[,
    extras]])], where args use {file}, {dir} (this folder), {model} (a fixture archive) and
    {input} (a fixture inputs file), stderr_has is text the error must hold (or None), and extras
    a dict of "stdout_has" (text the records must hold) and "stream" (the file is fed through a
    pipe, args naming /dev/stdin). The expectations are run_hostile.py's."""
    path = os.path.join(OUT, name)
    if data is not None:
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
    MANIFEST.append({"file": name, "runs": [
        {"args": run[0], "expect": run[1], "status": run[2],
         **({"stderr_has": run[3]} if len(run) > 3 and run[3] is not None else {}),
         **(run[4] if len(run) > 4 else {})} for run in runs]})


def archive_runs(inspect="error", capture="error", config="error"):
    """The commands an archive goes through; "safe" where reading it as data is fine."""
    return [(["inspect-model", "{file}"], inspect, 1),
            (["diff", "{file}", "{file}"], inspect, 2),
            (["inspect-config", "{file}"], config, 1),
            (["capture", "{file}", "--inputs", "{input}"], capture, 1)]


def zip_of(members, compression=zipfile.ZIP_STORED):
    """A zip of (name, data) members with fixed timestamps."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data,
                       compress_type=compression)
    return buf.getvalue()


def raw_zip(members):
    """A zip written byte by byte from (name, method, crc, size, compressed bytes): for members
    compressed once and declared as they are (zipfile would compress 1000 MB itself)."""
    out = io.BytesIO()
    central = []
    for name, method, crc, size, data in members:
        offset = out.tell()
        n = name.encode()
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 46, 0, method, 0, 0x21, crc, len(data),
                              size, len(n), 0) + n + data)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 46, 46, 0, method, 0, 0x21,
                                   crc, len(data), size, len(n), 0, 0, 0, 0, 0, offset) + n)
    start = out.tell()
    for c in central:
        out.write(c)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central),
                          out.tell() - start, start, 0))
    return out.getvalue()


def archive_members(module):
    """torch.jit.save of a scripted `module`, as a list of (name, bytes)."""
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(module), buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    return [(n, z.read(n)) for n in z.namelist()]


def replaced(members, name_pattern, transform):
    return [(n, transform(d) if re.search(name_pattern, n) else d) for n, d in members]


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


# --- archives whose __setstate__ does harm when it runs -------------------------------------

class CreatesFile(nn.Module):
    """__setstate__ creates (and maps) a file of the attacker's choosing."""

    def __init__(self):
        super().__init__()
        self.buf = torch.zeros(1)

    @torch.jit.export
    def __getstate__(self) -> Tuple[bool, int]:
        return (self.training, 0)

    @torch.jit.export
    def __setstate__(self, state: Tuple[bool, int]) -> None:
        self.training = state[0]
        self.buf = torch.from_file("/tmp/vin-hostile-setstate-pwned", True, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Prints(nn.Module):
    """__setstate__ prints a forged record onto stdout."""

    def __init__(self):
        super().__init__()
        self.n = 0

    @torch.jit.export
    def __getstate__(self) -> Tuple[bool, int]:
        return (self.training, self.n)

    @torch.jit.export
    def __setstate__(self, state: Tuple[bool, int]) -> None:
        self.training = state[0]
        self.n = state[1]
        print('{"record": "ModelMetadata", "model_type": "forged", "total_parameters": 0, '
              '"trainable_parameters": 0}')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Loops(nn.Module):
    """__setstate__ never returns."""

    def __init__(self):
        super().__init__()
        self.n = 0

    @torch.jit.export
    def __getstate__(self) -> Tuple[bool, int]:
        return (self.training, self.n)

    @torch.jit.export
    def __setstate__(self, state: Tuple[bool, int]) -> None:
        self.training = state[0]
        i = state[1]
        while i >= 0:
            i = i + 1
        self.n = i

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Allocates(nn.Module):
    """__setstate__ allocates 3 GB."""

    def __init__(self):
        super().__init__()
        self.buf = torch.zeros(1)

    @torch.jit.export
    def __getstate__(self) -> Tuple[bool, int]:
        return (self.training, 0)

    @torch.jit.export
    def __setstate__(self, state: Tuple[bool, int]) -> None:
        self.training = state[0]
        self.buf = torch.ones([3 << 30], dtype=torch.uint8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class Wraps(nn.Module):
    def __init__(self, inner: nn.Module):
        super().__init__()
        self.inner = inner
        self.lin = nn.Linear(2, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(self.inner(x))


class OverwritesItself(nn.Module):
    """__setstate__ maps the archive itself (its path is baked in) and zeroes its first bytes."""

    def __init__(self, own_path: str):
        super().__init__()
        self.own_path = own_path
        self.buf = torch.zeros(1)

    @torch.jit.export
    def __getstate__(self) -> Tuple[bool, str]:
        return (self.training, self.own_path)

    @torch.jit.export
    def __setstate__(self, state: Tuple[bool, str]) -> None:
        self.training = state[0]
        self.own_path = state[1]
        self.buf = torch.from_file(self.own_path, True, 4, dtype=torch.uint8).zero_()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def setstate_attacks():
    # read as data they are ordinary models: described (exit 0); capture is not run, since it
    # loads the archive with LibTorch, which runs __setstate__ by nature (docs/safety.md)
    runs = [(["inspect-model", "{file}"], "safe", 0), (["diff", "{file}", "{file}"], "safe", 0),
            (["inspect-config", "{file}"], "error", 1)]
    for name, module in [("setstate_creates_file.pt", CreatesFile()),
                         ("setstate_prints.pt", Prints()),
                         ("setstate_loops.pt", Loops()),
                         ("setstate_allocates.pt", Allocates())]:
        add(name, zip_of(archive_members(Wraps(module))), runs)
    own = os.path.join(OUT, "setstate_overwrites_itself.pt")
    add("setstate_overwrites_itself.pt", zip_of(archive_members(Wraps(OverwritesItself(own)))),
        runs)


# --- stack overflows ------------------------------------------------------------------------

DEEP = 300_000


def nested_tuples_pickle(depth):
    """A protocol-2 pickle of a tuple nested `depth` deep: MARK x depth, EMPTY_TUPLE, TUPLE x depth."""
    return b"\x80\x02" + b"(" * depth + b")" + b"t" * depth + b"."


def stack_attacks():
    digits = "9" * 30_001
    add("yaml_digits.yaml", f"!a.Config\nwidth: {digits}\n",
        [(["inspect-config", "{file}"], "error", 1), (["diff", "{file}", "{file}"], "error", 2)])
    members = archive_members(Small())
    prefix = members[0][0].split("/")[0]
    add("config_digits.pt", zip_of(members + [(f"{prefix}/extra/config.yaml",
                                               f"!a.Config\nwidth: {digits}\n")]),
        [(["inspect-config", "{file}"], "error", 1), (["inspect-model", "{file}"], "safe", 0)])
    deep_json = '{"record": "ModelMetadata", "model_type": ' + "[" * 100_000 + "]" * 100_000 + \
        ', "total_parameters": 0, "trainable_parameters": 0}\n'
    add("records_deep.jsonl", deep_json, [(["diff", "{file}", "{file}"], "error", 2)])
    add("pickle_deep.pt", zip_of(replaced(members, r"/data\.pkl$",
                                          lambda d: nested_tuples_pickle(DEEP)),
                                 zipfile.ZIP_DEFLATED),
        archive_runs())
    add("input_pickle_deep.pt",
        zip_of([("archive/data.pkl", nested_tuples_pickle(DEEP)), ("archive/version", b"3\n")],
               zipfile.ZIP_DEFLATED),
        [(["capture", "{model}", "--inputs", "{file}"], "error", 1)])
    # restore_type_tag([], "List[List[...]]"): LibTorch parses the type string recursively
    type_string = "List[" * 10_000 + "int" + "]" * 10_000
    tag = (b"\x80\x02ctorch.jit._pickle\nrestore_type_tag\n]" +
           b"X" + struct.pack("<I", len(type_string)) + type_string.encode() + b"\x86R.")
    add("type_tag_deep.pt", zip_of(replaced(members, r"/data\.pkl$", lambda d: tag)),
        archive_runs())
    # code/ with 10,000 nested parentheses in a method body (the zip CRC is right)
    parens = "    _deep = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n"

    def deepen(code):
        text = code.decode()
        at = text.index("  def forward(")
        at = text.index(":\n", at) + 2
        return (text[:at] + parens + text[at:]).encode()
    add("code_parens.pt", zip_of(replaced(members, r"/code/.*\.py$", deepen)),
        archive_runs(inspect="safe", config="error"))


# --- unbounded time or memory ---------------------------------------------------------------

def bzip2_of_zeros(size):
    c = bz2.BZ2Compressor(9)
    chunk = bytes(1 << 20)
    data = b"".join(c.compress(chunk) for _ in range(size >> 20)) + c.flush()
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(chunk, crc)
    return data, crc


def size_attacks():
    # a tuple shared and doubled 30 times: 2^30 leaves when copied per reference
    x = (torch.zeros(1), torch.zeros(1))
    for _ in range(30):
        x = (x, x)
    buf = io.BytesIO()
    torch.save(x, buf)
    add("input_shared_tuple.pt", buf.getvalue(),
        [(["capture", "{model}", "--inputs", "{file}"], "error", 1)])

    members = archive_members(Small())
    # 2 million statements in code/, deflated to a few tens of kilobytes
    def statements(code):
        return code + b"def _many(x: int) -> int:\n" + b"  x = 1\n" * 2_000_000 + b"  return x\n"
    add("code_statements.pt", zip_of(replaced(members, r"/code/__torch__\.py$", statements),
                                     zipfile.ZIP_DEFLATED),
        archive_runs(inspect="safe"))

    # five bzip2 code/ members of 1000 MB each (753 bytes each compressed)
    size = 1000 << 20
    data, crc = bzip2_of_zeros(size)
    prefix = members[0][0].split("/")[0]
    plain = [(n, 0, zlib.crc32(d), len(d), d) for n, d in members]
    bombs = [(f"{prefix}/code/__torch__/bomb{i}.py", 12, crc, size, data) for i in range(5)]
    add("code_bzip2_bombs.pt", raw_zip(plain + bombs), archive_runs())
    # the same as inputs: an .npz of five bzip2 arrays of 1000 MB
    add("inputs_bzip2_bombs.npz",
        raw_zip([(f"arr_{i}.npy", 12, crc, size, data) for i in range(5)]),
        [(["capture", "{model}", "--inputs", "{file}"], "error", 1)])

    # data.pkl of 50 million Nones, deflated (about 170 KB)
    nones = b"\x80\x02(" + b"N" * 50_000_000 + b"l."
    add("pickle_nones.pt", zip_of(replaced(members, r"/data\.pkl$", lambda d: nones),
                                  zipfile.ZIP_DEFLATED),
        archive_runs())

    # one 8 MB scalar aliased by 5,000 fields
    scalar = "x" * (8 << 20)
    add("yaml_alias_bytes.yaml",
        "!a.Config\nbig: &b " + scalar + "\n" + "".join(f"f{i}: *b\n" for i in range(5000)),
        [(["inspect-config", "{file}"], "error", 1), (["diff", "{file}", "{file}"], "error", 2)])


# --- counts that overflow -------------------------------------------------------------------

class ThreeParameters(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Parameter(torch.zeros(1))
        self.b = nn.Parameter(torch.zeros(1))
        self.c = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def overflow_attacks():
    # three parameters of 2^62 elements each (sizes and storages patched in data.pkl)
    huge = b"\x8a\x08" + struct.pack("<q", 1 << 62)

    def patch(pickle_bytes):
        # the storage's element count: ('storage', FloatStorage, key, 'cpu', 1); then the size
        # (MARK 1 TUPLE) after the persistent id and the offset 0
        patched, n = re.subn(rb"(cpuq.|h.)K\x01tQ", lambda m: m.group(1) + huge + b"tQ",
                             pickle_bytes, flags=re.S)
        assert n == 3, n
        patched, n = re.subn(rb"(Qq.K\x00\()K\x01t", lambda m: m.group(1) + huge + b"t", patched,
                             flags=re.S)
        assert n == 3, n
        return patched
    members = archive_members(ThreeParameters())
    add("parameters_overflow.pt", zip_of(replaced(members, r"/data\.pkl$", patch)),
        [(["inspect-model", "{file}"], "error", 1),
         (["inspect-model", "{file}", "--load-with-libtorch"], "error", 1)])



def deep_model_json_attacks():
    """PyTorch 1.0-1.2 archives whose model.json nests a value 100,000 deep: a dataType, a
    submodule chain, and a deep value with a sibling key after it. Every JSON reader bounds the
    depth while it parses (records/bounded_json), so each is a one-line error, never a crash of
    the recursion in what copies the parsed value."""
    deep = 100_000
    tensor = '{"dims": ["2"], "offset": "0", "strides": ["1"], "requiresGrad": false, ' \
             '"dataType": ' + "[" * deep + '"FLOAT"' + "]" * deep + "}"
    chain = '{"name": "root", "submodules": [' + '{"name": "a", "submodules": [' * deep + \
            '{"name": "a"}' + "]}" * deep + "]}"
    sibling = '{"name": "root", "extra": ' + "{\"x\": " * deep + "1" + "}" * deep + \
              ', "submodules": []}'
    for name, main, tensors in (("model_json_deep_dtype.pt", '{"name": "root"}', "[" + tensor + "]"),
                                ("model_json_deep_chain.pt", chain, "[]"),
                                ("model_json_deep_sibling.pt", sibling, "[]")):
        model = '{"protoVersion": "3", "producerName": "pytorch", "mainModule": ' + main + \
                ', "tensors": ' + tensors + "}"
        add(name, zip_of([("m/version", b"1\n"), ("m/model.json", model.encode())]),
            [(["inspect-model", "{file}"], "error", 1),
             (["inspect-model", "{file}", "--all"], "error", 1),
             (["diff", "{file}", "{file}"], "error", 2)])


def colliding_name_attacks():
    """Submodule names that would give two modules one path (issue 41): in model.json a child
    named "a.b" beside a child "a" holding "b", an empty name (its parent's path), two siblings of
    one name. nn.Module.add_module refuses all three; every reader refuses them with the reason,
    rather than print two records of one path."""
    cases = {
        "model_json_dotted_name.pt": ([{"name": "a.b"}, {"name": "a", "submodules": [{"name": "b"}]}],
                                      "is named 'a.b'"),
        "model_json_empty_name.pt": ([{"name": "a", "submodules": [{"name": ""}]}],
                                     "a submodule of 'a' has an empty name"),
        "model_json_twin_names.pt": ([{"name": "x"}, {"name": "x"}],
                                     "two submodules of '<root>' are named 'x'"),
    }
    for name, (submodules, message) in cases.items():
        model = {"protoVersion": "3", "producerName": "pytorch",
                 "mainModule": {"name": "root", "submodules": submodules}, "tensors": []}
        add(name, zip_of([("m/version", b"1\n"), ("m/model.json", json.dumps(model).encode())]),
            [(["inspect-model", "{file}"], "error", 1, message),
             (["diff", "{file}", "{file}"], "error", 2, message)])
    # the same in data.pkl: a module object holding a child under the name "a.b"
    leaf = type("Leaf", (), {"__module__": "__torch__"})
    root = type("Root", (), {"__module__": "__torch__"})
    model = root.__new__(root)
    child = leaf.__new__(leaf)
    child.__dict__["training"] = True
    model.__dict__.update({"training": True, "a.b": child})
    fake = type(sys)("__torch__")
    fake.Leaf, fake.Root = leaf, root
    saved, sys.modules["__torch__"] = sys.modules.get("__torch__"), fake
    try:
        data_pkl = pickle.dumps(model, protocol=2)
    finally:
        if saved is None:
            del sys.modules["__torch__"]
        else:
            sys.modules["__torch__"] = saved
    code = ("class Leaf(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n"
            "class Root(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n"
            "  a.b : __torch__.Leaf\n")
    add("data_pkl_dotted_name.pt",
        zip_of([("m/version", b"3\n"), ("m/data.pkl", data_pkl),
                ("m/code/__torch__.py", code.encode()),
                ("m/constants.pkl", pickle.dumps((), protocol=2))]),
        [(["inspect-model", "{file}"], "error", 1, "is named 'a.b'"),
         (["diff", "{file}", "{file}"], "error", 2, "is named 'a.b'")])


def long_path_attacks():
    """Module trees 2,000 deep (the readers' limit) whose every attribute name is 30,000
    characters: a few megabytes of archive whose module paths, each its parent's and one more
    name, would add up to 60 GB (quadratic in the depth). Both readers must refuse them with a
    bound on the paths' bytes, not run out of memory."""
    depth, name = 2000, "n" * 30000
    # model.json (PyTorch 1.0-1.2): ModuleDefs nested `depth` deep
    nested = ('{"name": "root", "submodules": [' + f'{{"name": "{name}", "submodules": [' *
              (depth - 2) + f'{{"name": "{name}"}}' + "]}" * (depth - 1))
    model = '{"protoVersion": "3", "producerName": "pytorch", "mainModule": ' + nested + "}"
    add("model_json_long_paths.pt",
        zip_of([("m/version", b"1\n"), ("m/model.json", model.encode())]), archive_runs())
    # data.pkl: objects of one module class, each holding the next under the long name (the
    # pickler writes the name once and refers to it after)
    node = type("Node", (), {"__module__": "__torch__"})
    chain = None
    for _ in range(depth):
        parent = node.__new__(node)
        parent.__dict__.update({"training": True, name: chain})
        chain = parent
    fake = type(sys)("__torch__")
    fake.Node = node
    saved, sys.modules["__torch__"] = sys.modules.get("__torch__"), fake
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10 * depth)  # the pickler recurses once a level
    try:
        data_pkl = pickle.dumps(chain, protocol=2)
    finally:
        sys.setrecursionlimit(limit)
        if saved is None:
            del sys.modules["__torch__"]
        else:
            sys.modules["__torch__"] = saved
    code = (f"class Node(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            f"  training : bool\n  {name} : Optional[__torch__.Node]\n").encode()
    add("data_pkl_long_paths.pt",
        zip_of([("m/version", b"3\n"), ("m/data.pkl", data_pkl), ("m/code/__torch__.py", code),
                ("m/constants.pkl", pickle.dumps((), protocol=2))]),
        archive_runs())

def scale_attacks():
    """Inputs whose size is in one dimension that a reader once walked quadratically (issue 26):
    each took 50 to 90 s, and must now finish within the suite's 15 s (about a second here);
    bench/bench_scale.py times them at 10,000 and 100,000 entries."""
    n = 30000  # inspect-config: fields declared in __declared__, each looked up in the mapping
    add(f"declared_{n}.yaml",
        "!vin.Big\n" + "".join(f"f{i}: {i}\n" for i in range(n)) + "__declared__:\n  vin.Big:\n"
        + "".join(f"    f{i}: int\n" for i in range(n)),
        [(["inspect-config", "{file}"], "safe", 0)])
    n = 100000  # diff: a field inspect-config does not walk, one mapping of n keys, key by key
    add(f"mapping_{n}.yaml",
        "!vin.Cfg\nextras:\n" + "".join(f"  k{i}: {i}\n" for i in range(n)),
        [(["diff", "{file}", "{file}"], "safe", 0)])
    n = 300000  # diff: saved records whose module holds n attributes (parsed, then compared)
    records = [{"record": "ModelMetadata", "model_type": "m", "total_parameters": 0,
                "trainable_parameters": 0},
               {"record": "ModuleMetadata", "path": "<root>", "module_type": "m",
                "direct_parameters": 0, "trainable_parameters": 0, "direct_buffers": 0,
                "training": False, "attributes": {f"a{i}": i for i in range(n)}}]
    add(f"attributes_{n}.jsonl", "".join(json.dumps(r) + "\n" for r in records),
        [(["diff", "{file}", "{file}"], "safe", 0)])
    # inspect-model --attributes: an archive whose root module holds n int attributes (declared
    # in its class, set in its state)
    add(f"attributes_{n}.pt", wide_module_archive(n),
        [(["inspect-model", "{file}", "--attributes"], "safe", 0)])


class Wide(nn.Module):
    def __init__(self):
        super().__init__()
        self.a0 = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.a0


def wide_module_archive(n):
    """Wide scripted and saved, then given n attributes a0..a{n-1}: one declaration line each in
    its class, one entry each in the state that data.pkl builds it from (the saved state read
    and pickled again the way TorchScript pickles a module: the class as a global, NEWOBJ, a
    dict state, BUILD; torch.jit.load reads the result)."""
    members = archive_members(Wide())
    declaration = "  a0 : int\n"
    data_pkl = next(data for name, data in members if name.endswith("/data.pkl"))
    module, name = next(arg for op, arg, _ in pickletools.genops(data_pkl)
                        if op.name == "GLOBAL").split(" ")  # __torch__.<where Wide was defined>

    def declare(code):
        text = code.decode()
        if declaration not in text:
            return code
        return text.replace(declaration, "".join(f"  a{i} : int\n" for i in range(n))).encode()

    root_class = type(name, (), {"__module__": module})
    parts = module.split(".")
    fakes = {".".join(parts[:i + 1]): type(sys)(".".join(parts[:i + 1])) for i in range(len(parts))}
    setattr(fakes[module], name, root_class)
    saved = {m: sys.modules.get(m) for m in fakes}
    sys.modules.update(fakes)
    try:
        root = pickle.loads(data_pkl)  # the saved state (training, _is_full_backward_hook, a0)
        root.__dict__.update({f"a{i}": i for i in range(n)})
        state = pickle.dumps(root, protocol=2)
    finally:
        for m, old in saved.items():
            if old is None:
                del sys.modules[m]
            else:
                sys.modules[m] = old
    members = replaced(members, r"^[^/]+/code/.*\.py$", declare)
    return zip_of([(m, state if m.endswith("/data.pkl") else data) for m, data in members])


def zip_members_of(archive):
    """(central entry offset, local header offset, name) of each member, in directory order."""
    directory = struct.unpack_from("<I", archive, archive.rfind(b"PK\x05\x06") + 16)[0]
    if directory == 0xFFFFFFFF:  # torch writes a Zip64 end record: the offset is there
        directory = struct.unpack_from("<Q", archive, archive.rfind(b"PK\x06\x06") + 48)[0]
    members, at = [], directory
    while archive[at:at + 4] == b"PK\x01\x02":
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", archive, at + 28)
        members.append((at, struct.unpack_from("<I", archive, at + 42)[0],
                        archive[at + 46:at + 46 + name_len]))
        at += 46 + name_len + extra_len + comment_len
    return members


def zip_layout_attacks():
    """Archives torch.jit.save wrote (data descriptors after the members, local headers with zero
    CRC and sizes and a padding extra field), forged where a local header and the directory can
    disagree, where members overlap and where data lies outside the archive: every reader
    refuses each (zip_directory.cpp's checks, the same under every libzip)."""
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(Small()), buf)
    archive = buf.getvalue()
    members = zip_members_of(archive)
    (central0, local0, _), (central1, local1, name1) = members[0], members[1]

    def forged(edit):
        out = bytearray(archive)
        edit(out)
        return bytes(out)

    def put(fmt, at, value):
        return lambda b: struct.pack_into(fmt, b, at, value)

    data1 = local1 + 30 + sum(struct.unpack_from("<HH", archive, local1 + 26))
    size1 = struct.unpack_from("<I", archive, central1 + 20)[0]
    attacks = {
        "local_name_differs": put("B", local1 + 30 + len(name1) - 1, name1[-1] ^ 1),
        "local_method_differs": put("<H", local1 + 8, 8),
        "local_crc_differs": put("<I", local1 + 14, 0x12345678),
        "local_size_differs": put("<I", local1 + 22, 12345),
        "descriptor_crc_differs": put("B", data1 + size1 + 4, archive[data1 + size1 + 4] ^ 1),
        "two_entries_one_member": put("<I", central1 + 42, local0),
        "member_inside_another": put("<I", central1 + 42, local1 - 8),
        "member_past_the_directory": put("<I", central1 + 42, len(archive) - 30),
        "encrypted_member": put("<H", central0 + 8, 0x809),
    }
    for name, edit in attacks.items():
        add(f"zip_{name}.pt", forged(edit), archive_runs())
    # the genuine archive, for contrast: the same checks accept it
    add("zip_as_torch_writes_it.pt", archive,
        [(["inspect-model", "{file}"], "safe", 0), (["inspect-model", "{file}", "--all"], "safe", 0)])


def output_budget_attacks():
    """Archives that hold a value once and name it from every module (issue 41): an 8 MB string
    in data.pkl's memo, the attribute of 500 modules (4 GB of --attributes records); a legacy
    tensor table entry of 100,000 dimensions registered by 10,000 modules (8 GB of --tensors
    records). What inspect-model prints is bounded by what it read (records/detail_budget):
    records, with the values past the budget given by their type, never an abort."""
    text = "x" * (8 << 20)
    leaf = type("Leaf", (), {"__module__": "__torch__"})
    root = type("Root", (), {"__module__": "__torch__"})
    model = root.__new__(root)
    model.__dict__["training"] = True
    for i in range(500):
        node = leaf.__new__(leaf)
        node.__dict__.update({"training": True, "text": text})
        model.__dict__[f"l{i}"] = node
    fake = type(sys)("__torch__")
    fake.Leaf, fake.Root = leaf, root
    saved, sys.modules["__torch__"] = sys.modules.get("__torch__"), fake
    try:
        data_pkl = pickle.dumps(model, protocol=2)  # the string once, then memo references
    finally:
        if saved is None:
            del sys.modules["__torch__"]
        else:
            sys.modules["__torch__"] = saved
    code = ("class Leaf(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            "  training : bool\n  text : str\n"
            "class Root(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            "  training : bool\n" + "".join(f"  l{i} : __torch__.Leaf\n" for i in range(500)))
    add("memo_string_500_modules.pt",
        zip_of([("m/version", b"3\n"), ("m/data.pkl", data_pkl),
                ("m/code/__torch__.py", code.encode()),
                ("m/constants.pkl", pickle.dumps((), protocol=2))]),
        [(["inspect-model", "{file}", "--attributes"], "safe", 0),
         (["inspect-model", "{file}", "--all"], "safe", 0)])
    # one value of a million ints held once (a list of 100 references to a list of 100
    # references to range(100): 2 KB of pickle) and named by 500 modules (issue 64): walked
    # once per budget, not once per module (the walk of each used to take 19-40 s in all)
    million = [[list(range(100))] * 100] * 100
    node_class = type("Leaf", (), {"__module__": "__torch__"})
    root_node = root.__new__(root)
    root_node.__dict__["training"] = True
    for i in range(500):
        node = node_class.__new__(node_class)
        node.__dict__.update({"training": True, "values": million})
        root_node.__dict__[f"l{i}"] = node
    fake.Leaf, fake.Root = node_class, root
    saved, sys.modules["__torch__"] = sys.modules.get("__torch__"), fake
    try:
        data_pkl = pickle.dumps(root_node, protocol=2)
    finally:
        if saved is None:
            del sys.modules["__torch__"]
        else:
            sys.modules["__torch__"] = saved
    code = ("class Leaf(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            "  training : bool\n  values : List[List[List[int]]]\n"
            "class Root(Module):\n  __parameters__ = []\n  __buffers__ = []\n"
            "  training : bool\n" + "".join(f"  l{i} : __torch__.Leaf\n" for i in range(500)))
    runs = [(["inspect-model", "{file}", "--attributes"], "safe", 0),
            (["inspect-model", "{file}", "--all"], "safe", 0)]
    add("memo_million_values_500_modules.pt",
        zip_of([("m/version", b"3\n"), ("m/data.pkl", data_pkl),
                ("m/code/__torch__.py", code.encode()),
                ("m/constants.pkl", pickle.dumps((), protocol=2))]), runs)
    # the same in PyTorch 1.0-1.2's model.json archive: attributes.pkl holds the value once
    # (id 1), each of the 500 submodules' attribute names it
    attributes_pkl = pickle.dumps((True, million), protocol=2)
    legacy_main = {"name": "root", "attributes": [{"type": "bool", "name": "training", "id": "0"}],
                   "submodules": [{"name": f"m{i}", "attributes": [
                       {"type": "bool", "name": "training", "id": "0"},
                       {"type": "List[List[List[int]]]", "name": "values", "id": "1"}]}
                       for i in range(500)]}
    add("legacy_million_values_500_modules.pt",
        zip_of([("m/version", b"1\n"), ("m/attributes.pkl", attributes_pkl),
                ("m/model.json", json.dumps({"protoVersion": "3", "producerName": "pytorch",
                                             "mainModule": legacy_main,
                                             "tensors": []}).encode())]), runs)
    rank, modules = 100_000, 10_000
    tensor = {"dims": ["1"] * rank, "offset": "0", "strides": ["1"] * rank,
              "requiresGrad": True, "dataType": "FLOAT", "data": {"key": "tensors/0"},
              "device": "cpu"}
    main = {"name": "root", "submodules": [
        {"name": f"m{i}", "parameters": [{"name": "w", "tensorId": "0"}]}
        for i in range(modules)]}
    model_json = {"protoVersion": "3", "producerName": "pytorch", "mainModule": main,
                  "tensors": [tensor]}
    add("legacy_shape_10000_modules.pt",
        zip_of([("m/version", b"1\n"), ("m/tensors/0", struct.pack("<f", 1.0)),
                ("m/model.json", json.dumps(model_json).encode())]),
        [(["inspect-model", "{file}", "--tensors"], "safe", 0),
         (["inspect-model", "{file}", "--all"], "safe", 0)])


class NulMessage(nn.Module):
    def forward(self, x):
        if x.size(0) > 0:
            raise ValueError("before\x00after the nul")
        return x


def raised_message_attacks():
    """A forward whose raised message holds a NUL (issue 41): LibTorch's interpreter passes it on
    cut at the NUL; the error prints it whole, escaped."""
    add("nul_in_raised_message.pt", zip_of(archive_members(NulMessage())),
        [([command, "{file}", "--shape", "x=2"], "forward_error", 1,
          "ValueError: before\\x00after the nul") for command in ("capture", "profile")] +
        [(["compare", "{file}", "{file}", "--shape", "x=2"], "forward_error", 2,
          "ValueError: before\\x00after the nul")])


class Wide16(nn.Module):
    """A Linear(16, 16): 512 FLOPs a row, 64 bytes a row in and out."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


class Drops(nn.Module):
    """Dropout in training mode: random on every forward unless the generator's state is set."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.drop = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.lin(x))


def option_value_attacks():
    """Option values that would reach the allocator or a device that is not there, and the meta
    device, which has shapes and no values (issue 41): --shape past 16 GiB is a usage error
    naming the argument and its bytes, never LibTorch's allocator text; cpu:1 is refused, not
    taken as the cpu; on meta profile measures nothing (null times, the same records every run),
    capture writes shapes only, --trace and compare are refused; FLOPs past INT64_MAX are
    exact, never saturated."""
    shape = ["--shape", "x=100000x100000x100"]
    asks = "--shape x=100000x100000x100: the tensor would hold 4000000000000 bytes"
    small = ["--shape", "x=3x2"]
    add("option_values.pt", zip_of(archive_members(Small())),
        [([command, "{file}", *shape], "usage", 2, asks) for command in ("capture", "profile")] +
        [(["compare", "{file}", "{file}", *shape], "usage", 2, asks)] +
        [([command, "{file}", *small, "--device", "cpu:1"], "usage", 2,
          "--device cpu:1: no such device") for command in ("capture", "profile")] +
        [(["compare", "{file}", "{file}", *small, "--device-b", "cpu:1"], "usage", 2,
          "--device-b cpu:1: no such device")] +
        [(["profile", "{file}", *small, "--device", "meta"], "repeatable", 0, None,
          {"stdout_has": '"latency_ms": null, "throughput": null, "warnings": [], "flops": 24, '
                         '"macs": 12, "uncounted_operators": [], "flops_complete": true, '
                         '"instrumented_ms": null, "overhead": null, "peak_bytes": null'})] +
        [(["capture", "{file}", *small, "--device", "meta"], "repeatable", 0, None,
          {"stdout_has": '"values": [], "sample_omission_reason": "meta_device"'})] +
        [(["profile", "{file}", *small, "--device", "meta", "--trace", "{file}.json"], "usage",
          2, "--trace: a trace is the forward's timeline")] +
        [(["compare", "{file}", "{file}", *small, "--device-a", "meta"], "usage", 2,
          "a tensor on the meta device holds none")])
    rows = 1 << 56  # 2^62 bytes in: within what LibTorch counts; 2^65 FLOPs
    add("flops_past_int64.pt", zip_of(archive_members(Wide16())),
        [(["profile", "{file}", "--shape", f"x={rows}x16", "--device", "meta"], "records", 0,
          None, {"stdout_has": f'"flops": {2 * rows * 16 * 16}, "macs": {rows * 16 * 16}, '
                               '"uncounted_operators": [], "flops_complete": true, '
                               '"instrumented_ms": null'})])


def saved_number_attacks():
    """Saved records whose integers pass 64 bits (issue 41): diff compares them exactly, by type
    and digits, so neither the string of the same digits nor the next integer is equal."""
    def metadata(total):
        return json.dumps({"record": "ModelMetadata", "model_type": "m", "total_parameters": total,
                           "trainable_parameters": 0}) + "\n"
    big = 2 ** 64 + 1
    add("int_past_64_bits_text.jsonl", metadata(str(big)), [])
    add("int_past_64_bits_next.jsonl", metadata(big + 1), [])
    add("int_past_64_bits.jsonl", metadata(big),
        [(["diff", "{file}", "{file}"], "records", 0, None, {"stdout_has": '"identical": true'}),
         (["diff", "{file}", "{dir}/int_past_64_bits_text.jsonl"], "records", 1, None,
          {"stdout_has": f'"old": {big}, "new": "{big}"'}),
         (["diff", "{file}", "{dir}/int_past_64_bits_next.jsonl"], "records", 1, None,
          {"stdout_has": f'"old": {big}, "new": {big + 1}'})])
    # file names that are not UTF-8 stay apart: opened by their bytes, written as \udcXX escapes
    # (Python's surrogateescape), never one replacement character for both
    other = os.fsdecode(b"records_\xfe.jsonl")
    add(other, metadata(4), [])
    add(os.fsdecode(b"records_\xff.jsonl"), metadata(3),
        [(["diff", "{file}", "{file}"], "records", 0, None,
          {"stdout_has": 'records_\\udcff.jsonl", "added": 0'}),
         (["diff", "{file}", "{dir}/" + other], "records", 1, None,
          {"stdout_has": 'records_\\udcfe.jsonl", "added": 0, "removed": 0, "changed": 1'})])
    # a byte-order mark before jsonl records: records, not YAML
    add("byte_order_mark.jsonl", b"\xef\xbb\xbf" + metadata(3).encode(),
        [(["diff", "{file}", "{file}"], "records", 0, None, {"stdout_has": '"kind": "model"'})])


def stream_attacks():
    """A stream of random bytes with no NUL (issue 41): refused from its first 64 bytes, never
    copied whole (run_hostile feeds it again and again, up to a GiB, and the command must end
    within seconds)."""
    data = bytearray(np.random.default_rng(41).integers(1, 256, 1 << 20, dtype=np.uint8))
    data[0] = 0xFE  # neither a zip's, a pickle's nor an .npy's first byte
    refused = "refused after its first 64 bytes"
    add("random_stream.bin", bytes(data),
        [([command, "/dev/stdin"], "error", status, refused, {"stream": True})
         for command, status in (("inspect-model", 1), ("inspect-config", 1))] +
        [(["capture", "{model}", "--inputs", "/dev/stdin"], "error", 1, refused,
          {"stream": True})])


def training_mode_attacks():
    """A model in training mode against itself (issue 41): --seed is the random state every
    forward starts from, so two captures print the same records and compare finds no pair
    beyond tolerance."""
    add("dropout_training.pt", zip_of(archive_members(Drops())),
        [(["capture", "{file}", "--shape", "x=4x8"], "repeatable", 0),
         (["compare", "{file}", "{file}", "--shape", "x=4x8"], "records", 0, None,
          {"stdout_has": '"beyond": 0, "only_in_a": 0, "only_in_b": 0, '
                         '"structure_differences": 0, "first_divergence": null'})])


def misnamed_file_attacks():
    """Files that are not TorchScript archives, named as what they are (issue 41): a
    torch.package archive, and a torch.save of a whole nn.Module (a pickled class)."""
    from torch.package import PackageExporter
    buf = io.BytesIO()
    with PackageExporter(buf) as exporter:
        exporter.extern("torch.**")
        exporter.save_pickle("model", "model.pkl", nn.Linear(2, 3))
    add("torch_package.pt", buf.getvalue(),
        [(["inspect-model", "{file}"], "error", 1, "a torch.package archive")])
    buf = io.BytesIO()
    torch.save(nn.Linear(2, 3), buf)
    add("whole_module.pt", buf.getvalue(),
        [(["inspect-model", "{file}"], "error", 1,
          "a pickled Python object of class torch.nn.modules.linear.Linear")])


def safetensors_bytes(header_bytes):
    """A safetensors file written from the format's specification: the header's length (8 bytes,
    little-endian), a JSON header of exactly `header_bytes` (a metadata note makes up the length,
    then up to 7 spaces), one float32 tensor of 2 elements."""
    tensor = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    bare = json.dumps({"__metadata__": {"note": ""}, **tensor})
    fill = (header_bytes - len(bare)) // 8 * 8
    header = json.dumps({"__metadata__": {"note": "n" * fill}, **tensor}).ljust(header_bytes)
    assert len(header) == header_bytes
    return struct.pack("<Q", header_bytes) + header.encode() + struct.pack("<2f", 1.0, 2.0)


def tar_bytes(members):
    """A tar of (name, data) members."""
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def file_kind_attacks():
    """Files that are not archives, each named for what it is (issue 47, contract 11.1), by
    inspect-model, diff and inspect-config: safetensors whatever the first bytes of its header's
    length (0x80 as a pickle's, PK as a zip's), a Git LFS pointer with the size it points to,
    tar (torch.save's own and any other), 7z, gzip, a sharded checkpoint's index, a pickle that
    is not a torch.save file."""
    def named(what, config=None):
        return [(["inspect-model", "{file}"], "error", 1, what),
                (["diff", "{file}", "{file}"], "error", 2, what),
                (["inspect-config", "{file}"], "error", 1, config or what)]
    def described(what):
        # read by inspect-model and diff (contract 11.1), refused by inspect-config
        return [(["inspect-model", "{file}"], "records", 0, None,
                 {"stdout_has": '"format": "safetensors"'}),
                (["inspect-model", "{file}", "--tensors"], "records", 0, None,
                 {"stdout_has": '"data_crc32": "'}),
                (["diff", "{file}", "{file}"], "records", 0, None,
                 {"stdout_has": '"identical": true'}),
                (["inspect-config", "{file}"], "error", 1, what)]
    assert safetensors_bytes(0x180)[:1] == b"\x80" and safetensors_bytes(0x4B50)[:2] == b"PK"
    add("kind_plain.safetensors", safetensors_bytes(128), described("a safetensors file"))
    add("kind_x80.safetensors", safetensors_bytes(0x180), described("a safetensors file"))
    add("kind_pk.safetensors", safetensors_bytes(0x4B50), described("a safetensors file"))
    add("kind_pk_cut.safetensors", safetensors_bytes(0x4B50)[:4000],
        [(["inspect-model", "{file}"], "error", 1, "its header of 19280 bytes runs past the end"),
         (["diff", "{file}", "{file}"], "error", 2, "not a valid safetensors file"),
         (["inspect-config", "{file}"], "error", 1,
          "a broken safetensors file (its header of 19280 bytes runs past the end")])
    # broken safetensors files (issue 64): named by the format they claim (their shape, or
    # their name where the content is no other format), with the rule they break, never "not a
    # zip file" or "a damaged zip"
    def broken(why):
        return [(["inspect-model", "{file}"], "error", 1, "not a valid safetensors file: " + why),
                (["diff", "{file}", "{file}"], "error", 2, "not a valid safetensors file: " + why),
                (["inspect-config", "{file}"], "error", 1, "a broken safetensors file (" + why),
                (["capture", "{file}", "--shape", "x=1"], "error", 1,
                 "a broken safetensors file (" + why),
                (["profile", "{file}", "--shape", "x=1"], "error", 1,
                 "a broken safetensors file (" + why)]
    def unclosed(header_bytes):  # the header's closing brace turned into an x
        good = safetensors_bytes(header_bytes)
        end = good.rindex(b"}", 0, 8 + header_bytes)
        return good[:end] + b"x" + good[end + 1:]
    not_json = b'{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}'
    for name, data in (
            ("kind_unclosed.safetensors", struct.pack("<Q", len(not_json)) + not_json + bytes(8)),
            ("kind_unclosed.bin", struct.pack("<Q", len(not_json)) + not_json + bytes(8)),
            ("kind_pk_unclosed.safetensors", unclosed(0x4B50)),
            ("kind_pk_unclosed.bin", unclosed(0x4B50))):
        add(name, data, broken("its header is not valid JSON"))
    absurd = struct.pack("<Q", 1 << 63) + safetensors_bytes(128)[8:]
    add("kind_absurd.safetensors", absurd,
        broken("its header of 9223372036854775808 bytes is larger than the format's limit"))
    add("kind_absurd.bin", absurd,
        broken("its header of 9223372036854775808 bytes is larger than the format's limit"))
    past = struct.pack("<Q", 100_000_001) + safetensors_bytes(128)[8:]
    add("kind_past_limit.safetensors", past,
        broken("its header of 100000001 bytes is larger than the format's limit"))
    add("kind_text.safetensors", "not weights at all\n",
        broken("its header of 7451598620781211502 bytes is larger than the format's limit"))
    add("kind_lfs.safetensors",
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 46827520\n", named("a Git LFS pointer to a file of 46827520 bytes"))
    # named by its members, then read by the tar format's reader, which refuses these ones
    add("kind_torch_save.tar", tar_bytes([("sys_info", b"x"), ("pickle", b"x"),
                                          ("tensors", b"x"), ("storages", b"x")]),
        [(["inspect-model", "{file}"], "error", 1,
          "not a readable torch.save tar file: member sys_info"),
         (["diff", "{file}", "{file}"], "error", 2, "not a readable torch.save tar file"),
         (["inspect-config", "{file}"], "error", 1,
          "a torch.save file of PyTorch 0.1 to 0.3 (tar)")])
    add("kind_weights.tar", tar_bytes([("model.safetensors", safetensors_bytes(128))]),
        named("a tar archive"))
    add("kind_weights.7z", b"7z\xbc\xaf\x27\x1c\x00\x04" + bytes(64), named("a 7z archive"))
    add("kind_weights.pt.gz", gzip.compress(b"x" * 100, mtime=0),
        named("compressed data"))
    add("kind_model.safetensors.index.json",
        json.dumps({"metadata": {"total_size": 8},
                    "weight_map": {"w": "model-00001-of-00001.safetensors"}}, indent=2),
        # read as a sharded set (its shard is not there), named by inspect-config
        [(["inspect-model", "{file}"], "error", 1,
          "names the shard model-00001-of-00001.safetensors, which is missing"),
         (["diff", "{file}", "{file}"], "error", 2, "which is missing"),
         (["inspect-config", "{file}"], "error", 1, "the index of a sharded checkpoint")])
    add("kind_dict.pkl", pickle.dumps({"a": 1}, protocol=2), named("a pickle"))
    # a key of 3,000,000 segments: as many modules, whose paths would add up to terabytes
    deep = "a." * 3_000_000 + "w"
    deep_header = json.dumps({deep: {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}})
    add("weights_deep_key.safetensors",
        struct.pack("<Q", len(deep_header)) + deep_header.encode() + bytes(4),
        [(["inspect-model", "{file}"], "error", 1, "its module paths add up to more than 64 MiB"),
         (["diff", "{file}", "{file}"], "error", 2, "its module paths add up")])


PT2 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "pt2")


def pt2_with(source, changes):
    """The PT2 Archive `source` (tests/fixtures/pt2) with members changed: {name: bytes, or a
    function of the member's JSON returning new JSON, or None to drop it}."""
    out = io.BytesIO()
    with zipfile.ZipFile(os.path.join(PT2, source)) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            data = z.read(info.filename)
            change = changes.get(info.filename, data)
            if change is None:
                continue
            if callable(change):
                change = json.dumps(change(json.loads(data))).encode()
            w.writestr(info.filename, change)
    return out.getvalue()


def export_run_attacks():
    """Graphs crafted against the .pt2 interpreter (contract 12.5): capture refuses each before
    running, naming the file, the node and the problem (exit 1), never a crash, a hang or a
    LibTorch backtrace; inspect-model still describes what it can."""
    program = "linear/models/model.json"

    def node_input(field, value):
        def change(p):
            node = p["graph_module"]["graph"]["nodes"][0]
            for given in node["inputs"]:
                if given["name"] == "bias":
                    given[field] = value
            return p
        return change

    def target(name):
        def change(p):
            p["graph_module"]["graph"]["nodes"][0]["target"] = name
            return p
        return change

    def nested(depth):
        # a cond whose true branch is a cond whose true branch is ... `depth` graphs deep
        def graph(level):
            nodes = []
            if level < depth:
                nodes.append({"target": "torch.ops.higher_order.cond", "inputs": [
                    {"name": "pred", "arg": {"as_bool": True}, "kind": 1},
                    {"name": "true_fn", "arg": {"as_graph": {"name": "t", "graph": graph(level + 1)}},
                     "kind": 1},
                    {"name": "false_fn", "arg": {"as_graph": {"name": "f", "graph": graph(depth)}},
                     "kind": 1},
                    {"name": "operands", "arg": {"as_tensors": []}, "kind": 1}],
                    "outputs": [], "metadata": {}, "name": f"cond_{level}"})
            return {"inputs": [], "outputs": [], "nodes": nodes, "tensor_values": {}}

        def change(p):
            p["graph_module"]["graph"]["nodes"].insert(0, graph(0)["nodes"][0])
            return p
        return change

    def huge_zeros(p):
        nodes = p["graph_module"]["graph"]["nodes"]
        nodes.insert(0, {"target": "torch.ops.aten.zeros.default", "inputs": [
            {"name": "size", "arg": {"as_ints": [1 << 40, 1 << 40, 1 << 40]}, "kind": 1}],
            "outputs": [{"as_tensor": {"name": "huge"}}], "metadata": {}, "name": "huge"})
        # read by the output, so that it is not a dead node
        p["graph_module"]["graph"]["outputs"].append({"as_tensor": {"name": "huge"}})
        p["graph_module"]["signature"]["output_specs"].append(
            {"user_output": {"arg": {"as_tensor": {"name": "huge"}}}})
        return p

    cases = [
        ("pt2_run_undefined_value.pt2", {program: node_input("arg", {"as_tensor": {"name": "nowhere"}})},
         "the node linear (torch.ops.aten.linear.default)'s argument bias uses the value nowhere, "
         "which nothing before it defines"),
        ("pt2_run_wrong_kind.pt2", {program: node_input("arg", {"as_sym_int": {"as_name": "x"}})},
         "uses x as a number, which it is not"),
        ("pt2_run_unknown_operator.pt2", {program: target("torch.ops.aten.no_such_op.default")},
         "has no operator aten::no_such_op"),
        ("pt2_run_not_an_operator.pt2", {program: target("os.system")},
         "a target this runner does not run"),
        ("pt2_run_unknown_argument.pt2", {program: node_input("name", "biases")},
         "gives the argument biases, which its operator does not take"),
        ("pt2_run_unknown_higher_order.pt2",
         {program: target("torch.ops.higher_order.invoke_subgraph")},
         "the higher-order operator invoke_subgraph, which this runner does not run"),
        ("pt2_run_graphs_too_deep.pt2", {program: nested(40)}, "nests graphs more than 32 deep"),
        ("pt2_run_allocation_past_memory.pt2", {program: huge_zeros},
         "the node huge (torch.ops.aten.zeros.default): allocates a tensor of more than"),
    ]
    for name, changes, why in cases:
        add(name, pt2_with("torch-2.14/linear.pt2", changes),
            [(["capture", "{file}", "--shape", "x=2x4"], "error", 1, why)])


def export_archive_attacks():
    """torch.export archives crafted against the .pt2 reader (contract 10.4): each refused
    naming the file and the entry, never a crash or unbounded memory."""
    config = "tied/data/weights/model_weights_config.json"
    program = "tied/models/model.json"

    def config_path(path):
        return lambda c: {"config": {k: {**v, "path_name": path} for k, v in c["config"].items()}}

    def signature(specs):
        return lambda p: {**p, "graph_module": {**p["graph_module"], "signature": {
            "input_specs": specs, "output_specs": []}}}

    def tensor_meta(name, sizes=None, strides=None, offset=None):
        def change(c):
            meta = c["config"][name]["tensor_meta"]
            if sizes is not None:
                meta["sizes"] = [{"as_int": n} for n in sizes]
            if strides is not None:
                meta["strides"] = [{"as_int": n} for n in strides]
            if offset is not None:
                meta["storage_offset"] = {"as_int": offset}
            return c
        return change

    def module_stack(text):
        def change(p):
            p["graph_module"]["graph"]["nodes"][0]["metadata"]["nn_module_stack"] = text
            return p
        return change

    def sizes(value):
        def change(p):
            tv = p["graph_module"]["graph"]["tensor_values"]
            tv["p_embed_weight"] = {**tv["p_embed_weight"], "sizes": value}
            return p
        return change

    cases = [
        ("pt2_config_absent_member.pt2", {config: config_path("weight_9")},
         "names tied/data/weights/weight_9, which is missing"),
        ("pt2_config_outside_root.pt2", {config: config_path("../../etc/passwd")},
         "outside tied/data/weights/"),
        ("pt2_storage_too_short.pt2", {"tied/data/weights/weight_0": b"\0" * 8},
         "embed.weight: tied/data/weights/weight_0 holds 8 bytes, fewer than the 240 its tensor "
         "reaches"),
        # two names for one member: views of one storage may differ in size (torch writes
        # them so), each must lie within it
        ("pt2_tied_sizes_differ.pt2", {config: tensor_meta("out.weight", sizes=[20, 6])},
         "out.weight: tied/data/weights/weight_0 holds 240 bytes, fewer than the 480 its "
         "tensor reaches"),
        ("pt2_view_past_its_storage.pt2", {config: tensor_meta("out.weight", offset=1)},
         "out.weight: tied/data/weights/weight_0 holds 240 bytes, fewer than the 244"),
        ("pt2_offset_overflow.pt2", {config: tensor_meta("out.weight", offset=1 << 62)},
         "out.weight's strides and offset overflow 64 bits"),
        ("pt2_strides_unlike_sizes.pt2", {config: tensor_meta("embed.weight", strides=[1])},
         "embed.weight has 1 strides for 2 sizes"),
        ("pt2_union_no_field.pt2", {program: signature([{}])}, "a union with no field"),
        ("pt2_union_two_fields.pt2",
         {program: signature([{"parameter": {"arg": {"name": "p_embed_weight"},
                                             "parameter_name": "embed.weight"},
                               "buffer": {"arg": {"name": "b"}, "buffer_name": "b"}}])},
         "a union with two fields"),
        ("pt2_sizes_overflow.pt2", {program: sizes([{"as_int": 1 << 40}] * 3)},
         "sizes overflow 64 bits"),
        ("pt2_newer_schema.pt2",
         {program: lambda p: {**p, "schema_version": {"major": 99, "minor": 0}}},
         "has schema version 99.0; the newest this reader understands is 8.x"),
        ("pt2_program_missing.pt2", {program: None}, "tied/models/ holds no program"),
        ("pt2_deep_program.pt2",
         {program: b'{"graph_module": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"},
         "nests values more than 2048 levels deep"),
        ("pt2_not_json.pt2", {program: b"\xff\xfe{"}, "is not valid JSON"),
        # nn_module_stack entries that do not split into key, path and type (torch 2.2 on:
        # key,path,type; torch 2.1: key:(path,type)), refused naming the node and the entry
        ("pt2_module_stack_unsplit.pt2",
         {program: module_stack("L__self__,,__main__.Tied;L__self__embed,embed")},
         "tied/models/model.json: the node embedding: the nn_module_stack entry "
         "'L__self__embed,embed' does not split into key, path and type"),
        ("pt2_module_stack_empty_entry.pt2",
         {program: module_stack("L__self__,,__main__.Tied;;e,embed,torch.nn.Embedding")},
         "the nn_module_stack entry '' does not split into key, path and type"),
        ("pt2_module_stack_no_type.pt2",
         {program: module_stack("L__self__:(L['self'],__main__.Tied);e:(L['self'].embed)")},
         "the nn_module_stack entry 'e:(L['self'].embed)' does not split"),
        ("pt2_module_stack_empty_key.pt2",
         {program: module_stack("L__self__,,__main__.Tied;,embed,torch.nn.Embedding")},
         "the nn_module_stack entry ',embed,torch.nn.Embedding' does not split into key, path "
         "and type"),
    ]
    for name, changes, why in cases:
        runs = [(["inspect-model", "{file}"], "error", 1, why),
                (["inspect-model", "{file}", "--all"], "error", 1, why),
                (["diff", "{file}", "{file}"], "error", 2, why)]
        add(name, pt2_with("torch-2.14/tied.pt2", changes), runs)
    # the flat zip of torch 2.6: a nested torch.save whose storage record is shorter than the
    # storage its pickle describes
    inner = io.BytesIO()
    with zipfile.ZipFile(os.path.join(PT2, "torch-2.6", "tied.pt2")) as z:
        with zipfile.ZipFile(io.BytesIO(z.read("serialized_state_dict.pt"))) as nested, \
                zipfile.ZipFile(inner, "w") as w:
            for info in nested.infolist():
                data = nested.read(info.filename)
                w.writestr(info, data[:8] if info.filename == "archive/data/0" else data)
    why = ("serialized_state_dict.pt: the tensor embed.weight: archive/data/0 holds 8 bytes, "
           "fewer than the 60 float32 elements of its storage")
    add("pt2_flat_storage_too_short.pt2",
        pt2_with("torch-2.6/tied.pt2", {"serialized_state_dict.pt": inner.getvalue()}),
        [(["inspect-model", "{file}"], "error", 1, why),
         (["inspect-model", "{file}", "--all"], "error", 1, why),
         (["diff", "{file}", "{file}"], "error", 2, why)])
    # two names for one storage with different sizes: out.weight, the tied name (a memo
    # reference to embed.weight's value as torch pickles it), rebuilt instead on storage 0
    # described with 30 elements where embed.weight's says 60 (both within its 240 bytes)
    out_weight = (b"h\x02h\x03((h\x04h\x05X\x01\x00\x00\x000h\x07K\x1etQK\x00K\x05K\x06\x86"
                  b"K\x06K\x01\x86\x89h\x0b)RtR\x88h\x0b)R\x87R")
    inner = io.BytesIO()
    with zipfile.ZipFile(os.path.join(PT2, "torch-2.6", "tied.pt2")) as z:
        with zipfile.ZipFile(io.BytesIO(z.read("serialized_state_dict.pt"))) as nested, \
                zipfile.ZipFile(inner, "w") as w:
            for info in nested.infolist():
                data = nested.read(info.filename)
                if info.filename.endswith("data.pkl"):
                    assert data.endswith(b"h\x11u."), data[-8:]
                    data = data[:-4] + out_weight + b"u."
                w.writestr(info, data)
    why = ("serialized_state_dict.pt: the tensors embed.weight and out.weight name one storage, "
           "archive/data/0, with different sizes (60 float32 and 30 float32 elements)")
    add("pt2_flat_storage_sizes_differ.pt2",
        pt2_with("torch-2.6/tied.pt2", {"serialized_state_dict.pt": inner.getvalue()}),
        [(["inspect-model", "{file}"], "error", 1, why),
         (["inspect-model", "{file}", "--all"], "error", 1, why),
         (["diff", "{file}", "{file}"], "error", 2, why)])


def torch_save_bytes(value, change=None):
    """torch.save(value) as bytes, its members (name without the top folder: bytes) changed by
    `change` (a dict: bytes, or None to drop the member)."""
    buf = io.BytesIO()
    torch.save(value, buf)
    if not change:
        return buf.getvalue()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z, zipfile.ZipFile(out, "w") as w:
        for info in z.infolist():
            inner = info.filename.split("/", 1)[1]
            data = change.get(inner, z.read(info.filename)) if inner in change \
                else z.read(info.filename)
            if data is not None:
                w.writestr(info, data)
    return out.getvalue()


def checkpoint_attacks():
    """torch.save files read as weights (contract 11): storages that cannot hold their tensors,
    pickles that call things or share values without end, each refused or read as data."""
    def refused(why, diff_why=None):
        return [(["inspect-model", "{file}"], "error", 1, why),
                (["inspect-model", "{file}", "--tensors"], "error", 1, why),
                (["diff", "{file}", "{file}"], "error", 2, diff_why or why)]
    add("weights_storage_short.pt", torch_save_bytes({"w": torch.ones(10)}, {"data/0": bytes(8)}),
        refused("the tensor w: archive/data/0 holds 8 bytes, fewer than the 10 float32 elements"))
    add("weights_storage_missing.pt", torch_save_bytes({"w": torch.ones(10)}, {"data/0": None}),
        refused("the tensor w: its storage record archive/data/0 is missing"))
    # a view past its storage's end: the pickle's sizes and strides reach element 40 of 10
    view = torch.ones(10).as_strided((5,), (1,), 5)
    past = torch_save_bytes({"w": view})
    add("weights_view_past_storage.pt",
        torch_save_bytes({"w": view}, {"data.pkl": pickle_with_offset(past, 5, 35)}),
        refused("a tensor its storage cannot hold"))
    # a call beside the state dict: named by the callable, never made
    class Call:
        def __reduce__(self):
            return (os.system, (f"touch {PWNED}",))
    add("weights_calls_system.pt", torch_save_bytes({"model": {"w": torch.ones(2)}, "hook": Call()}),
        [(["inspect-model", "{file}"], "records", 0, None, {"stdout_has": '"type": "posix.system"'}),
         (["diff", "{file}", "{file}"], "records", 0, None, {"stdout_has": '"identical": true'})])
    # values shared 2**40 times over: bounded by the count of references followed
    shared = [torch.ones(1)]
    for _ in range(40):
        shared = [shared, shared]
    add("weights_shared_bomb.pt", torch_save_bytes({"w": torch.ones(2), "bomb": shared}),
        refused("its keys add up to more than 64 MiB"))
    looped = []
    looped.append(looped)
    add("weights_self_loop.pt", torch_save_bytes({"w": torch.ones(2), "loop": looped}),
        [(["inspect-model", "{file}"], "safe", 1), (["diff", "{file}", "{file}"], "safe", 2)])
    add("weights_whole_module.pt", torch_save_bytes(nn.Linear(2, 2)),
        refused("a pickled Python object of class torch.nn.modules.linear.Linear"))
    legacy_attacks(refused)
    tar_attacks(refused)
    sharded_attacks(refused)


def sharded_attacks(refused):
    """Sharded sets whose index and shards disagree: each refused naming the index and the entry."""
    import safetensors_writer as st

    def shard(*keys):
        return st.serialize([(k, "F32", [2], bytes(8)) for k in keys])

    def index(name, weight_map, total, runs):
        add(name, json.dumps({"metadata": {"total_size": total}, "weight_map": weight_map}), runs)

    add("shard-a.safetensors", shard("a.w", "a.b"), [])
    add("shard-b.safetensors", shard("b.w"), [])
    add("shard-twice.safetensors", shard("a.w"), [])
    good = {"a.w": "shard-a.safetensors", "a.b": "shard-a.safetensors", "b.w": "shard-b.safetensors"}
    index("sharded_good.index.json", good, 24,
          [(["inspect-model", "{file}", "--tensors"], "records", 0, None,
            {"stdout_has": '"file": "shard-b.safetensors"'})])
    index("sharded_missing.index.json", {**good, "c.w": "shard-c.safetensors"}, 32,
          refused("names the shard shard-c.safetensors, which is missing"))
    index("sharded_total.index.json", good, 25,
          refused("its total_size says 25 bytes, but its shards' tensors hold 24"))
    index("sharded_twice.index.json", {**good, "x": "shard-twice.safetensors"}, 32,
          refused("the tensor a.w is in two shards"))
    index("sharded_wrong_shard.index.json", {**good, "a.w": "shard-b.safetensors"}, 24,
          refused("its weight_map puts a.w in shard-b.safetensors, which does not hold it"))
    index("sharded_outside.index.json", {"a.w": "../shard-a.safetensors"}, 8,
          refused("which is not a file beside the index"))
    add("shard-text.bin", "not weights\n", [])
    index("sharded_not_weights.index.json", {"a.w": "shard-text.bin"}, 8,
          refused("its shard shard-text.bin is a text file, not a weights file"))
    # a shard named .safetensors is judged as one: its reader names the rule it breaks
    add("shard-text.safetensors", "not weights\n", [])
    index("sharded_broken_shard.index.json", {"a.w": "shard-text.safetensors"}, 8,
          refused("sharded_broken_shard.index.json: its shard "
                  f"{os.path.join(OUT, 'shard-text.safetensors')}: not a valid safetensors file: "
                  "its header of"))

def legacy_parts(value):
    """torch.save(value) in the legacy format, as its five pickles and the storages after them."""
    buf = io.BytesIO()
    torch.save(value, buf, _use_new_zipfile_serialization=False)
    data, f, ends = buf.getvalue(), io.BytesIO(buf.getvalue()), []
    for i in range(5):
        if i == 3:  # the value: its persistent ids need torch's loader; only its end is wanted
            pickletools.dis(f, out=io.StringIO())
        else:
            pickle.Unpickler(f).load()
        ends.append(f.tell())
    return data, ends


def legacy_attacks(refused):
    """torch.save's format before PyTorch 1.6: pickles one after another, then raw storages."""
    data, ends = legacy_parts({"w": torch.ones(4), "b": torch.zeros(2, dtype=torch.int64)})
    after_keys = ends[4]
    add("legacy_count_past_end.pt",
        data[:after_keys] + struct.pack("<q", 1 << 40) + data[after_keys + 8:],
        refused("elements needs 1099511627776 x"))
    add("legacy_cut_in_storages.pt", data[:after_keys + 12],
        refused("more than the 4 left in the file"))
    add("legacy_magic_only.pt", data[:ends[0]],
        refused("its protocol version at byte 15: missing (the file ends there)"))
    keys = pickle.loads(data[ends[3]:ends[4]])
    twice = pickle.dumps(keys[:1] * 2, protocol=2)
    add("legacy_key_twice.pt", data[:ends[3]] + twice + data[after_keys:],
        refused("is listed twice"))
    add("legacy_key_unknown.pt",
        data[:ends[3]] + pickle.dumps(keys + ["999"], protocol=2) + data[after_keys:],
        refused("the storage 999 is listed, but no tensor of a known dtype refers to it"))
    # a value pickle that never stops: read through a window that grows to the file's end
    add("legacy_no_stop.pt", data[:ends[2]] + b"\x80\x02" + b"(" * (3 << 20),
        refused("its value at byte"))
    # a storage whose count says 1 element where its tensor's pickle says 4
    one, one_ends = legacy_parts({"w": torch.ones(4)})
    add("legacy_storage_short.pt",
        one[:one_ends[4]] + struct.pack("<q", 1) + one[one_ends[4] + 8:one_ends[4] + 12],
        refused("holds 4 bytes, fewer than the 4 float32 elements"))


def tar_attacks(refused):
    """torch.save's tar format (PyTorch 0.1-0.3): members whose storages, views and tensors
    disagree with each other or their bytes, each refused naming the member and the entry."""
    import torch_save_tar_writer as tw

    good = tw.members({"w": torch.ones(4)})  # storage 1001, tensor 1002

    def with_member(name, data, **others):
        return tw.tar_file({**good, name: data, **others})

    floats = struct.pack("<4f", 1, 1, 1, 1)
    no_views = pickle.dumps([], protocol=2)

    def storages(*entries, views=no_views, count=None):
        return (pickle.dumps(len(entries) if count is None else count, protocol=2) +
                b"".join(entries) + views)

    def tensors(*entries):
        return pickle.dumps(len(entries), protocol=2) + b"".join(entries)

    one = tw.storage_entry(1001, "FloatStorage", 4, floats)
    add("tar_storage_count_huge.pt", with_member("storages", storages(one, count=1 << 40)),
        refused("member storages: its count of storages is not a number its bytes can hold"))
    add("tar_storage_past_member.pt",
        with_member("storages", storages(tw.storage_entry(1001, "FloatStorage", 1 << 40, floats))),
        refused("the storage 1001 of 1099511627776 elements needs 1099511627776 x 4 bytes"))
    add("tar_storage_unknown_type.pt",
        with_member("storages", storages(tw.storage_entry(1001, "WeirdStorage", 4, floats))),
        refused("is of type torch.WeirdStorage, which this tool does not know"))
    add("tar_view_past_storage.pt",
        with_member("storages", storages(one, views=pickle.dumps([(1003, 1001, 2, 5)], protocol=2)),
                    tensors=tensors(tw.tensor_entry(1002, 1003, "FloatTensor", [1], [1], 0))),
        refused("the storage view 1003 of elements 2 to 2 + 5 is outside its storage's 4"))
    add("tar_tensor_past_storage.pt",
        with_member("tensors", tensors(tw.tensor_entry(1002, 1001, "FloatTensor", [4], [1], 2))),
        refused("the tensor 1002 (offset 2) reaches past the end of its storage 1001"))
    add("tar_tensor_no_storage.pt",
        with_member("tensors", tensors(tw.tensor_entry(1002, 77, "FloatTensor", [4], [1], 0))),
        refused("the tensor 1002's storage 77 is not among the storages"))
    add("tar_tensor_dimensions.pt",
        with_member("tensors", pickle.dumps(1, protocol=2) +
                    tw.tensor_entry(1002, 1001, "FloatTensor", [4], [1], 0)[:-32] +
                    struct.pack("<i", 1 << 30) + bytes(4)),
        refused("the tensor 1002 of 1073741824 dimensions: more than its member's bytes"))
    add("tar_member_missing.pt", tw.tar_file({k: v for k, v in good.items() if k != "tensors"}),
        refused("it has no member tensors"))
    add("tar_member_twice.pt", tw.tar_file(list(good.items()) + [("pickle", good["pickle"])]),
        refused("the member pickle is there twice"))
    add("tar_value_no_stop.pt", with_member("pickle", b"\x80\x02" + b"(" * (3 << 20)),
        refused("member pickle: its value at byte"))
    whole = tw.tar_file(good)
    add("tar_cut.pt", whole[:len(whole) // 2], refused("not a readable torch.save tar file"))

    # a call beside the state dict: named by the callable, never made
    class Call:
        def __reduce__(self):
            return (os.system, (f"touch {PWNED}",))
    add("tar_calls_system.pt", tw.tar_file(tw.members({"model": {"w": torch.ones(2)},
                                                         "hook": Call()})),
        [(["inspect-model", "{file}"], "records", 0, None, {"stdout_has": '"type": "posix.system"'}),
         (["diff", "{file}", "{file}"], "records", 0, None, {"stdout_has": '"identical": true'})])


def foreign_global_attacks():
    """Pickles that import posix.system (os.system on Linux), then break: cut short, two values
    at STOP, an opcode no pickle has (issue 64). Wherever a pickle is read (a torch.save zip's
    data.pkl, the legacy and the tar format, a TorchScript archive's data.pkl, capture's inputs)
    the refusal names the global before the problem found later, never only "bad STOP"."""
    import torch_save_tar_writer as tw

    class Call:
        def __reduce__(self):
            return (os.system, (f"touch {PWNED}",))
    call = pickle.dumps(Call(), protocol=2)
    assert call.startswith(b"\x80\x02cposix\nsystem\n") and call.endswith(b".")

    def broken(pkl):  # each way to break a pickle that ends with its STOP
        return {"cut": pkl[:-4], "two_at_stop": pkl[:-1] + b"N.", "junk": pkl[:-1] + b"\xfe."}
    named = "imports posix.system, a global this reader does not rebuild"

    def weights_runs():
        return [(["inspect-model", "{file}"], "error", 1, named),
                (["diff", "{file}", "{file}"], "error", 2, named),
                (["capture", "{model}", "--inputs", "{file}"], "error", 1, named)]
    legacy, ends = legacy_parts({"w": torch.ones(2)})
    # a TorchScript data.pkl with the global imported (and popped) before the module
    members = archive_members(Small())
    data = next(d for n, d in members if n.endswith("/data.pkl"))
    injected = b"\x80\x02cposix\nsystem\n0" + data[2:]
    for how, pkl in broken(call).items():
        add(f"global_{how}.pt", torch_save_bytes({"w": torch.ones(2)}, {"data.pkl": pkl}),
            weights_runs())
        add(f"global_{how}_legacy.pt", legacy[:ends[2]] + pkl, weights_runs())
        add(f"global_{how}_tar.pt",
            tw.tar_file({**tw.members({"w": torch.ones(2)}), "pickle": pkl}), weights_runs())
    for how, pkl in broken(injected).items():
        add(f"global_{how}_archive.pt",
            zip_of(replaced(members, r"/data\.pkl$", lambda _, pkl=pkl: pkl)),
            [(["inspect-model", "{file}"], "error", 1, named),
             (["diff", "{file}", "{file}"], "error", 2, named),
             (["capture", "{file}", "--inputs", "{input}"], "error", 1, named)])
    # a .pt2's nested torch.save (the flat zip of torch 2.6): its data.pkl
    with zipfile.ZipFile(os.path.join(PT2, "torch-2.6", "tied.pt2")) as z:
        state = z.read("serialized_state_dict.pt")
    for how, pkl in broken(call).items():
        inner = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(state)) as nested, zipfile.ZipFile(inner, "w") as w:
            for info in nested.infolist():
                data = nested.read(info.filename)
                w.writestr(info, pkl if info.filename.endswith("/data.pkl") else data)
        add(f"global_{how}_nested.pt2",
            pt2_with("torch-2.6/tied.pt2", {"serialized_state_dict.pt": inner.getvalue()}),
            [(["inspect-model", "{file}"], "error", 1, named),
             (["diff", "{file}", "{file}"], "error", 2, named)])
    # whole, a state dict's call is a CheckpointValue (checkpoint_attacks); a call as the whole
    # value is refused, named as the call it is
    add("global_whole.pt", torch_save_bytes({"w": torch.ones(2)}, {"data.pkl": call}),
        [(["inspect-model", "{file}"], "error", 1,
          "whose value is made by calling posix.system, a global this reader does not rebuild"),
         (["diff", "{file}", "{file}"], "error", 2, "made by calling posix.system")])


def pickle_with_offset(saved, old, new):
    """data.pkl of the torch.save file `saved` with the storage offset `old` (the BININT1 after
    the storage's BINPERSID) made `new`."""
    with zipfile.ZipFile(io.BytesIO(saved)) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    at = data.index(bytes([ord("K"), old]), data.index(b"Q") + 1)
    return data[:at] + bytes([ord("K"), new]) + data[at + 2:]


def main():
    global OUT
    OUT = sys.argv[1]
    os.makedirs(OUT, exist_ok=True)
    torch.manual_seed(0)
    setstate_attacks()
    stack_attacks()
    size_attacks()
    overflow_attacks()
    scale_attacks()
    long_path_attacks()
    deep_model_json_attacks()
    colliding_name_attacks()
    output_budget_attacks()
    raised_message_attacks()
    option_value_attacks()
    saved_number_attacks()
    stream_attacks()
    training_mode_attacks()
    misnamed_file_attacks()
    file_kind_attacks()
    export_archive_attacks()
    export_run_attacks()
    zip_layout_attacks()
    checkpoint_attacks()
    foreign_global_attacks()
    with open(os.path.join(OUT, "manifest.json"), "w") as f:
        json.dump({"never_created": [PWNED, PWNED_SETSTATE], "files": MANIFEST}, f, indent=1)
    print(f"wrote {len(MANIFEST)} attack files to {OUT}")


if __name__ == "__main__":
    main()
