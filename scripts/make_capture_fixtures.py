#!/usr/bin/python3
"""Writes the archives, input files and manifest of the capture parity test.

usage: make_capture_fixtures.py OUTDIR

For every model of scripts/capture_models.py: NAME.pt (torch.jit.save(torch.jit.script(model)),
model built by capture_models.build(NAME) with a fixed seed) and its input files (.npz written
with numpy.savez / savez_compressed, .pt written with torch.save), then
OUTDIR/capture_manifest.json: {"cases": [{"name", "model", "archive", "inputs", "flags",
"expect_exit"}, ...]}, read by tests/reference/compare_capture.py.
Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import capture_models as cm  # noqa: E402

MANIFEST = "capture_manifest.json"


def save_archives(out: str) -> None:
    for name in cm.BUILDERS:
        torch.jit.save(torch.jit.script(cm.build(name)), os.path.join(out, name + ".pt"))


def write_inputs(out: str) -> None:
    def path(name: str) -> str:
        return os.path.join(out, name)

    rng = np.random.RandomState(1234)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    g = torch.Generator().manual_seed(1234)
    t32 = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731

    # kwnet: positional tensor, keywords (0-d scalars and a tensor) in non-schema order
    np.savez(path("kwnet_inputs.npz"), f32(2, 4), flag=np.array(True), mask=f32(2, 4),
             n=np.array(3, dtype=np.int64), alpha=np.array(0.25))
    torch.save({"args": (t32(3, 4),), "kwargs": {"mask": t32(3, 4), "n": 1}},
               path("kwnet_argskwargs.pt"))
    torch.save({"alpha": 2.0, "x": t32(1, 4)}, path("kwnet_kwonly.pt"))  # keywords only
    torch.save(t32(2, 4), path("kwnet_tensor.pt"))
    torch.save([t32(2, 4), 1, 0.75, True], path("kwnet_list.pt"))

    # nested: two positional tensors, as npz and as a torch.save tuple
    np.savez(path("nested_inputs.npz"), f32(2, 4), f32(2, 2))
    torch.save((t32(3, 4), t32(3, 2)), path("nested_tuple.pt"))

    # hooknet
    np.savez(path("hooknet_inputs.npz"), f32(4, 3))
    torch.save(t32(4, 3), path("hooknet_more.pt"))

    # hookkw: the scalar positional (see capture_models.HookKw)
    np.savez(path("hookkw_positional.npz"), f32(2, 3), np.array(-0.5))

    # raisenet: a good input, then one that makes Guard raise
    ok = f32(2, 3)
    np.savez(path("raisenet_ok.npz"), ok)
    np.savez(path("raisenet_bad.npz"), ok * 1000.0)

    # dtypenet: every dtype numpy writes, big-endian, Fortran order, 0-d, empty, scalars
    arrays = [
        np.array([0.1, -2.5, 65504.0, np.inf], dtype="<f2"),
        np.array([np.nan, np.inf, -np.inf, 1e-45, 3.4e38], dtype="<f4"),
        np.array([[0.1, 1.0 / 3.0], [-0.0, 5e-324]], dtype="<f8"),
        np.array([-128, 127, 0], dtype="<i1"),
        np.array([-32768, 32767], dtype="<i2"),
        np.array([[-2 ** 31, 2 ** 31 - 1]], dtype=">i4"),
        np.array([2 ** 62 + 1, -2 ** 63, 2 ** 63 - 1], dtype="<i8"),
        np.array([0, 255, 128], dtype="|u1"),
        np.array([True, False, True], dtype="|b1"),
        np.array([1 + 2j, -0.5j], dtype="<c8"),
        np.array([[1 - 1j, 0]], dtype="<c16"),
        np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
        np.array([[1.5, -2.25], [1e300, 7.0]], dtype=">f8"),
        np.array(3.5, dtype=np.float32),  # 0-d where forward declares Tensor: stays a tensor
        np.zeros((0, 3), dtype=np.float32),
        np.array(4, dtype=np.int64),  # 0-d where forward declares int: becomes 4
    ]
    np.savez_compressed(path("dtypes.npz"), *arrays, w=np.array(0.5), flag=np.array(False))
    pt_args = (
        torch.tensor([0.1, 3.14159, -1e30], dtype=torch.bfloat16),
        torch.arange(6, dtype=torch.float32).reshape(2, 3).t(),  # not contiguous
        torch.tensor([1e-310, -7.5], dtype=torch.float64),
        torch.tensor([5], dtype=torch.int8),
        torch.tensor([-7], dtype=torch.int16),
        torch.tensor([123456], dtype=torch.int32),
        torch.tensor([[2 ** 53 + 1]], dtype=torch.int64),
        torch.tensor([7], dtype=torch.uint8),
        torch.tensor([[False, True]]),
        torch.tensor([1 + 1j], dtype=torch.complex64),
        torch.tensor([2 - 3j], dtype=torch.complex128),
        torch.tensor([[1.0, 2.0], [3.0, 4.0]]).t()[1],  # a strided view
        torch.tensor([0.5, float("nan")], dtype=torch.float16),
        torch.tensor(-1.25),
        torch.empty(2, 0, dtype=torch.int64),
        2,
    )
    torch.save({"args": pt_args, "kwargs": {"flag": True, "w": -3.0}}, path("dtypes.pt"))
    quantized = list(pt_args)
    quantized[1] = torch.quantize_per_tensor(torch.tensor([0.5, 1.0]), 0.1, 3, torch.quint8)
    torch.save(tuple(quantized), path("dtypes_quantized.pt"))

    # exotic: made tensors of odd dtypes/layouts/devices; log/1/x give NaN and infinities
    torch.save((torch.tensor([[1.5, 0.0, -2.0], [0.25, 4.0, 100.0]]), torch.tensor([True, False]),
                torch.tensor([-3, 4], dtype=torch.int16)), path("exotic_inputs.pt"))

    # interfaces: a module called through an interface type, and a submodule's helper method
    np.savez(path("interfaces_input.npz"), f32(2, 3))

    # resnet18: one 1x3x32x32 image
    np.savez(path("resnet18_input.npz"), f32(1, 3, 32, 32))


def case(name, model, inputs, flags=(), expect_exit=0) -> dict:
    return {"name": name, "model": model, "archive": model + ".pt", "inputs": list(inputs),
            "flags": list(flags), "expect_exit": expect_exit}


CASES = [
    case("kwnet", "kwnet", ["kwnet_inputs.npz"]),
    case("kwnet_pt_forms", "kwnet",
         ["kwnet_argskwargs.pt", "kwnet_kwonly.pt", "kwnet_tensor.pt", "kwnet_list.pt"]),
    case("kwnet_max_tensors", "kwnet", ["kwnet_inputs.npz", "kwnet_tensor.pt"],
         ["--max-tensors", "20"]),
    # root input walk: args, x, kwargs, n, alpha, flag, mask (schema order, not the file's)
    case("kwnet_nodes7", "kwnet", ["kwnet_inputs.npz"], ["--max-traversal-nodes", "7"]),
    case("kwnet_nodes6", "kwnet", ["kwnet_inputs.npz"], ["--max-traversal-nodes", "6"]),
    case("kwnet_nodes2", "kwnet", ["kwnet_inputs.npz", "kwnet_kwonly.pt"],
         ["--max-traversal-nodes", "2"]),
    case("nested", "nested", ["nested_inputs.npz", "nested_tuple.pt"]),
    case("nested_depth1", "nested", ["nested_inputs.npz"], ["--max-container-depth", "1"]),
    case("nested_depth2", "nested", ["nested_inputs.npz"], ["--max-container-depth", "2"]),
    case("nested_nodes4", "nested", ["nested_inputs.npz"], ["--max-traversal-nodes", "4"]),
    case("nested_modules", "nested", ["nested_inputs.npz"], ["--module", "mix", "--module", "split"]),
    case("hooknet", "hooknet", ["hooknet_inputs.npz", "hooknet_more.pt"]),
    case("subhooks", "subhooks", ["hooknet_inputs.npz", "hooknet_more.pt"]),
    case("subhooks_eval", "subhooks", ["hooknet_inputs.npz", "hooknet_more.pt"],
         ["--eval", "--module", "<root>", "--module", "lin", "--module", "bump", "--module", "norm"]),
    case("hookkw_positional", "hookkw", ["hookkw_positional.npz"]),
    case("raisenet", "raisenet", ["raisenet_ok.npz", "raisenet_bad.npz", "raisenet_ok.npz"],
         expect_exit=1),
    case("raisenet_guard", "raisenet", ["raisenet_ok.npz", "raisenet_bad.npz"],
         ["--module", "inner.guard", "--module", "<root>"], expect_exit=1),
    case("dtypenet", "dtypenet", ["dtypes.npz", "dtypes.pt"],
         ["--max-tensors", "1000", "--max-samples-per-tensor", "8"]),
    case("dtypenet_bytes", "dtypenet", ["dtypes.npz"],  # float64 gets 0 of 7 bytes left, goes on
         ["--max-bytes", "35", "--max-samples-per-tensor", "5"]),
    case("dtypenet_quantized_input", "dtypenet", ["dtypes_quantized.pt"], ["--module", "<root>"]),
    case("exotic", "exotic", ["exotic_inputs.pt"]),
    case("exotic_tiny_bytes", "exotic", ["exotic_inputs.pt"],
         ["--max-samples-per-tensor", "1", "--max-bytes", "3", "--module", "maker"]),
    case("interfaces", "interfaces", ["interfaces_input.npz"]),
    case("resnet18", "resnet18", ["resnet18_input.npz"]),
    case("resnet18_all", "resnet18", ["resnet18_input.npz"],
         ["--max-tensors", "100000", "--max-samples-per-tensor", "4", "--max-bytes", "1000000"]),
]


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    save_archives(out)
    write_inputs(out)
    with open(os.path.join(out, MANIFEST), "w") as f:
        json.dump({"cases": CASES}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
