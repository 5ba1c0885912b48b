"""What `vin-inspect profile` must count, computed on the eager model with real PyTorch.

flops_per_module(model, args) runs the eager model once without autograd under a
TorchDispatchMode that counts FLOPs with the formulas of torch.utils.flop_counter.FlopCounterMode
(PyTorch 2.6) and forward hooks on every module that say which module calls are open: per module
path ("<root>" for the root) its calls, its FLOPs (inclusive: every call, its submodules' too)
and its self FLOPs (outside its submodules' calls). The dispatch mode sees each operator once,
below the composite operators that decompose into it (aten::linear reaches it as aten::addmm),
which is contract 8's "once per dispatch stack".

flop_counter_mode_per_module(model, args) (torch 2.1 and later) asks FlopCounterMode itself for
the inclusive FLOPs per module, with the CPU attention kernel it misses added through its
custom_mapping, so that the counter above is checked against PyTorch's own.
"""
import math
from collections import defaultdict

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ROOT = "<root>"

COUNTED = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::convolution",
           "aten::_convolution", "aten::_scaled_dot_product_efficient_attention",
           "aten::_scaled_dot_product_flash_attention",
           "aten::_scaled_dot_product_cudnn_attention",
           "aten::_scaled_dot_product_flash_attention_for_cpu"}

# Fused CPU kernels that a Python dispatch mode sees as one uncounted operator while the
# counted operators they call inside are dispatched below its reach: LibTorch's RecordFunction
# sees those, and profile counts them (contract 8's rule; docs/profile.md). A module whose calls
# run one is "opaque": the eager count of it, and of what holds it, is not profile's.
OPAQUE = {"aten::_native_multi_head_attention", "aten::_transformer_encoder_layer_fwd"}


def _shape(value):
    if not isinstance(value, torch.Tensor) or value.is_nested:
        return None
    return list(value.shape)


def _mm(a, b):
    m, k = a
    _, n = b
    return 2 * m * n * k


def _bmm(a, b):
    batch, m, k = a
    _, _, n = b
    return 2 * batch * m * n * k


def _conv(x, w, out, transposed):
    spatial = (x if transposed else out)[2:]
    return 2 * x[0] * math.prod(w) * math.prod(spatial)


def _attention(q, k, v):
    b, h, s_q, d_q = q
    s_k = k[2]
    d_v = v[3]
    return 2 * b * h * s_q * s_k * (d_q + d_v)


def operator_flops(name, args, kwargs, out):
    """FLOPs of one call of the operator `name` ("aten::addmm"), as flop_rules counts them."""
    def arg(i, key):
        if i < len(args):
            return args[i]
        return kwargs.get(key)

    if name not in COUNTED:
        return 0
    shapes = [_shape(a) for a in args]
    first_out = out[0] if isinstance(out, (tuple, list)) else out
    if name == "aten::mm":
        return _mm(shapes[0], shapes[1])
    if name == "aten::addmm":
        return _mm(shapes[1], shapes[2])
    if name == "aten::bmm":
        return _bmm(shapes[0], shapes[1])
    if name == "aten::baddbmm":
        return _bmm(shapes[1], shapes[2])
    if name in ("aten::convolution", "aten::_convolution"):
        return _conv(shapes[0], shapes[1], _shape(first_out), bool(arg(6, "transposed")))
    if name in ("aten::_scaled_dot_product_efficient_attention",
                "aten::_scaled_dot_product_flash_attention",
                "aten::_scaled_dot_product_cudnn_attention",
                "aten::_scaled_dot_product_flash_attention_for_cpu"):
        return _attention(shapes[0], shapes[1], shapes[2])
    return 0


class _Counter(TorchDispatchMode):
    def __init__(self, open_calls, flops, self_flops, totals, opaque):
        super().__init__()
        self.open_calls = open_calls
        self.flops = flops
        self.self_flops = self_flops
        self.totals = totals
        self.opaque = opaque

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func._schema.name
        if name in OPAQUE:
            self.opaque.update(self.open_calls)
        n = operator_flops(name, args, kwargs, out)
        if n:
            self.totals["flops"] += n
            for path in set(self.open_calls):
                self.flops[path] += n
            if self.open_calls:
                self.self_flops[self.open_calls[-1]] += n
        return out


def flops_per_module(model, args, kwargs=None):
    """{path: {"calls", "flops", "self_flops", "opaque"}} of every module called, and the total
    FLOPs (None when a module ran an OPAQUE kernel: profile counts more there)."""
    open_calls = []
    calls = defaultdict(int)
    flops = defaultdict(int)
    self_flops = defaultdict(int)
    totals = {"flops": 0}
    opaque = set()
    handles = []
    for name, module in model.named_modules():
        path = name or ROOT

        def enter(_module, _inputs, path=path):
            calls[path] += 1
            open_calls.append(path)

        def leave(_module, _inputs, _output, path=path):
            open_calls.pop()

        handles.append(module.register_forward_pre_hook(enter))
        handles.append(module.register_forward_hook(leave))
    try:
        with torch.no_grad(), _Counter(open_calls, flops, self_flops, totals, opaque):
            model(*args, **(kwargs or {}))
    finally:
        for h in handles:
            h.remove()
    per_module = {path: {"calls": calls[path], "flops": flops[path],
                         "self_flops": self_flops[path], "opaque": path in opaque}
                  for path in calls}
    return per_module, None if opaque else totals["flops"]


def flop_counter_mode_per_module(model, args, kwargs=None):
    """{path: inclusive FLOPs} by torch.utils.flop_counter.FlopCounterMode (torch >= 2.1)."""
    from torch.utils.flop_counter import FlopCounterMode
    aten = torch.ops.aten
    custom = {}
    if hasattr(aten, "_scaled_dot_product_flash_attention_for_cpu"):
        def cpu_attention(query, key, value, *args, out_shape=None, **kwargs):
            return _attention(list(query), list(key), list(value))
        custom[aten._scaled_dot_product_flash_attention_for_cpu] = cpu_attention
    counter = FlopCounterMode(display=False, custom_mapping=custom)
    with torch.no_grad(), counter:
        model(*args, **(kwargs or {}))
    # FlopCounterMode names a module "RootClass.child.grandchild"; the root by its class
    names = {}
    root_name = type(model).__name__
    for name, _module in model.named_modules():
        names[root_name + ("." + name if name else "")] = name or ROOT
    out = {}
    for key, per_op in counter.get_flop_counts().items():
        if key in names:
            out[names[key]] = sum(per_op.values())
    return out, counter.get_total_flops()


def rule_flops_from_profiler(module, args):
    """Contract 8's rule applied to what LibTorch's RecordFunction sees, read with
    torch.autograd.profiler on `module` (a loaded archive): the FLOPs of every counted operator
    no counted operator encloses, from the shapes the profiler records. For the fused kernels an
    eager dispatch mode cannot see into (OPAQUE). Matrix products only: a convolution's
    output shape is not among the profiler's records."""
    with torch.no_grad(), torch.autograd.profiler.profile(record_shapes=True) as prof:
        module(*args)
    total = 0
    for event in prof.function_events:
        if event.name not in COUNTED:
            continue
        parent = event.cpu_parent
        while parent is not None and parent.name not in COUNTED:
            parent = parent.cpu_parent
        if parent is not None:
            continue
        shapes = event.input_shapes
        if event.name == "aten::mm":
            total += _mm(shapes[0], shapes[1])
        elif event.name == "aten::addmm":
            total += _mm(shapes[1], shapes[2])
        elif event.name == "aten::bmm":
            total += _bmm(shapes[0], shapes[1])
        elif event.name == "aten::baddbmm":
            total += _bmm(shapes[1], shapes[2])
        else:
            raise NotImplementedError(event.name)
    return total
