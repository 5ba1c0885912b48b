"""The records contract 11.2 gives a weights file, computed by PyTorch from a state dict that
torch.load(weights_only=True) rebuilt: what `vin-inspect inspect-model FILE --tensors` must print
for the same weights in any format (the WeightsFile's `file`, `format` and `metadata` aside).
"""
import sys
import zlib

import torch


def data_crc32(t: torch.Tensor) -> str:
    """TensorMetadata's data_crc32: the CRC-32 of the elements, row-major, as this
    (little-endian) machine holds them. Taken through torch's own uint8 view of the tensor, not
    the way the safetensors writer takes them, so that the two do not share a mistake; zlib
    reads that view's buffer in place (the zoo's references hash every torchvision model)."""
    assert sys.byteorder == "little"
    if t.is_quantized:
        t = t.int_repr()
    flat = t.detach().cpu().contiguous().reshape(-1)
    return "%08x" % (zlib.crc32(flat.view(torch.uint8).numpy()) if flat.numel() else 0)


def _segment_key(segment: str):
    # numeric segments first and by value, then the others by their bytes
    if segment.isdigit() and segment.isascii():
        return (0, len(segment.lstrip("0")), segment.lstrip("0"), segment.encode())
    return (1, 0, "", segment.encode())


def module_and_name(key: str):
    if "." not in key:
        return "<root>", key
    module, name = key.rsplit(".", 1)
    if any(s == "" for s in module.split(".")):
        return "<root>", key
    return module, name


def path_order(path: str):
    return () if path == "<root>" else tuple(_segment_key(s) for s in path.split("."))


def first_key_order(paths):
    """named_modules() order as a torch.save file tells it: `paths` (each after its parent, in
    the order the keys first named them) walked depth first, children in that order."""
    children = {p: [] for p in paths}
    for p in paths[1:]:
        children[p.rsplit(".", 1)[0] if "." in p else "<root>"].append(p)
    out, stack = [], ["<root>"]
    while stack:
        p = stack.pop()
        out.append(p)
        stack.extend(reversed(children[p]))
    return out


def storage_of(t: torch.Tensor):
    """The storage itself (_cdata), not its data pointer: every empty storage's is 0."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()
    return s._cdata


def identity(t: torch.Tensor):
    return (storage_of(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)


def storage_crc32(t: torch.Tensor) -> str:
    """The CRC-32 of the whole storage `t` lies in: what torch.save writes as its record."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage().untyped()
    raw = torch.empty(0, dtype=torch.uint8).set_(s, 0, (s.nbytes(),), (1,))
    return "%08x" % (zlib.crc32(raw.numpy().tobytes()) if s.nbytes() else 0)


def records(state_dict, state_dict_path=(), key_prefix="", saved=False, others=(),
            sorted_names=None):
    """(WeightsFile fields, ModelMetadata, [ModuleMetadata], {module_path: [TensorMetadata]},
    [TensorMetadata outside the state dict]).
    `saved`: a torch.save file, which says each tensor's device, requires_grad and storage (its
    views list each other in shared_with); `others`: the (key, tensor) pairs of a checkpoint
    outside its state dict, listed after the modules on the root and counted nowhere;
    `sorted_names` (by default: not `saved`): the file sorts its names as text (safetensors),
    so modules come in path order, numeric segments by value; else in named_modules() order as
    the keys give it."""
    if sorted_names is None:
        sorted_names = not saved
    keys_of = {}
    for key, t in list(state_dict.items()):
        keys_of.setdefault(storage_of(t) if saved else identity(t), []).append(key_prefix + key)
    for key, t in others:
        keys_of.setdefault(storage_of(t) if saved else identity(t), []).append(key)
    modules = {"<root>": {"direct": 0, "tensors": []}}
    seen, total, nbytes_total, dtypes = set(), 0, 0, {}

    def listed(module_path, name, kind, full, t):
        shared = storage_of(t) if saved else identity(t)
        return {
            "module_path": module_path, "name": name, "kind": kind, "shape": list(t.shape),
            "dtype": str(t.dtype), "device": str(t.device) if saved else None,
            "requires_grad": t.requires_grad if saved else None, "numel": t.numel(),
            "nbytes": t.numel() * t.element_size(),
            "storage_crc32": storage_crc32(t) if saved else None, "key": full,
            "shared_with": [k for k in keys_of[shared] if k != full],
            "data_crc32": data_crc32(t),
        }

    for key, t in state_dict.items():
        path, name = module_and_name(key)
        if path != "<root>":
            parts = path.split(".")
            for i in range(1, len(parts) + 1):
                modules.setdefault(".".join(parts[:i]), {"direct": 0, "tensors": []})
        numel, nbytes = t.numel(), t.numel() * t.element_size()
        modules[path]["direct"] += numel
        ident = identity(t)
        if ident not in seen:
            seen.add(ident)
            total += numel
            nbytes_total += nbytes
            dtypes[str(t.dtype)] = dtypes.get(str(t.dtype), 0) + numel
        modules[path]["tensors"].append(listed(path, name, "parameter", key_prefix + key, t))
    outside = [listed("<root>", key, "checkpoint", key, t) for key, t in others]
    weights = {"state_dict_path": None if state_dict_path is None else list(state_dict_path),
               "files": [],
               "dtypes": dict(sorted(dtypes.items()))}
    model = {"model_type": None, "total_parameters": total, "trainable_parameters": None,
             "parameter_bytes": nbytes_total, "buffer_bytes": None}
    order = sorted(modules, key=path_order) if sorted_names else first_key_order(list(modules))
    module_records = [{"path": p, "module_type": None, "direct_parameters": modules[p]["direct"],
                       "trainable_parameters": None, "direct_buffers": None, "training": None}
                      for p in order]
    return weights, model, module_records, {p: modules[p]["tensors"] for p in order}, outside


# safetensors dtype codes -> (numpy dtype, torch dtype the numpy array is viewed as)
_SAFETENSORS_DTYPES = {
    "F64": ("<f8", None), "F32": ("<f4", None), "F16": ("<f2", None),
    "BF16": ("<i2", torch.bfloat16), "I64": ("<i8", None), "I32": ("<i4", None),
    "I16": ("<i2", None), "I8": ("i1", None), "U8": ("u1", None), "BOOL": ("?", None),
}


def safetensors_state_dict(path):
    """(the tensors of the safetensors file at `path` by key, in the header's order, and its
    __metadata__ or None), read from the format's specification with json and numpy: the
    reference for safetensors files other people wrote, independent of the tool's reader."""
    import json
    import numpy
    with open(path, "rb") as f:
        raw = f.read()
    length = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + length])
    data = raw[8 + length:]
    metadata = header.pop("__metadata__", None)
    tensors = {}
    for key, entry in header.items():
        np_dtype, view = _SAFETENSORS_DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        array = numpy.frombuffer(data[begin:end], dtype=np_dtype).reshape(entry["shape"])
        t = torch.from_numpy(array.astype(array.dtype.newbyteorder("="), copy=True))
        tensors[key] = t.view(view) if view is not None else t
    return tensors, metadata


def _type_name(v):
    if v is None:
        return "NoneType"
    module = type(v).__module__
    if module == "builtins":
        return type(v).__name__
    if module.startswith("numpy"):
        return "numpy." + type(v).__name__
    if isinstance(v, torch.dtype):
        return "torch.dtype"
    return module + "." + type(v).__qualname__


def _value(v):
    if isinstance(v, bool) or v is None or (isinstance(v, int) and -2**63 <= v < 2**63):
        return v
    if isinstance(v, float):
        return v
    if isinstance(v, str):
        return v[:200]
    if isinstance(v, dict):
        return {}
    if isinstance(v, (list, tuple)):  # empty, or of plain numbers: its first 200
        return [x for x in v[:200]]
    if isinstance(v, torch.dtype):
        return str(v)
    if type(v).__module__.startswith("numpy"):
        return v.item()
    return None


def checkpoint_records(obj):
    """What a torch.save file holding `obj` is described as (contract 11.2), by the rule of
    docs/records.md: its state dict (the dict of tensors under string keys, reached through
    string keys, holding the most elements; the first of equals), the tensors outside it and
    the other values. Returns records(...)'s five parts and [CheckpointValue]."""
    leaves, values, candidates = [], [], []  # leaves: (key, tensor, candidate or None)

    def plain_numbers(v):  # an optimizer's parameter indices, its betas: one value
        return isinstance(v, (list, tuple)) and all(
            type(x) in (int, float) and (type(x) is float or -2**63 <= x < 2**63) for x in v)

    def extra_state(k):  # nn.Module.get_extra_state's entry: any value
        return isinstance(k, str) and (k == "_extra_state" or k.endswith("._extra_state"))

    def walk(v, key, path, parent=None):
        if isinstance(v, torch.Tensor):
            leaves.append((key, v, parent))
        elif isinstance(v, (dict, list, tuple)) and len(v) and not plain_numbers(v):
            if isinstance(v, dict):
                candidate = None
                tensors = [t for k, t in v.items()
                           if isinstance(k, str) and isinstance(t, torch.Tensor)]
                if path is not None and tensors and all(
                        (isinstance(k, str) and isinstance(t, torch.Tensor)) or extra_state(k)
                        for k, t in v.items()):
                    candidates.append((sum(t.numel() for t in tensors), path, key))
                    candidate = len(candidates) - 1
                for k, item in v.items():
                    walk(item, f"{key}.{k}" if key else str(k),
                         path + [k] if path is not None and isinstance(k, str) else None,
                         candidate)
            else:
                for i, item in enumerate(v):
                    walk(item, f"{key}.{i}" if key else str(i), None)
        else:
            values.append({"key": key, "type": _type_name(v), "value": _value(v)})

    walk(obj, "", [])
    best = max(range(len(candidates)), key=lambda i: (candidates[i][0], -i), default=None)
    if isinstance(obj, torch.Tensor):
        state, path, prefix, inside = {"": obj}, [], "", {0}
    elif best is not None:
        _, path, prefix = candidates[best]
        inside = {i for i, leaf in enumerate(leaves) if leaf[2] == best}
        cut = len(prefix) + 1 if prefix else 0
        state = {leaves[i][0][cut:]: leaves[i][1] for i in sorted(inside)}
    else:
        state, path, prefix, inside = {}, None, "", set()
    others = [leaf[:2] for i, leaf in enumerate(leaves) if i not in inside]
    return (*records(state, path, prefix + "." if prefix else "", saved=True, others=others),
            values)
