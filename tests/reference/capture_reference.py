#!/usr/bin/python3
"""Python reference of `vin-inspect capture`: real forward hooks on the *eager* nn.Module.

This is an independent implementation of vin.diagnostics.model_inspection's ModelCapture
following docs/records.md, docs/capture.md and docs/inputs.md, used to check the C++ tool, which instruments the
scripted archive of the same model. Run with Debian's /usr/bin/python3 (torch 1.13).

Library use:
    args, kwargs = load_inputs("inputs.npz", model)
    records = capture_records(model, [(args, kwargs)], module_paths=None, limits=CaptureLimits())
    # -> TensorSnapshot dicts ("record" first) then one CaptureSummary dict, as the tool's jsonl

If the forward raises, capture_records raises ForwardError whose `.records` holds what was captured
so far (snapshots + CaptureSummary), i.e. what the tool prints before exiting 1; capture_run returns
(records, exception_or_None) instead of raising.

How docs/capture.md maps onto torch 1.13 hooks:
- One forward pre-hook and one forward hook per selected module, registered after the module's
  existing hooks, so inputs are observed after existing pre-hooks and outputs after existing
  forward hooks. Values are copied to Python scalars inside the hook, so later in-place mutation
  cannot change them.
- Torch 1.13 pre-hooks see positional arguments only. The root is always called through
  ModelCapture.call(args, kwargs), which hands the keyword arguments to the root's pre-hook; they
  are walked as the `kwargs` root (only when not empty) in the order of forward's signature. The
  root's positional arguments are what the caller gave (after existing pre-hooks); defaults are
  not filled in.
- A submodule's inputs are its positional arguments with trailing defaults of its forward filled
  in (TorchScript calls between modules are positional, defaults included). Keyword arguments
  of submodule calls are turned into positional ones while the capture is active (1.13 hooks
  cannot see keyword arguments; _call_positionally).

usage (CLI): capture_reference.py --factory FILE.py:FUNCTION [--state ARCHIVE.pt] --inputs FILE
             [--inputs FILE ...] [--module PATH ...] [--max-tensors N] ... [--eval]
prints the jsonl the tool would print; exit 1 when the forward raises.
"""
import argparse
import contextlib
import dataclasses
import difflib
import importlib.util
import inspect
import json
import math
import os
import sys
import typing
import zipfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

ROOT = "<root>"


@dataclasses.dataclass(frozen=True)
class CaptureLimits:
    """Positive quotas for one capture (the defaults of docs/capture.md)."""

    max_tensors: int = 64
    max_samples_per_tensor: int = 32
    max_bytes: int = 16 * 1024
    max_traversal_nodes: int = 4096
    max_container_depth: int = 32

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"CaptureLimits.{field.name} must be a positive int, got {value!r}")


class ForwardError(RuntimeError):
    """The model's forward raised; `records` is what was captured before (summary included)."""

    def __init__(self, cause: BaseException, records: List[dict]):
        super().__init__(f"forward raised {type(cause).__name__}: {cause}")
        self.cause = cause
        self.records = records


class _StopWalk(Exception):
    pass


_FLOAT_DTYPES = {torch.float16, torch.bfloat16, torch.float32, torch.float64}


def _json_float(x: float) -> Any:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x


def _omission_reason(t: torch.Tensor) -> Optional[str]:
    # docs/capture.md, "Snapshots and quotas": in this order
    if t.is_nested:
        return "nested_tensor"
    if t.layout != torch.strided:
        return "non_strided_layout"
    if t.device.type == "meta":
        return "meta_device"
    if t.is_quantized:
        return "quantized_dtype"
    if t.is_complex():
        return "complex_dtype"
    return None


def _shape_and_numel(t: torch.Tensor) -> Tuple[List[int], int]:
    """A nested tensor's shape (docs/capture.md): the number of components, then each further
    dimension where all components agree, -1 where they differ; numel sums the components."""
    if not t.is_nested:
        return [int(s) for s in t.shape], t.numel()
    sizes = [list(c.shape) for c in t.unbind()]
    shape = [len(sizes)]
    for d in range(len(sizes[0]) if sizes else 0):
        column = {s[d] for s in sizes}
        shape.append(int(column.pop()) if len(column) == 1 else -1)
    return shape, sum(int(torch.Size(s).numel()) for s in sizes)


def _children(value: Any) -> Optional[List[Tuple[str, Any]]]:
    if isinstance(value, (tuple, list)):
        return [(str(i), v) for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items()]
    return None


def _signature(fn) -> Optional[inspect.Signature]:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _ordered_kwargs(forward, kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Keyword arguments in the order of forward's signature (unknown names last, as given)."""
    sig = _signature(forward)
    names = list(sig.parameters) if sig is not None else []
    ordered = {n: kwargs[n] for n in names if n in kwargs}
    ordered.update((k, v) for k, v in kwargs.items() if k not in ordered)
    return ordered


def _with_defaults(forward, args: tuple) -> tuple:
    """Positional args with the trailing defaults of forward filled in (TorchScript call sites)."""
    sig = _signature(forward)
    if sig is None:
        return args
    params = list(sig.parameters.values())
    filled = list(args)
    for p in params[len(args):]:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) or p.default is p.empty:
            break
        filled.append(p.default)
    return tuple(filled)


def _call_positionally(module: torch.nn.Module) -> None:
    """Makes `module(...)` pass keyword arguments positionally, in the order of its forward's
    signature, so that torch 1.13's forward pre-hooks (which see positional arguments only) see
    them, as TorchScript's calls between modules pass everything positionally. The values and
    what forward computes are unchanged. Undone by _restore_call."""
    cls = type(module)
    if getattr(cls, "_vin_positional", False):
        return
    sig = _signature(module.forward)
    if sig is None or any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY)
                          for p in sig.parameters.values()):
        return
    names = list(sig.parameters)

    def __call__(self, *args, **kwargs):
        if kwargs:
            bound = sig.bind(*args, **kwargs)
            last = max(names.index(k) for k in bound.arguments)
            args = tuple(bound.arguments[n] if n in bound.arguments else sig.parameters[n].default
                         for n in names[:last + 1])
            kwargs = {}
        return cls.__call__(self, *args, **kwargs)

    module.__class__ = type(cls.__name__, (cls,), {"__call__": __call__, "_vin_positional": True,
                                                   "__module__": cls.__module__})


def _restore_call(module: torch.nn.Module) -> None:
    cls = type(module)
    if getattr(cls, "_vin_positional", False):
        module.__class__ = cls.__bases__[0]


class ModelCapture:
    """Bounded capture with real hooks on an eager model (mirror of the Python module's ModelCapture)."""

    def __init__(self, model: torch.nn.Module, *, module_paths: Optional[Sequence[str]] = None,
                 limits: Optional[CaptureLimits] = None, traced_inputs: bool = False):
        self.model = model
        # as a traced archive of this model runs: torch.jit.trace passes a tensor given to a
        # submodule several times (q, k, v of self-attention) once, and traced with autograd on
        self._traced_inputs = traced_inputs
        self.limits = limits if limits is not None else CaptureLimits()
        modules: Dict[str, torch.nn.Module] = {}
        for name, module in model.named_modules():  # unique modules, first path
            modules[name or ROOT] = module
        if module_paths is None:
            selected = list(modules)
        else:
            selected = []
            for path in module_paths:
                if path not in modules:
                    close = difflib.get_close_matches(path, list(modules), n=3)
                    raise ValueError(f"unknown module path {path!r}; closest: {close}")
                if path not in selected:
                    selected.append(path)
        self._targets = [(p, modules[p]) for p in modules if p in selected]  # named_modules order
        self._snapshots: List[dict] = []
        self._sampled_bytes = 0
        self._stopped_by: Optional[str] = None
        self._call_counts: Dict[str, int] = {}
        self._pending: Dict[str, List[int]] = {}
        self._handles: list = []
        self._root_kwargs: Optional[Dict[str, Any]] = None
        self._seen: Optional[set] = None

    # ---- context -------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        return bool(self._handles)

    def __enter__(self) -> "ModelCapture":
        if not self._handles:
            for path, module in self._targets:
                if path != ROOT:
                    _call_positionally(module)
                self._handles.append(module.register_forward_pre_hook(self._make_pre_hook(path)))
                self._handles.append(module.register_forward_hook(self._make_hook(path)))
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for path, module in self._targets:
            _restore_call(module)
        for handle in self._handles:
            handle.remove()
        self._handles = []
        self._pending = {}
        self._root_kwargs = None

    def call(self, args: tuple, kwargs: Optional[Dict[str, Any]] = None) -> Any:
        """Runs the root's ordinary forward (hooks included) with the given args and kwargs."""
        return _call_watched([self], args, kwargs)

    # ---- records -------------------------------------------------------------------------
    @property
    def snapshots(self) -> Tuple[dict, ...]:
        return tuple(self._snapshots)

    @property
    def sampled_bytes(self) -> int:
        return self._sampled_bytes

    def summary(self) -> dict:
        return {"record": "CaptureSummary", "snapshots": len(self._snapshots),
                "sampled_bytes": self._sampled_bytes, "stopped_by": self._stopped_by}

    def records(self) -> List[dict]:
        return [dict(s) for s in self._snapshots] + [self.summary()]

    # ---- hooks ---------------------------------------------------------------------------
    def _make_pre_hook(self, path: str):
        def pre_hook(module, inputs):
            index = self._call_counts.get(path, 0)
            self._call_counts[path] = index + 1
            self._pending.setdefault(path, []).append(index)
            if path == ROOT:
                roots = [("args", tuple(inputs))]
                kwargs = self._root_kwargs or {}
                self._root_kwargs = None  # only the outermost call of the root has them
                if kwargs:
                    roots.append(("kwargs", _ordered_kwargs(module.forward, kwargs)))
            else:
                roots = [("args", _with_defaults(module.forward, tuple(inputs)))]
            self._walk(roots, path, index, "input")
            return None

        return pre_hook

    def _make_hook(self, path: str):
        def hook(module, inputs, output):
            stack = self._pending.get(path)
            if not stack:  # invocation started before capture was entered
                return None
            index = stack.pop()
            self._walk([("output", output)], path, index, "output")
            return None

        return hook

    # ---- walks ---------------------------------------------------------------------------
    def _walk(self, roots, path: str, index: int, direction: str) -> None:
        if self._stopped_by is not None:
            return  # recording has stopped for good; nothing in the walk could be recorded
        budget = [0]
        self._seen = set() if self._traced_inputs and direction == "input" and path != ROOT \
            else None
        try:
            for name, value in roots:
                self._visit(value, [name], 0, budget, path, index, direction)
        except _StopWalk:
            pass

    def _visit(self, value, tensor_path, depth, budget, path, index, direction) -> None:
        if self._stopped_by is not None:
            raise _StopWalk
        budget[0] += 1
        if isinstance(value, torch.Tensor):
            if self._seen is None or id(value) not in self._seen:
                self._record(value, tensor_path, path, index, direction)
            if self._seen is not None:
                self._seen.add(id(value))
        if budget[0] >= self.limits.max_traversal_nodes:
            raise _StopWalk
        children = _children(value)
        if children is not None and depth < self.limits.max_container_depth:
            for key, child in children:
                self._visit(child, tensor_path + [key], depth + 1, budget, path, index, direction)

    def _record(self, t: torch.Tensor, tensor_path, path, index, direction) -> None:
        limits = self.limits
        reason = _omission_reason(t)
        shape, numel = _shape_and_numel(t)
        values: list = []
        nbytes = 0
        if reason is None and numel > 0:
            itemsize = t.element_size()
            remaining = limits.max_bytes - self._sampled_bytes
            count = min(numel, limits.max_samples_per_tensor, max(remaining, 0) // itemsize)
            if count > 0:
                flat = t.detach().reshape(-1)[:count].cpu()
                values = flat.tolist()
                if t.dtype in _FLOAT_DTYPES:
                    values = [_json_float(v) for v in values]
                nbytes = count * itemsize
        self._snapshots.append({
            "record": "TensorSnapshot",
            "module_path": path,
            "call_index": index,
            "direction": direction,
            "tensor_path": list(tensor_path),
            "shape": shape,
            "dtype": str(t.dtype),
            "device": str(t.device),
            "numel": numel,
            "sampled_bytes": nbytes,
            "values": values,
            "sample_omission_reason": reason,
        })
        self._sampled_bytes += nbytes
        if len(self._snapshots) >= limits.max_tensors:
            self._stopped_by = "max_tensors"
        elif self._sampled_bytes >= limits.max_bytes:
            self._stopped_by = "max_bytes"


def _call_watched(captures: Sequence[ModelCapture], args: tuple,
                  kwargs: Optional[Dict[str, Any]] = None) -> Any:
    """One call of the root (hooks included) watched by every capture in `captures` (entered, on
    the same model): each records as if it ran alone, since hooks only read what they see."""
    kwargs = dict(kwargs or {})
    for capture in captures:
        capture._root_kwargs = kwargs
    try:
        # a traced archive holds the operations its trace ran, with autograd on: fast paths
        # that need it off (nn.MultiheadAttention's) are not in it
        with torch.set_grad_enabled(captures[0]._traced_inputs):
            return captures[0].model(*args, **kwargs)
    finally:
        for capture in captures:
            capture._root_kwargs = None
            capture._pending = {}  # invocations aborted by an exception leave no output


def capture_model(model, *, module_paths=None, limits=None) -> ModelCapture:
    return ModelCapture(model, module_paths=module_paths, limits=limits)


def _as_call(model, item) -> Tuple[tuple, dict]:
    if isinstance(item, (str, os.PathLike)):
        return load_inputs(item, model)
    args, kwargs = item
    return tuple(args), dict(kwargs or {})


def capture_run(model: torch.nn.Module, inputs_list, module_paths=None,
                limits: Optional[CaptureLimits] = None, traced_inputs: bool = False):
    """Runs one forward per item ((args, kwargs) pair or input file path), all in one capture.

    Returns (records, exception): records as capture_records; exception is what the forward
    raised (the run stops there, like the tool), or None. `traced_inputs`: see ModelCapture."""
    records, error = capture_runs(model, inputs_list, module_paths, [limits], traced_inputs)
    return records[0], error


def capture_runs(model: torch.nn.Module, inputs_list, module_paths=None,
                 limits_list: Sequence[Optional[CaptureLimits]] = (None,),
                 traced_inputs: bool = False):
    """capture_run under several quotas at once, for the price of one run of the forwards: one
    capture per entry of `limits_list`, all watching the same calls, each recording what it
    would record alone. Returns ([records per limits], exception)."""
    captures = [ModelCapture(model, module_paths=module_paths, limits=limits,
                             traced_inputs=traced_inputs) for limits in limits_list]
    calls = [_as_call(model, item) for item in inputs_list]
    error = None
    with contextlib.ExitStack() as entered:
        for capture in captures:
            entered.enter_context(capture)
        for args, kwargs in calls:
            try:
                _call_watched(captures, args, kwargs)
            except Exception as exc:  # noqa: BLE001 - any exception of the model's forward
                error = exc
                break
    return [capture.records() for capture in captures], error


def capture_records(model: torch.nn.Module, inputs_list, module_paths=None,
                    limits: Optional[CaptureLimits] = None) -> List[dict]:
    """The jsonl record dicts of one capture: TensorSnapshots, then the CaptureSummary.

    Raises ForwardError (with .records) when the forward raises."""
    records, error = capture_run(model, inputs_list, module_paths, limits)
    if error is not None:
        raise ForwardError(error, records) from error
    return records


def dumps(record: dict) -> str:
    """One jsonl line, Python json.dumps layout."""
    return json.dumps(record)


# ---- inputs (docs/inputs.md) -------------------------------------------------------------------------

def _forward_of(model_or_forward):
    if model_or_forward is None:
        return None
    if isinstance(model_or_forward, torch.nn.Module):
        return model_or_forward.forward
    return model_or_forward


def _declared_scalar_types(forward) -> Tuple[List[Optional[type]], Dict[str, Optional[type]]]:
    """Per positional index and per name: int/float/bool when forward declares one, else None."""
    if forward is None:
        return [], {}
    sig = _signature(forward)
    if sig is None:
        return [], {}
    try:
        hints = typing.get_type_hints(forward)
    except Exception:  # noqa: BLE001 - unresolvable annotations: fall back to the raw ones
        hints = {}
    scalar = {"int": int, "float": float, "bool": bool, int: int, float: float, bool: bool}
    positional: List[Optional[type]] = []
    named: Dict[str, Optional[type]] = {}
    for name, p in sig.parameters.items():
        ann = hints.get(name, p.annotation)
        kind = scalar.get(ann) if isinstance(ann, (str, type)) else None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(kind)
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            named[name] = kind
    return positional, named


def _array_value(array: np.ndarray, declared: Optional[type]) -> Any:
    if array.dtype.byteorder == ">" or (array.dtype.byteorder == "=" and sys.byteorder == "big"):
        array = array.astype(array.dtype.newbyteorder("<"))
    if array.ndim == 0 and declared is not None:
        item = array.item()
        if declared is bool:
            if array.dtype.kind != "b":
                raise TypeError(f"a {array.dtype} 0-d array where forward declares bool")
            return bool(item)
        if declared is int:
            if array.dtype.kind not in "iub":
                raise TypeError(f"a {array.dtype} 0-d array where forward declares int")
            return int(item)
        if array.dtype.kind not in "iubf":
            raise TypeError(f"a {array.dtype} 0-d array where forward declares float")
        return float(item)
    return torch.from_numpy(np.array(array, order="C", copy=True))  # keeps 0-d, any rank


def _is_npz(path: str) -> bool:
    lower = str(path).lower()
    if lower.endswith(".npz"):
        return True
    if lower.endswith((".pt", ".pth")):
        return False
    try:
        with zipfile.ZipFile(path) as z:
            return any(n.endswith(".npy") for n in z.namelist())
    except zipfile.BadZipFile:
        return False


def load_inputs(path, model_or_forward=None) -> Tuple[tuple, dict]:
    """Reads one capture input file into (args, kwargs), as docs/inputs.md says.

    model_or_forward (the eager model or its forward) decides which 0-d npz arrays become Python
    int/float/bool scalars."""
    forward = _forward_of(model_or_forward)
    if _is_npz(path):
        positional_types, named_types = _declared_scalar_types(forward)
        with np.load(path, allow_pickle=False) as data:
            names = list(data.files)
            indexed = {}
            kwargs: Dict[str, Any] = {}
            for name in names:
                suffix = name[4:] if name.startswith("arr_") else ""
                if suffix.isdigit() and str(int(suffix)) == suffix:
                    indexed[int(suffix)] = data[name]
                else:
                    kwargs[name] = _array_value(data[name], named_types.get(name))
            if sorted(indexed) != list(range(len(indexed))):
                raise ValueError(f"{path}: positional arrays are not arr_0..arr_{len(indexed) - 1}")
            args = tuple(
                _array_value(indexed[i], positional_types[i] if i < len(positional_types) else None)
                for i in range(len(indexed)))
        return args, kwargs
    obj = torch.load(path, map_location="cpu")
    if isinstance(obj, torch.Tensor):
        return (obj,), {}
    if isinstance(obj, (tuple, list)):
        return tuple(obj), {}
    if isinstance(obj, dict):
        if set(obj) == {"args", "kwargs"}:
            args, kwargs = obj["args"], obj["kwargs"]
            if isinstance(args, torch.Tensor):
                args = (args,)
            return tuple(args), dict(kwargs)
        if all(isinstance(k, str) for k in obj):
            return (), dict(obj)
    raise ValueError(f"{path}: unsupported torch.save content {type(obj).__name__}")


# ---- CLI ----------------------------------------------------------------------------------------

def limits_from_flags(flags: Sequence[str]) -> Tuple[CaptureLimits, Optional[List[str]], bool]:
    """Parses the tool's capture flags (--module, --max-*, --eval) into reference arguments."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--module", action="append")
    for field in dataclasses.fields(CaptureLimits):
        parser.add_argument("--" + field.name.replace("_", "-"), type=int, dest=field.name,
                            default=field.default)
    parser.add_argument("--eval", action="store_true")
    ns = parser.parse_args(list(flags))
    limits = CaptureLimits(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(CaptureLimits)})
    return limits, ns.module, ns.eval


def load_factory(spec: str):
    """'path/to/file.py:function' -> the function."""
    file, _, func = spec.rpartition(":")
    module_name = os.path.splitext(os.path.basename(file))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(file)))
    loader = importlib.util.spec_from_file_location(module_name, file)
    module = importlib.util.module_from_spec(loader)
    sys.modules.setdefault(module_name, module)
    loader.loader.exec_module(module)
    return getattr(module, func)


def sync_with_archive(model: torch.nn.Module, archive: str) -> None:
    """Copies parameters, buffers and training flags of a scripted archive into the eager model."""
    scripted = torch.jit.load(archive, map_location="cpu")
    model.load_state_dict(scripted.state_dict(), strict=True)
    flags = {name: m.training for name, m in scripted.named_modules()}
    for name, m in model.named_modules():
        if name in flags:
            m.training = flags[name]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--factory", required=True, help="FILE.py:FUNCTION building the eager model")
    parser.add_argument("--state", help="scripted archive whose weights and flags to load")
    parser.add_argument("--inputs", action="append", required=True)
    known, rest = parser.parse_known_args(argv)
    limits, module_paths, eval_mode = limits_from_flags(rest)
    torch.set_num_threads(1)
    model = load_factory(known.factory)()
    if known.state:
        sync_with_archive(model, known.state)
    if eval_mode:
        model.eval()
    records, error = capture_run(model, known.inputs, module_paths, limits)
    for record in records:
        print(dumps(record))
    if error is not None:
        print(f"error: forward raised {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
