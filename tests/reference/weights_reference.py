"""The records contract 11.2 gives a weights file, computed by PyTorch from a state dict that
torch.load(weights_only=True) rebuilt: what `vin-inspect inspect-model FILE --tensors` must print
for the same weights in any format (the WeightsFile's `file`, `format` and `metadata` aside).
"""
import sys
import zlib

import torch


def tensor_bytes(t: torch.Tensor) -> bytes:
    """The elements, row-major, as this (little-endian) machine holds them: what data_crc32 is
    a CRC of. Taken by torch's own byte view, not the way the safetensors writer takes them
    (numpy), so that the two do not share a mistake."""
    assert sys.byteorder == "little"
    flat = t.detach().cpu().contiguous().reshape(-1)
    return bytes(flat.view(torch.uint8).tolist()) if flat.numel() else b""


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


def identity(t: torch.Tensor):
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return (s.data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()), t.dtype)


def records(state_dict, state_dict_path=(), key_prefix=""):
    """(WeightsFile fields, ModelMetadata, [ModuleMetadata], {module_path: [TensorMetadata]})"""
    keys_of = {}
    for key, t in state_dict.items():
        keys_of.setdefault(identity(t), []).append(key_prefix + key)
    modules = {"<root>": {"direct": 0, "tensors": []}}
    seen, total, nbytes_total, dtypes = set(), 0, 0, {}
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
        full = key_prefix + key
        modules[path]["tensors"].append({
            "module_path": path, "name": name, "kind": "parameter", "shape": list(t.shape),
            "dtype": str(t.dtype), "device": None, "requires_grad": None, "numel": numel,
            "nbytes": nbytes, "storage_crc32": None, "key": full,
            "shared_with": [k for k in keys_of[ident] if k != full],
            "data_crc32": "%08x" % zlib.crc32(tensor_bytes(t)),
        })
    weights = {"state_dict_path": list(state_dict_path), "files": [],
               "dtypes": dict(sorted(dtypes.items()))}
    model = {"model_type": None, "total_parameters": total, "trainable_parameters": None,
             "parameter_bytes": nbytes_total, "buffer_bytes": None}
    order = sorted(modules, key=path_order)
    module_records = [{"path": p, "module_type": None, "direct_parameters": modules[p]["direct"],
                       "trainable_parameters": None, "direct_buffers": None, "training": None}
                      for p in order]
    return weights, model, module_records, {p: modules[p]["tensors"] for p in order}
