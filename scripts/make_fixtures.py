#!/usr/bin/python3
"""Writes the TorchScript archives and bad-input files that the tests read.

usage: make_fixtures.py OUTDIR [--example PATH]

Every model is built with a fixed seed, scripted with torch.jit.script and saved with
torch.jit.save, so the archives are what a user's export produces. With --example, only the
bundled example archive (examples/convnet.pt, committed) is written to PATH.
Run with Debian's /usr/bin/python3 (python3-torch, python3-torchvision).
"""
import argparse
import collections
import io
import os
import sys
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import fixture_models as fm  # noqa: E402


def save_scripted(model: torch.nn.Module, path: str) -> None:
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(model), path)


def save_other_exports(out: str) -> None:
    """Archives made the other ways users make them: traced, frozen, dynamically and statically
    quantized; and one whose __setstate__ inspect-model cannot read without running it."""
    torch.manual_seed(0)
    convnet = fm.ConvNet().eval()
    traced = torch.jit.trace(convnet, torch.zeros(1, 3, 8, 8))
    torch.jit.save(traced, os.path.join(out, "traced.pt"))
    frozen = torch.jit.freeze(torch.jit.script(convnet))  # parameters become constants
    torch.jit.save(frozen, os.path.join(out, "frozen.pt"))
    quantized = torch.quantization.quantize_dynamic(
        torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)),
        {torch.nn.Linear}, dtype=torch.qint8)
    torch.jit.save(torch.jit.script(quantized), os.path.join(out, "quantized.pt"))
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(fm.static_quantized()), os.path.join(out, "static_quantized.pt"))
    torch.jit.save(torch.jit.script(fm.ComputedState().eval()), os.path.join(out, "computed_state.pt"))
    # forwards that never end (capture --timeout)
    torch.jit.save(torch.jit.script(fm.Forever()), os.path.join(out, "forever.pt"))
    torch.jit.save(torch.jit.script(fm.Spin()), os.path.join(out, "spin.pt"))


def build(name: str) -> torch.nn.Module:
    torch.manual_seed(0)
    if name == "everything":
        return fm.Everything()
    if name == "deep":
        return fm.Deep(40)
    if name == "wide":
        return fm.Wide(1684)  # 2 + 3 * 1684 = 5,054 modules
    if name == "dict_model":
        return fm.DictModel().eval()
    if name == "convnet":
        return fm.ConvNet().eval()
    if name == "transformer":
        return fm.TinyTransformer()
    if name == "nan_net":
        return fm.NanNet().eval()
    import torchvision  # only the torchvision fixtures need it

    if name == "resnet18":
        return torchvision.models.resnet18().eval()
    if name == "mobilenet_v3_small":
        return torchvision.models.mobilenet_v3_small()  # left in training mode
    if name == "squeezenet1_1":
        return torchvision.models.squeezenet1_1().eval()
    if name == "efficientnet_b0":
        return torchvision.models.efficientnet_b0().eval()
    raise KeyError(name)


MODELS = ["everything", "deep", "wide", "dict_model", "convnet", "transformer", "nan_net", "resnet18",
          "mobilenet_v3_small", "squeezenet1_1", "efficientnet_b0"]


CONFIG_YAML = """!fixture_models.ConvNetConfig
target_type: !!python/name:fixture_models.ConvNet ''
classes: 10
__declared__:
  fixture_models.ConvNetConfig:
    target_type: Type[fixture_models.ConvNet]
    classes: int
"""


def save_with_config(out: str) -> None:
    """The example model with a config rendering inside (torch.jit.save's _extra_files)."""
    torch.manual_seed(0)
    scripted = torch.jit.script(fm.ConvNet().eval())
    torch.jit.save(scripted, os.path.join(out, "with_config.pt"),
                   _extra_files={"config.yaml": CONFIG_YAML})


def write_bad_inputs(out: str) -> None:
    """Files that are not readable TorchScript archives, each for one error message."""
    torch.manual_seed(0)
    # a torch.save'd state dict: a zip, but no code/ and no constants.pkl
    torch.save(fm.Block(3).state_dict(), os.path.join(out, "state_dict.pt"))
    # a zip that has nothing to do with torch
    with zipfile.ZipFile(os.path.join(out, "plain.zip"), "w") as z:
        z.writestr("readme.txt", "hello\n")
    with open(os.path.join(out, "everything.pt"), "rb") as f:
        archive = f.read()
    # a download cut short
    with open(os.path.join(out, "truncated.pt"), "wb") as f:
        f.write(archive[: len(archive) // 2])
    # the same archive, claiming a file format version newer than LibTorch 1.13 reads
    src = zipfile.ZipFile(io.BytesIO(archive))
    with zipfile.ZipFile(os.path.join(out, "newer_version.pt"), "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/version"):
                data = b"99\n"
            dst.writestr(info, data)
    # the same archive as if saved on a GPU: every storage located on cuda:0 (inspect-model reads
    # its structure without LibTorch, so without CUDA)
    src = zipfile.ZipFile(io.BytesIO(archive))  # afresh: writestr above updated its ZipInfos
    with zipfile.ZipFile(os.path.join(out, "cuda_tensors.pt"), "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                assert b"X\x03\x00\x00\x00cpu" in data
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            dst.writestr(info, data)
    open(os.path.join(out, "empty.pt"), "wb").close()
    with open(os.path.join(out, "text.pt"), "w") as f:
        f.write("this is not an archive\n")


def write_input_files(out: str) -> None:
    """Inputs files for the readers: every numpy dtype and layout, torch.save shapes, bad files."""
    import numpy as np

    d = os.path.join(out, "inputs")
    os.makedirs(d, exist_ok=True)
    base = np.arange(6).reshape(2, 3)
    arrays = {f"{kind}": base.astype(kind) for kind in
              ["<f2", "<f4", "<f8", "<i1", "<i2", "<i4", "<i8", "<u1", "|b1", "<c8", "<c16"]}
    big = {kind: base.astype(kind) for kind in [">f2", ">f4", ">f8", ">i2", ">i4", ">i8", ">c8", ">c16"]}
    names = {k.replace("<", "le_").replace(">", "be_").replace("|", "na_"): v
             for k, v in {**arrays, **big}.items()}
    np.savez(os.path.join(d, "dtypes.npz"), **names)
    np.savez_compressed(os.path.join(d, "dtypes_compressed.npz"), **names)
    np.savez(os.path.join(d, "layouts.npz"),
             fortran=np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4)),
             scalar=np.array(2.5, dtype=np.float64), empty=np.zeros((0, 3), np.float32),
             int64_extremes=np.array([-2**63, 2**63 - 1, 2**53 + 1], dtype=np.int64),
             nonfinite=np.array([np.nan, np.inf, -np.inf, -0.0], dtype=np.float32))
    np.save(os.path.join(d, "single.npy"), np.arange(4, dtype=np.float32))
    # images for resnet18 and convnet: float32, and numpy's default float64 (a forward failure)
    image = np.random.RandomState(5).standard_normal((1, 3, 32, 32))
    np.savez(os.path.join(d, "image32.npz"), image.astype(np.float32))
    np.savez(os.path.join(d, "image32_float64.npz"), image)
    # positional and keyword arguments for the Everything model: forward(x, tokens)
    x = np.linspace(-1, 1, 2 * 2 * 5, dtype=np.float32).reshape(2, 2, 5)
    tokens = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64)
    np.savez(os.path.join(d, "everything_positional.npz"), x, tokens)
    np.savez(os.path.join(d, "everything_keyword.npz"), x, tokens=tokens)
    np.savez(os.path.join(d, "everything_unknown_name.npz"), x, tokens, colour=tokens)
    np.savez(os.path.join(d, "everything_missing.npz"), x)
    np.savez(os.path.join(d, "everything_gap.npz"), arr_0=x, arr_2=tokens)
    # capture --stats: non-finite and zero elements in x, checked against numpy
    x_stats = x.copy()
    x_stats[0, 0, :4] = [np.nan, np.inf, -np.inf, 0.0]
    x_stats[1, 1, 4] = np.nan
    np.savez(os.path.join(d, "everything_stats.npz"), x_stats, tokens * 0 + np.array([[0, 2, 9]]))
    np.savez(os.path.join(d, "nan_net.npz"), np.array([[1.0, -2.0, 3.0], [0.5, 0.25, -1.0]], np.float32))
    # token 99 is outside the embedding's 10 rows: the forward raises inside `embed`
    np.savez(os.path.join(d, "everything_bad_tokens.npz"), x, tokens=tokens * 0 + 99)
    tx, tt = torch.from_numpy(x), torch.from_numpy(tokens)
    torch.save((tx, tt), os.path.join(d, "everything_tuple.pt"))
    torch.save([tx, tt], os.path.join(d, "everything_list.pt"))
    torch.save({"x": tx, "tokens": tt}, os.path.join(d, "everything_dict.pt"))
    # what many training scripts save: an OrderedDict (LibTorch's unpickler made it None)
    torch.save(collections.OrderedDict(x=tx, tokens=tt), os.path.join(d, "everything_ordered.pt"))
    # an nn.Parameter and a list of one tensor (SETITEM/APPEND, which LibTorch 1.13 lacked)
    torch.save({"x": torch.nn.Parameter(tx), "tokens": tt}, os.path.join(d, "everything_parameter.pt"))
    torch.save({"args": (tx,), "kwargs": {"tokens": tt}}, os.path.join(d, "everything_split.pt"))
    torch.save(tx, os.path.join(d, "single_tensor.pt"))
    # Python pickles these with SETITEM / APPEND, which LibTorch's unpickler lacks
    torch.save({"v": tx}, os.path.join(d, "single_key_dict.pt"))
    torch.save([tx], os.path.join(d, "single_item_list.pt"))
    torch.save({"x": tx.to_sparse(), "tokens": tt}, os.path.join(d, "sparse.pt"))
    torch.save({"x": torch.nn.Linear(2, 2)}, os.path.join(d, "module_pickle.pt"))
    # bad .npy/.npz files
    np.savez(os.path.join(d, "object.npz"), np.array([1, "a", None], dtype=object))
    np.savez(os.path.join(d, "uint16.npz"), np.arange(3, dtype=np.uint16))
    np.savez(os.path.join(d, "strings.npz"), np.array(["a", "b"]))
    np.savez(os.path.join(d, "structured.npz"), np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    good = io.BytesIO()
    np.save(good, np.arange(6, dtype=np.float32).reshape(2, 3))
    raw = good.getvalue()
    header_end = raw.index(b"\n") + 1
    with zipfile.ZipFile(os.path.join(d, "shape_mismatch.npz"), "w") as z:
        z.writestr("arr_0.npy", raw.replace(b"(2, 3)", b"(9, 3)"))
    with zipfile.ZipFile(os.path.join(d, "huge_shape.npz"), "w") as z:
        z.writestr("arr_0.npy", raw.replace(b"(2, 3), }", b"(1000000000000000,)}"))  # 10**15
    with zipfile.ZipFile(os.path.join(d, "too_long.npz"), "w") as z:
        z.writestr("arr_0.npy", raw + b"\0\0\0\0")
    with zipfile.ZipFile(os.path.join(d, "bad_magic.npz"), "w") as z:
        z.writestr("arr_0.npy", b"NOTNUMPY" + raw[8:])
    with zipfile.ZipFile(os.path.join(d, "not_npy_member.npz"), "w") as z:
        z.writestr("notes.txt", "hello")
    np.savez_compressed(os.path.join(d, "deflated_one.npz"), np.arange(1000, dtype=np.float64))
    with open(os.path.join(d, "deflated_one.npz"), "rb") as f:
        data = f.read()
    with open(os.path.join(d, "truncated.npz"), "wb") as f:
        f.write(data[: len(data) - 40])  # the directory at the end is cut
    # a member whose stored bytes are cut short, the zip directory intact
    member = raw[: header_end + 8]
    with zipfile.ZipFile(os.path.join(d, "short_member.npz"), "w") as z:
        z.writestr("arr_0.npy", member)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?")
    parser.add_argument("--example", help="write only the bundled example archive to this path")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.example:
        save_scripted(build("convnet"), args.example)
        return
    if not args.outdir:
        parser.error("OUTDIR is required")
    os.makedirs(args.outdir, exist_ok=True)
    for name in args.models.split(","):
        save_scripted(build(name), os.path.join(args.outdir, name + ".pt"))
    if "everything" in args.models.split(","):
        save_other_exports(args.outdir)
        save_with_config(args.outdir)
        write_bad_inputs(args.outdir)
        write_input_files(args.outdir)


if __name__ == "__main__":
    main()
