#!/usr/bin/python3
"""Reference for inspect-model: vin.diagnostics.model_inspection's inspect_model over Python's torch.jit.load view.

usage: jit_load_records.py ARCHIVE      prints the jsonl records of docs/records.md on stdout

Independent of the C++ code: it walks the loaded RecursiveScriptModule with Python's own
named_modules / named_parameters / named_buffers / parameters, as the Python module does for any
nn.Module. Only the type name comes from TorchScript (the Python class is gone after loading),
demangled as docs/records.md says.
"""
import json
import re
import sys

import torch


def python_type_name(module: torch.jit.ScriptModule) -> str:
    qualified = module._c._type().qualified_name()
    qualified = re.sub(r"^__torch__\.", "", qualified)
    return re.sub(r"___torch_mangle_\d+\.", "", qualified)


def numel(tensors) -> int:
    return sum(t.numel() for t in tensors if t is not None)


def records(model: torch.jit.ScriptModule):
    params = list(model.parameters())  # deduplicated by identity, as the documented totals
    yield {"record": "ModelMetadata", "model_type": python_type_name(model),
           "total_parameters": numel(params),
           "trainable_parameters": numel(p for p in params if p.requires_grad)}
    for path, m in model.named_modules():
        direct = [p for _, p in m.named_parameters(recurse=False)]
        yield {"record": "ModuleMetadata", "path": path or "<root>",
               "module_type": python_type_name(m),
               "direct_parameters": numel(direct),
               "trainable_parameters": numel(p for p in direct if p.requires_grad),
               "direct_buffers": numel(b for _, b in m.named_buffers(recurse=False)),
               # torch.jit.freeze drops the attribute (a frozen module is eval-only): the tool
               # reports false, as documented in the README
               "training": getattr(m, "training", False)}


def main() -> None:
    model = torch.jit.load(sys.argv[1], map_location="cpu")
    for r in records(model):
        print(json.dumps(r))


if __name__ == "__main__":
    main()
