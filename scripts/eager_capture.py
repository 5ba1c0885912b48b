#!/usr/bin/python3
"""Records an eager PyTorch model's module calls into the .npz layout of `vin-inspect capture
--save`, so that `vin-inspect compare` can put an eager model beside its TorchScript export:

    scripts/eager_capture.py --factory mymodels.py:make_net --state net.pt --inputs x.npz -o eager.npz
    vin-inspect compare net.pt eager.npz --inputs x.npz

usage: eager_capture.py --factory FILE.py:FUNCTION | MODULE:FUNCTION  (a function returning the
       nn.Module) [--state ARCHIVE.pt] (copy its parameters, buffers and training flags into the
       eager model) --inputs FILE (.npz: arr_N positional, other names keyword; .npy; or a
       torch.save file of a tensor, tuple, or dict) [--eval] [--seed N] -o OUT.npz

Library use: `capture_to_npz(model, args, kwargs, "eager.npz")`.

Every call of every module (the root first) is recorded with forward hooks as the tool records
TorchScript's: a member `MODULE_PATH/CALL_INDEX/DIRECTION/TENSOR_PATH...` per tensor reached in
the inputs (`args/0`, the root's keyword arguments under `kwargs/NAME`) and the output
(`output`, `output/0`, `output/key`), walking tuples, lists and dicts (4,096 nodes and 32 levels
per walk, as the tool's defaults). A submodule's inputs are its positional arguments with its
forward's trailing defaults filled in, and keyword arguments passed positionally, as TorchScript
calls submodules. Tensors are copied when seen; bfloat16 is saved as float32, quantized tensors
dequantized; nested, sparse and meta tensors are left out. The forward runs under
torch.no_grad(), from `torch.manual_seed(seed)` (`--seed`, default 0), as the tool's forwards
start from the state --seed gives (contract 9.2): a model with dropout in training mode draws
the same masks on both sides. Needs python3-torch and python3-numpy.
"""
import argparse
import importlib
import importlib.util
import inspect
import os
import sys
from typing import Any, Dict, List, Tuple

import numpy as np
import torch

ROOT = "<root>"
MAX_NODES = 4096
MAX_DEPTH = 32


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _with_defaults(forward, args: tuple) -> tuple:
    """Positional args with forward's trailing defaults filled in, as TorchScript passes them."""
    sig = _signature(forward)
    if sig is None:
        return args
    filled = list(args)
    for p in list(sig.parameters.values())[len(args):]:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is p.empty:
            break
        filled.append(p.default)
    return tuple(filled)



def member_name(parts):
    """The .npz member name of a tensor, as vin-inspect's capture --save writes it: the parts
    (module path, call index, direction, tensor path) joined by '/', each with '%', '/' and
    control characters written %XX."""
    def escape(part):
        return "".join(f"%{ord(c):02X}" if ord(c) < 0x20 or ord(c) == 0x7F or c in "%/" else c
                       for c in part)
    return "/".join(escape(p) for p in parts)

class _Recorder:
    def __init__(self, model: torch.nn.Module):
        self.model = model
        self.arrays: Dict[str, np.ndarray] = {}
        self.calls: Dict[str, int] = {}
        self.pending: Dict[str, List[int]] = {}
        self.handles = []
        self.patched = []
        seen = set()
        for name, module in model.named_modules():
            if id(module) in seen:
                continue
            seen.add(id(module))
            path = name or ROOT
            if module is not model:
                self.handles.append(module.register_forward_pre_hook(self._pre(path)))
                self._call_positionally(module)
            self.handles.append(module.register_forward_hook(self._post(path)))

    def _call_positionally(self, module: torch.nn.Module) -> None:
        cls = type(module)
        sig = _signature(module.forward)
        if sig is None or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY)
                              for p in sig.parameters.values()):
            return
        names = list(sig.parameters)

        def __call__(self, *args, **kwargs):
            if kwargs:
                bound = sig.bind(*args, **kwargs)
                last = max(names.index(k) for k in bound.arguments)
                args = tuple(bound.arguments.get(n, sig.parameters[n].default)
                             for n in names[:last + 1])
                kwargs = {}
            return cls.__call__(self, *args, **kwargs)

        module.__class__ = type(cls.__name__, (cls,), {"__call__": __call__,
                                                       "__module__": cls.__module__})
        self.patched.append((module, cls))

    def close(self) -> None:
        for h in self.handles:
            h.remove()
        for module, cls in self.patched:
            module.__class__ = cls

    def _open(self, path: str) -> int:
        index = self.calls.get(path, 0)
        self.calls[path] = index + 1
        self.pending.setdefault(path, []).append(index)
        return index

    def _pre(self, path):
        def hook(module, args):
            index = self._open(path)
            self._walk(path, index, "input", ["args"], _with_defaults(module.forward, args))
        return hook

    def _post(self, path):
        def hook(module, args, output):
            stack = self.pending.get(path)
            if stack:
                self._walk(path, stack.pop(), "output", ["output"], output)
        return hook

    def root_input(self, args: tuple, kwargs: dict) -> None:
        index = self._open(ROOT)
        nodes = self._walk(ROOT, index, "input", ["args"], tuple(args))
        if kwargs and nodes < MAX_NODES:
            self._walk(ROOT, index, "input", ["kwargs"], kwargs, nodes)

    def _walk(self, path, index, direction, start, value, nodes=0) -> int:
        stack = [(start, value, 0)]
        while stack and nodes < MAX_NODES:
            key, v, depth = stack.pop()
            nodes += 1
            if isinstance(v, torch.Tensor):
                self._keep(member_name([path, str(index), direction, *key]), v)
            if depth >= MAX_DEPTH:
                continue
            if isinstance(v, (tuple, list)):
                items = [(str(i), x) for i, x in enumerate(v)]
            elif isinstance(v, dict):
                items = [(str(k), x) for k, x in v.items()]
            else:
                continue
            stack.extend((key + [k], x, depth + 1) for k, x in reversed(items))
        return nodes

    def _keep(self, name: str, t: torch.Tensor) -> None:
        if name in self.arrays or t.is_nested or t.layout != torch.strided or t.is_meta:
            return
        t = t.detach()
        if t.is_quantized:
            t = t.dequantize()
        if t.dtype == torch.bfloat16:
            t = t.float()
        self.arrays[name] = t.cpu().clone().numpy()


def capture_to_npz(model: torch.nn.Module, args: tuple, kwargs: dict, out: str) -> int:
    """Runs model(*args, **kwargs) once under no_grad, recording every module call; writes the
    .npz and returns how many tensors it holds."""
    recorder = _Recorder(model)
    try:
        recorder.root_input(args, kwargs)
        with torch.no_grad():
            model(*args, **kwargs)
    finally:
        recorder.close()
    np.savez(out, **recorder.arrays)
    return len(recorder.arrays)


def load_inputs(path: str) -> Tuple[tuple, Dict[str, Any]]:
    if path.endswith(".npy"):
        return (torch.from_numpy(np.load(path)),), {}
    try:
        data = np.load(path, allow_pickle=False)
    except (ValueError, OSError):
        data = None
    if data is not None and hasattr(data, "files"):
        indexed, kwargs = {}, {}
        for name in data.files:
            value = torch.from_numpy(data[name])
            suffix = name[4:] if name.startswith("arr_") else ""
            if suffix.isdigit():
                indexed[int(suffix)] = value
            else:
                kwargs[name] = value
        return tuple(indexed[i] for i in sorted(indexed)), kwargs
    obj = torch.load(path, map_location="cpu")
    if isinstance(obj, torch.Tensor):
        return (obj,), {}
    if isinstance(obj, (tuple, list)):
        return tuple(obj), {}
    if isinstance(obj, dict) and set(obj) == {"args", "kwargs"}:
        return tuple(obj["args"]), dict(obj["kwargs"])
    if isinstance(obj, dict):
        return (), dict(obj)
    raise SystemExit(f"{path}: not an inputs file (a tensor, a tuple, a dict, or an .npz)")


def load_factory(spec: str):
    where, _, func = spec.rpartition(":")
    if not where or not func:
        raise SystemExit(f"--factory {spec}: expected FILE.py:FUNCTION or MODULE:FUNCTION")
    if where.endswith(".py"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        name = os.path.splitext(os.path.basename(where))[0]
        loader = importlib.util.spec_from_file_location(name, where)
        module = importlib.util.module_from_spec(loader)
        sys.modules.setdefault(name, module)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, func)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--factory", required=True)
    parser.add_argument("--state", help="a TorchScript archive whose weights the model takes")
    parser.add_argument("--inputs", required=True)
    parser.add_argument("--eval", action="store_true")
    parser.add_argument("--seed", type=int, default=0,
                        help="torch.manual_seed before the forward, as vin-inspect's --seed")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    model = load_factory(args.factory)()
    if args.state:
        scripted = torch.jit.load(args.state, map_location="cpu")
        model.load_state_dict(scripted.state_dict(), strict=True)
        flags = {name: m.training for name, m in scripted.named_modules()}
        for name, m in model.named_modules():
            if name in flags:
                m.training = flags[name]
    if args.eval:
        model.eval()
    call_args, call_kwargs = load_inputs(args.inputs)
    torch.manual_seed(args.seed)  # after the factory, whose initialisers draw from it
    n = capture_to_npz(model, call_args, call_kwargs, args.output)
    print(f"{args.output}: {n} tensors", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
