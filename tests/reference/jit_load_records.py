#!/usr/bin/python3
"""Reference for inspect-model: vin.diagnostics.model_inspection's inspect_model over Python's torch.jit.load view.

usage: jit_load_records.py [--all] ARCHIVE   prints the jsonl records of docs/records.md on stdout
       (with --all, those of `inspect-model --all`: byte totals, the root's method signatures,
       each module's attributes and constants, and one TensorMetadata per registered tensor)

Independent of the C++ code: it walks the loaded RecursiveScriptModule with Python's own
named_modules / named_parameters / named_buffers / parameters, as the Python module does for any
nn.Module. Only the type name comes from TorchScript (the Python class is gone after loading),
demangled as docs/records.md says. With details, what Python does not expose is read from the
archive with Python's zipfile: which attribute slots are parameter or buffer slots and a class's
constant names (the class header in code/), and the CRC-32 of a tensor's storage record (checked
against zlib's CRC of the storage's bytes as loaded).
"""
import json
import math
import re
import sys
import zipfile
import zlib

import torch

from weights_reference import data_crc32


def demangle(qualified: str) -> str:
    qualified = re.sub(r"^__torch__\.", "", qualified)
    return re.sub(r"___torch_mangle_\d+\.", "", qualified)


def python_type_name(module: torch.jit.ScriptModule) -> str:
    return demangle(module._c._type().qualified_name())


def numel(tensors) -> int:
    return sum(t.numel() for t in tensors if t is not None)


def nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


# --- the archive: its code/ (class headers, method order) and its data/ records' CRCs ---

class Archive:
    """The zip records a TorchScript archive holds under its top folder."""

    def __init__(self, path: str):
        self.zip = zipfile.ZipFile(path)
        self.top = self.zip.namelist()[0].split("/")[0]
        data = self.top + "/data/"
        self.data_crcs = {i.CRC for i in self.zip.infolist() if i.filename.startswith(data)}
        self._classes = {}
        self.storage_crcs = {}  # (data pointer, bytes) -> CRC: storages shared by tensors

    def class_lines(self, qualified: str):
        """The lines of class `qualified`'s body: `__torch__.a.b.C` is `class C(...)` in
        code/__torch__/a/b.py, up to the file's next class."""
        if qualified not in self._classes:
            qualifier, _, name = qualified.rpartition(".")
            path = f"{self.top}/code/{qualifier.replace('.', '/')}.py"
            lines = self.zip.read(path).decode("utf-8").splitlines()
            start = next(i for i, line in enumerate(lines)
                         if re.match(rf"class {re.escape(name)}[(:]", line))
            end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("class ")),
                       len(lines))
            self._classes[qualified] = lines[start + 1:end]
        return self._classes[qualified]

    def class_header(self, qualified: str) -> dict:
        """parameters and buffers (slot names), slots (name -> declared type) and constants (names),
        each in the order the class header lists them."""
        header = {"parameters": [], "buffers": [], "slots": {}, "constants": []}
        for line in self.class_lines(qualified):
            if line.startswith("  def "):
                break
            listed = re.match(r"  __(parameters|buffers)__ = \[(.*)\]$", line)
            declared = (re.match(r"  (\w+) : (.*)$", line) or  # `__annotations__["0"] = T`:
                        re.match(r'  __annotations__\["(.*)"\] = (.*)$', line))  # no identifier
            if listed:
                header[listed.group(1)] = re.findall(r'"([^"]*)"', listed.group(2))
            elif declared and declared.group(2).startswith("Final["):
                header["constants"].append(declared.group(1))
            elif declared:
                header["slots"][declared.group(1)] = declared.group(2)
        return header

    def method_order(self, qualified: str):
        """The names of the class's `def`s, in code order."""
        return [m.group(1) for m in (re.match(r"  def (\w+)\(", line)
                                     for line in self.class_lines(qualified)) if m]


# --- JSON values (argument defaults, attributes) ---

_OPAQUE = object()


def plain_value(value):
    """value as JSON where it is made of None, bool, int, float (non-finite ones as strings), str,
    tuples and lists; else _OPAQUE."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (tuple, list)):
        items = [plain_value(v) for v in value]
        return _OPAQUE if any(i is _OPAQUE for i in items) else items
    return _OPAQUE


def script_object_type(value: torch.ScriptObject):
    """A custom class object's qualified name: Python binds no accessor for it, but each of its
    methods' schemas names it as the type of self."""
    names = value._method_names()
    return str(value._get_method(names[0]).schema.arguments[0].type) if names else None


def type_marker(value) -> str:
    if isinstance(value, torch.ScriptObject) and script_object_type(value):
        return demangle(script_object_type(value))
    if torch.jit._state._get_script_class(type(value)) is not None:  # defined in this process
        return demangle(torch._jit_internal._qualified_name(type(value)))
    return f"{type(value).__module__}.{type(value).__qualname__}"


def json_value(value):
    plain = plain_value(value)
    return {"type_marker": type_marker(value)} if plain is _OPAQUE else plain


def declared_type_marker(declared: str) -> dict:
    """The marker for a slot whose value Python cannot convert (an object of a TorchScript class
    the loading process has no Python class for, or a container of such), from its declared type."""
    declared = re.sub(r"^Optional\[(.*)\]$", r"\1", declared)
    for prefix, marker in (("List[", "builtins.list"), ("Tuple[", "builtins.tuple"),
                           ("Dict[", "builtins.dict")):
        if declared.startswith(prefix):
            return {"type_marker": marker}
    return {"type_marker": demangle(declared)}


# --- method signatures ---

def method_names(model: torch.jit.ScriptModule, archive: Archive):
    """forward, then the root class's other methods not starting with `_`, in code order."""
    names = [n for n in model._c._method_names() if not n.startswith("_") and n != "forward"]
    order = archive.method_order(model._c._type().qualified_name())
    assert set(names) <= set(order), (names, order)
    names.sort(key=order.index)
    return (["forward"] if model._c._has_method("forward") else []) + names


def argument_record(argument) -> dict:
    default = argument.default_value if argument.has_default_value() else None
    return {"name": argument.name, "type": str(argument.type),
            "has_default": argument.has_default_value(), "default": json_value(default)}


def method_record(model: torch.jit.ScriptModule, name: str) -> dict:
    schema = model._c._get_method(name).schema
    assert len(schema.returns) == 1, schema
    arguments = schema.arguments[1:]  # self
    return {"record": "MethodSignature", "name": name,
            "arguments": [argument_record(a) for a in arguments],
            "returns": str(schema.returns[0].type)}


# --- module attributes and tensors ---

def slot_names(m: torch.jit.ScriptModule, header: dict):
    try:
        return [n for n, _ in torch._C._jit_debug_module_iterators(m._c)["named_attributes"]]
    except RuntimeError:  # a value Python cannot convert: the header lists the same slots
        return list(header["slots"])


def attributes(m: torch.jit.ScriptModule, archive: Archive) -> dict:
    """The module's non-tensor, non-module attribute slots in slot order, then its constants."""
    header = archive.class_header(m._c._type().qualified_name())
    skipped = set(header["parameters"]) | set(header["buffers"]) | {"training"}
    skipped |= {n for n, _ in m.named_children()}
    out = {}
    for name in slot_names(m, header) + header["constants"]:
        if name in skipped or name.startswith("_"):
            continue
        try:
            value = m._c.getattr(name)  # not getattr(m): nn.Module's own methods would shadow it
        except RuntimeError:
            out[name] = declared_type_marker(header["slots"][name])
            continue
        if not isinstance(value, (torch.Tensor, torch.nn.Module, torch._C.ScriptModule)):
            out[name] = json_value(value)
    return out


def storage_crc32(tensor: torch.Tensor, archive: Archive) -> str:
    """The CRC-32 of the data/ record holding the tensor's whole storage: zlib's over the loaded
    storage's bytes (whatever the dtype, quantized ones included), which must be one the
    archive's zip directory records (jit.save writes a record even for an empty storage)."""
    storage = tensor.storage().untyped()
    size = storage.nbytes()
    key = (storage.data_ptr(), size)
    if key not in archive.storage_crcs:
        raw = torch.empty(0, dtype=torch.uint8).set_(storage, 0, (size,), (1,))
        archive.storage_crcs[key] = zlib.crc32(raw.numpy().tobytes()) if size else 0
    crc = archive.storage_crcs[key]
    assert crc in archive.data_crcs, f"no data/ record has the storage's CRC {crc:08x}"
    return f"{crc:08x}"


def tensor_record(path: str, name: str, kind: str, t: torch.Tensor, archive: Archive) -> dict:
    return {"record": "TensorMetadata", "module_path": path, "name": name, "kind": kind,
            "shape": list(t.shape), "dtype": str(t.dtype), "device": str(t.device),
            "requires_grad": t.requires_grad, "numel": t.numel(),
            "nbytes": t.numel() * t.element_size(), "storage_crc32": storage_crc32(t, archive),
            "data_crc32": data_crc32(t)}


def tensor_records(path: str, m: torch.jit.ScriptModule, archive: Archive):
    for name, p in m.named_parameters(recurse=False):
        yield tensor_record(path, name, "parameter", p, archive)
    for name, b in m.named_buffers(recurse=False):
        yield tensor_record(path, name, "buffer", b, archive)


# --- the records ---

def model_record(model: torch.jit.ScriptModule, details: bool) -> dict:
    params = list(model.parameters())  # deduplicated by identity, as the documented totals
    record = {"record": "ModelMetadata", "model_type": python_type_name(model),
              "total_parameters": numel(params),
              "trainable_parameters": numel(p for p in params if p.requires_grad)}
    if details:
        record["parameter_bytes"] = nbytes(params)
        record["buffer_bytes"] = nbytes(model.buffers())
    return record


def module_record(path: str, m: torch.jit.ScriptModule) -> dict:
    direct = [p for _, p in m.named_parameters(recurse=False)]
    return {"record": "ModuleMetadata", "path": path,
            "module_type": python_type_name(m),
            "direct_parameters": numel(direct),
            "trainable_parameters": numel(p for p in direct if p.requires_grad),
            "direct_buffers": numel(b for _, b in m.named_buffers(recurse=False)),
            # torch.jit.freeze drops the attribute (a frozen module is eval-only): the tool
            # reports false, as documented in the README
            "training": getattr(m, "training", False)}


def records(model: torch.jit.ScriptModule, archive_path: str = None, details: bool = False):
    """The records of `inspect-model`, or with details those of `inspect-model --all`
    (which reads archive_path, the archive `model` was loaded from on the CPU)."""
    archive = Archive(archive_path) if details else None
    yield model_record(model, details)
    if details:
        for name in method_names(model, archive):
            yield method_record(model, name)
    for path, m in model.named_modules():
        path = path or "<root>"
        record = module_record(path, m)
        if details:
            record["attributes"] = attributes(m, archive)
        yield record
        if details:
            yield from tensor_records(path, m, archive)


def main() -> None:
    args = sys.argv[1:]
    details = "--all" in args
    args = [a for a in args if a != "--all"]
    if len(args) != 1:
        sys.exit("usage: jit_load_records.py [--all] ARCHIVE")
    model = torch.jit.load(args[0], map_location="cpu")
    for r in records(model, args[0], details):
        print(json.dumps(r))


if __name__ == "__main__":
    main()
