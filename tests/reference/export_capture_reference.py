#!/usr/bin/python3
"""Python reference of `vin-inspect capture FILE.pt2` (contract 12.2, issue 65): what
`torch.export.unflatten` and real forward hooks show of an exported program's module calls.

The program is loaded with torch.export.load and unflattened (torch.export.unflatten); every
module of the unflattened module's named_modules() (the root as "<root>", as the tool writes it)
gets a forward pre-hook (with_kwargs=True) and a forward hook. Each call of a hooked module is an
invocation: its `args` (always) and `kwargs` (when not empty) walked at the pre-hook, its output
walked at the hook, values sampled at that moment, `call_index` per path from 0. The walks, the
quotas and the records are tests/reference/capture_reference.py's (ModelCapture's _walk and
_record, reused by subclassing), so the records are those of TorchScript's capture. The
CaptureSummary gains `"runner": "export_graph"`.

Where unflatten's view and contract 12.2's wording differ, the records follow the contract,
which the tool implements: a module called twice with different graphs, unflatten's `blk@1`
(its own path, with its own call counter), is `blk`, its calls counted with the other calls of
`blk` (`call_index` 1, 2, ...); the modules unflatten makes of control-flow graphs (`cond`'s
`true_graph_0`, ...) are not module calls and are not hooked. A tied weight is each module's own
state, as unflatten has it. The root is called with the input file's arguments: positional ones as given, keyword
ones in the order of the program's forward (the root's in_spec), under torch.inference_mode()
(as the tool runs a program; torch 2.6's cond otherwise traces its branches with fake tensors,
where a hook cannot read values) and one thread.

Library use:
    records, error = export_capture_run("m.pt2", ["m.inputs.npz"], module_paths=None,
                                        limits=CaptureLimits())

usage: export_capture_reference.py FILE.pt2 --inputs FILE.npz [--inputs ...] [--module P ...]
       [--max-tensors N] [--max-samples-per-tensor N] [--max-bytes N]
       [--max-traversal-nodes N] [--max-container-depth N]
prints the jsonl the tool would print; exit 1 when the forward raises.
--module takes exact paths or fnmatch patterns (`*` also matches dots; `*` alone is every path,
"<root>" included), as the tool's --module reads them.
"""
import argparse
import contextlib
import difflib
import fnmatch
import os
import re
import sys
from typing import Any, Dict, List, Optional, Sequence

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from capture_reference import (ROOT, CaptureLimits, ModelCapture, _call_watched,  # noqa: E402
                               dumps, limits_from_flags, load_inputs)

RUNNER = "export_graph"


def contract_path(path: str) -> str:
    """unflatten's path of a module's later call (`blk@1`, `blk@1.fc`) as contract 12.2 names it
    (`blk`, `blk.fc`)."""
    return re.sub(r"@\d+(?=\.|$)", "", path)


def graph_modules_of(ep) -> set:
    """The names unflatten gives the program's control-flow graphs (`true_graph_0`, ...)."""
    return {name for name, child in ep.graph_module.named_children()
            if isinstance(child, torch.fx.GraphModule)}


class ExportCapture(ModelCapture):
    """ModelCapture on an unflattened exported program: hooks see keyword arguments too
    (with_kwargs=True), the module's calls are unflatten's under contract 12.2's paths (above),
    nothing is made positional."""

    def __init__(self, unflat, *, module_paths=None, limits=None, graphs=frozenset()):
        super().__init__(unflat, module_paths=None, limits=limits)
        targets = [(contract_path(path), module) for path, module in self._targets
                   if path.split(".")[0] not in graphs]
        if module_paths is not None:
            targets = [(path, module) for path, module in targets if path in module_paths]
        self._targets = targets

    def __enter__(self) -> "ExportCapture":
        if not self._handles:
            for path, module in self._targets:
                self._handles.append(module.register_forward_pre_hook(
                    self._make_pre_hook(path), with_kwargs=True))
                self._handles.append(module.register_forward_hook(self._make_hook(path)))
        return self

    def _make_pre_hook(self, path: str):
        def pre_hook(module, args, kwargs):
            index = self._call_counts.get(path, 0)
            self._call_counts[path] = index + 1
            self._pending.setdefault(path, []).append(index)
            roots = [("args", tuple(args))]
            if kwargs:
                roots.append(("kwargs", dict(kwargs)))
            self._walk(roots, path, index, "input")
            return None

        return pre_hook

    def summary(self) -> dict:
        return {**super().summary(), "runner": RUNNER}


def module_paths_of(module: torch.nn.Module, graphs=frozenset()) -> List[str]:
    """The paths the capture knows: named_modules() of the unflattened module, root first, under
    contract 12.2's names, the control-flow graphs left out."""
    out: List[str] = []
    for name, _ in module.named_modules():
        if name.split(".")[0] in graphs:
            continue
        path = contract_path(name) if name else ROOT
        if path not in out:
            out.append(path)
    return out


def expand_patterns(patterns: Optional[Sequence[str]], paths: Sequence[str]) -> Optional[List[str]]:
    """--module values: exact paths, or fnmatch patterns matched against every path. A value that
    matches nothing is an error naming the closest paths (the tool's exit 2)."""
    if patterns is None:
        return None
    selected: List[str] = []
    for pattern in patterns:
        if pattern in paths:
            matched = [pattern]
        else:
            matched = [p for p in paths if fnmatch.fnmatchcase(p, pattern)]
        if not matched:
            close = difflib.get_close_matches(pattern, list(paths), n=3)
            raise ValueError(f"--module {pattern!r} matches no module; closest: {close}")
        selected.extend(p for p in matched if p not in selected)
    return selected


def keyword_order(ep) -> List[str]:
    """The root's keyword argument names in forward's order (the program's in_spec)."""
    try:
        spec = ep.call_spec.in_spec
        if spec is not None and spec.num_children == 2:
            kwargs_spec = spec.child(1) if hasattr(spec, "child") else spec.children_specs[1]
            if kwargs_spec.context:
                return list(kwargs_spec.context)
    except Exception:  # noqa: BLE001 (no in_spec of that shape: keep the file's order)
        pass
    return []


def ordered(kwargs: Dict[str, Any], order: Sequence[str]) -> Dict[str, Any]:
    out = {k: kwargs[k] for k in order if k in kwargs}
    out.update((k, v) for k, v in kwargs.items() if k not in out)
    return out


def load_exported(pt2: str):
    """torch.export.load(pt2), with torch's higher-order operators registered first: torch 2.6's
    load finds `torch.ops.higher_order.wrap_with_autocast` only once torch._higher_order_ops.wrap
    is imported (export does that; a fresh process that only loads does not, and fails with
    "Unsupported target type for node")."""
    import torch._higher_order_ops.wrap  # noqa: F401
    return torch.export.load(pt2)


def numpy_of(tensor):
    """A tensor's values as a numpy array: bfloat16, which numpy has not, as the float32 values
    it holds exactly (the dtype itself is kept beside the array where it matters)."""
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def load_program(pt2: str):
    """(ExportedProgram, unflattened module) of a .pt2."""
    ep = load_exported(pt2)
    return ep, torch.export.unflatten(ep)


def export_capture_runs(pt2: str, inputs_list, module_paths=None,
                        limits_list: Sequence[Optional[CaptureLimits]] = (None,)):
    """One capture per entry of limits_list, all watching the same forwards (one per inputs file
    or (args, kwargs) pair). Returns ([records per limits], exception or None)."""
    torch.set_num_threads(1)
    ep, unflat = load_program(pt2)
    graphs = graph_modules_of(ep)
    selected = expand_patterns(module_paths, module_paths_of(unflat, graphs))
    captures = [ExportCapture(unflat, module_paths=selected, limits=limits, graphs=graphs)
                for limits in limits_list]
    order = keyword_order(ep)
    calls = []
    for item in inputs_list:
        if isinstance(item, (str, os.PathLike)):
            args, kwargs = load_inputs(item)
        else:
            args, kwargs = tuple(item[0]), dict(item[1] or {})
        calls.append((args, ordered(kwargs, order)))
    error = None
    with contextlib.ExitStack() as entered:
        for capture in captures:
            entered.enter_context(capture)
        for args, kwargs in calls:
            try:
                with torch.inference_mode():  # as the tool runs (contract 12.1)
                    _call_watched(captures, args, kwargs)
            except Exception as exc:  # noqa: BLE001 - any exception of the program's forward
                error = exc
                break
    return [capture.records() for capture in captures], error


def export_capture_run(pt2: str, inputs_list, module_paths=None,
                       limits: Optional[CaptureLimits] = None):
    records, error = export_capture_runs(pt2, inputs_list, module_paths, [limits])
    return records[0], error


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pt2", help="a torch.export archive (.pt2)")
    parser.add_argument("--inputs", action="append", required=True)
    known, rest = parser.parse_known_args(argv)
    limits, module_paths, _eval = limits_from_flags(rest)
    try:
        records, error = export_capture_run(known.pt2, known.inputs, module_paths, limits)
    except ValueError as exc:  # an unknown --module
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for record in records:
        print(dumps(record))
    if error is not None:
        print(f"error: forward raised {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
