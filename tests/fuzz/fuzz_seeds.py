#!/usr/bin/env python3
"""Builds the seed corpus of each fuzz target (tests/fuzz) from the test fixtures.

usage: fuzz_seeds.py BUILD_DIR OUT_DIR

BUILD_DIR is a build tree whose fixtures are generated (target vin_fixtures); OUT_DIR/<target>/
gets copies of the files that reader takes, small ones only (mutating a 40 MB archive teaches a
fuzzer nothing a 100 kB one does not), plus the matching hostile corpus. The .npy target also gets
every member of the fixture .npz files, extracted. Deterministic; the fixtures are not touched.
"""
import io
import json
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_SEED_BYTES = 256 * 1024
sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
import safetensors_writer as st  # noqa: E402  (no torch needed for raw entries)


def nested_record(depth: int) -> str:
    """A ModelMetadata line whose model_type nests `depth` arrays (diff's limit is 64 levels)."""
    return ('{"record": "ModelMetadata", "model_type": ' + "[" * depth + "]" * depth +
            ', "total_parameters": 0, "trainable_parameters": 0}\n')


# profile's records (diff reads them): tinynet's, as `vin-inspect profile` wrote them
PROFILE_JSONL = '{"record": "ModuleProfile", "module_path": "<root>", "module_type": "tinynet.TinyNet", "calls": 1, "parameters": 34, "input_shapes": [[2, 3]], "output_shapes": [[2, 2], [2]], "flops": 96, "self_flops": 0, "time_ms": 0.647324, "self_time_ms": 0.20458100000000012, "allocated_bytes": 320, "peak_bytes": 72}\n{"record": "ModuleProfile", "module_path": "blocks.0", "module_type": "tinynet.Block", "calls": 1, "parameters": 12, "input_shapes": [[2, 3]], "output_shapes": [[2, 3]], "flops": 36, "self_flops": 0, "time_ms": 0.26837099999999997, "self_time_ms": 0.012222000000000066, "allocated_bytes": 96, "peak_bytes": 72}\n{"record": "ModuleProfile", "module_path": "blocks.0.lin", "module_type": "torch.nn.modules.linear.Linear", "calls": 1, "parameters": 12, "input_shapes": [[2, 3]], "output_shapes": [[2, 3]], "flops": 36, "self_flops": 36, "time_ms": 0.231592, "self_time_ms": 0.231592, "allocated_bytes": 24, "peak_bytes": 24}\n{"record": "ModuleProfile", "module_path": "blocks.0.act", "module_type": "torch.nn.modules.activation.ReLU", "calls": 2, "parameters": 0, "input_shapes": [[2, 3]], "output_shapes": [[2, 3]], "flops": 0, "self_flops": 0, "time_ms": 0.02455699999999994, "self_time_ms": 0.02455699999999994, "allocated_bytes": 48, "peak_bytes": 24}\n{"record": "ModuleProfile", "module_path": "blocks.1", "module_type": "tinynet.Block", "calls": 1, "parameters": 12, "input_shapes": [[2, 3]], "output_shapes": [[2, 3]], "flops": 36, "self_flops": 0, "time_ms": 0.038634, "self_time_ms": 0.023524999999999963, "allocated_bytes": 96, "peak_bytes": 48}\n{"record": "ModuleProfile", "module_path": "blocks.1.lin", "module_type": "torch.nn.modules.linear.Linear", "calls": 1, "parameters": 12, "input_shapes": [[2, 3]], "output_shapes": [[2, 3]], "flops": 36, "self_flops": 36, "time_ms": 0.010780000000000012, "self_time_ms": 0.010780000000000012, "allocated_bytes": 24, "peak_bytes": 24}\n{"record": "ModuleProfile", "module_path": "blocks.1.act", "module_type": "torch.nn.modules.activation.ReLU", "calls": 2, "parameters": 0, "input_shapes": [[2, 3]], "output_shapes": [[2, 3]], "flops": 0, "self_flops": 0, "time_ms": 0.004329000000000027, "self_time_ms": 0.004329000000000027, "allocated_bytes": 48, "peak_bytes": 24}\n{"record": "ModuleProfile", "module_path": "head", "module_type": "torch.nn.modules.linear.Linear", "calls": 1, "parameters": 6, "input_shapes": [[2, 3]], "output_shapes": [[2, 2]], "flops": 24, "self_flops": 24, "time_ms": 0.01455799999999996, "self_time_ms": 0.01455799999999996, "allocated_bytes": 16, "peak_bytes": 16}\n{"record": "ModuleProfile", "module_path": "norm", "module_type": "torch.nn.modules.batchnorm.BatchNorm1d", "calls": 1, "parameters": 4, "input_shapes": [[2, 2]], "output_shapes": [[2, 2]], "flops": 0, "self_flops": 0, "time_ms": 0.12117999999999995, "self_time_ms": 0.12117999999999995, "allocated_bytes": 32, "peak_bytes": 32}\n{"record": "OperatorProfile", "operator": "aten::linear", "calls": 3, "flops": 96, "time_ms": 0.24395400000000006}\n{"record": "OperatorProfile", "operator": "aten::add", "calls": 3, "flops": 0, "time_ms": 0.13137899999999997}\n{"record": "OperatorProfile", "operator": "aten::batch_norm", "calls": 1, "flops": 0, "time_ms": 0.098217}\n{"record": "OperatorProfile", "operator": "aten::relu", "calls": 4, "flops": 0, "time_ms": 0.021251999999999993}\n{"record": "OperatorProfile", "operator": "aten::mul", "calls": 1, "flops": 0, "time_ms": 0.010359000000000007}\n{"record": "OperatorProfile", "operator": "aten::argmax", "calls": 1, "flops": 0, "time_ms": 0.005901999999999963}\n{"record": "ProfileSummary", "device": "cpu", "warmup": 0, "runs": 1, "latency_ms": {"min": 51.284734, "median": 51.284734, "mean": 51.284734, "p90": 51.284734, "max": 51.284734}, "throughput": 19.498979949861884, "flops": 96, "instrumented_ms": 0.659757, "peak_bytes": 72, "parameter_bytes": 136, "buffer_bytes": 24, "modules": 9, "operators": 6}\n'


def metadata_record(total) -> str:
    return json.dumps({"record": "ModelMetadata", "model_type": "m", "total_parameters": total,
                       "trainable_parameters": 0}) + "\n"


# what the JSON readers learned in issue 41: integers past 64 bits (as numbers and as their
# digits), a byte-order mark, \udcXX escapes of names that are not UTF-8, a profile on the meta
# device (nulls) with FLOPs past int64
META_PROFILE_JSONL = (
    '{"record": "ModuleProfile", "module_path": "<root>", "module_type": "Wide", "calls": 1, '
    '"parameters": 272, "input_shapes": [[72057594037927936, 16]], "output_shapes": '
    '[[72057594037927936, 16]], "flops": 36893488147419103232, "self_flops": 0, "time_ms": null, '
    '"self_time_ms": null, "allocated_bytes": null, "peak_bytes": null}\n'
    '{"record": "OperatorProfile", "operator": "aten::linear", "calls": 1, "flops": '
    '36893488147419103232, "time_ms": null}\n'
    '{"record": "ProfileSummary", "device": "meta", "warmup": 0, "runs": 0, "latency_ms": null, '
    '"throughput": null, "flops": 36893488147419103232, "instrumented_ms": null, "peak_bytes": '
    'null, "parameter_bytes": 1088, "buffer_bytes": 0, "modules": 1, "operators": 1, "seed": 0}\n')
JSON_SEEDS = {
    "big-integer.jsonl": metadata_record(2 ** 64 + 1),
    "big-integer-digits.jsonl": metadata_record(str(2 ** 64 + 1)),
    "negative-big-integer.jsonl": metadata_record(-(2 ** 70)),
    "byte-order-mark.jsonl": "\ufeff" + metadata_record(3),
    "surrogate-escapes.jsonl": '{"record": "ModelMetadata", "model_type": "a\\udcff\\u007f", '
                               '"total_parameters": 0, "trainable_parameters": 0}\n'
                               '{"record": "ModuleMetadata", "path": "b\\udcfe", "module_type": '
                               '"c", "direct_parameters": 0, "trainable_parameters": 0, '
                               '"direct_buffers": 0, "training": true}\n',
    "meta-profile.jsonl": META_PROFILE_JSONL,
}


def legacy_archive(main_module: str, tensors: str = "[]") -> bytes:
    """A PyTorch 1.0-1.2 archive (version, model.json) around `main_module`'s JSON."""
    model = ('{"protoVersion": "3", "producerName": "pytorch", "mainModule": ' + main_module +
             ', "tensors": ' + tensors + "}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("m/version", "1\n")
        z.writestr("m/model.json", model)
    return buf.getvalue()


def chain(depth: int) -> str:
    return ('{"name": "root", "submodules": [' + '{"name": "a", "submodules": [' * depth +
            '{"name": "a"}' + "]}" * depth + "]}")


# the legacy reader's model.json at its depth limit (4,064 levels: two per module of a 2,000-deep
# tree) and past it, a deep value before a sibling key, and names that would collide
LEGACY_SEEDS = {
    "legacy-chain-2000.pt": legacy_archive(chain(1999)),
    "legacy-chain-2100.pt": legacy_archive(chain(2100)),
    "legacy-deep-sibling.pt": legacy_archive('{"name": "root", "extra": ' + '{"x": ' * 3000 + "1" +
                                             "}" * 3000 + ', "submodules": []}'),
    "legacy-deep-dtype.pt": legacy_archive(
        '{"name": "root", "parameters": [{"name": "w", "tensorId": "0"}]}',
        '[{"dims": ["2"], "offset": "0", "strides": ["1"], "requiresGrad": false, "dataType": ' +
        "[" * 4100 + '"FLOAT"' + "]" * 4100 + "}]"),
    "legacy-empty-name.pt": legacy_archive('{"name": "root", "submodules": [{"name": ""}]}'),
    "legacy-dotted-name.pt": legacy_archive('{"name": "root", "submodules": [{"name": "a.b"}]}'),
    "legacy-twin-names.pt": legacy_archive(
        '{"name": "root", "submodules": [{"name": "a"}, {"name": "a"}]}'),
}


# seeds at the parsers' depth and length limits, so that mutations cross them both ways
DEPTH_SEEDS = {
    "records": {"depth-62.jsonl": nested_record(62), "depth-66.jsonl": nested_record(66),
                "depth-5000.jsonl": nested_record(5000), "profile.jsonl": PROFILE_JSONL,
                **JSON_SEEDS},
    "safetensors": {
        "empty.safetensors": st.serialize([]),
        "two.safetensors": st.serialize(
            [("fc.weight", "F32", [2, 3], bytes(range(24))), ("fc.bias", "BF16", [2], b"abcd"),
             ("steps", "I64", [], b"\x07" + b"\0" * 7), ("none", "F16", [0, 4], b"")],
            metadata={"format": "pt"}),
        "every_dtype.safetensors": st.serialize(
            [(f"t{i}", code, [2], b"\x5a" * 2 * size)
             for i, (code, size) in enumerate(st.CODES.values())]),
    },
    "archive_structure": LEGACY_SEEDS,
    "archive_model": LEGACY_SEEDS,
    "archive_config": LEGACY_SEEDS,
    "yaml": {"flow-depth-1000.yaml": "!a.Config\nx: " + "[" * 1000 + "]" * 1000 + "\n",
             "block-depth-200.yaml": "!a.Config\n" + "".join(" " * i + f"k{i}:\n"
                                                             for i in range(200)) + " " * 200 + "v\n",
             "digits-4300.yaml": "!a.Config\nx: " + "7" * 4300 + "\n",
             "digits-4301.yaml": "!a.Config\nx: 0x" + "f" * 3600 + "\n"},
}


def small_files(folder: Path, patterns):
    for pattern in patterns:
        for path in sorted(folder.glob(pattern)):
            if path.is_file() and path.stat().st_size <= MAX_SEED_BYTES:
                yield path


def main() -> int:
    build, out = Path(sys.argv[1]), Path(sys.argv[2])
    fixtures, capture, config = build / "fixtures", build / "capture_fixtures", build / "config_fixtures"
    hostile = ROOT / "tests" / "hostile"
    real = ROOT / "tests" / "fixtures" / "real"  # archives people published, PyTorch 1.0 on
    pt2 = ROOT / "tests" / "fixtures" / "pt2"  # torch.export archives of torch 2.6 and 2.14
    sources = {
        "npy": [(fixtures / "inputs", ["*.npy"]), (capture, ["*.npy"]), (hostile / "inputs", ["*.npy"])],
        "npz": [(fixtures / "inputs", ["*.npz"]), (capture, ["*.npz"]), (hostile / "inputs", ["*.npz"])],
        "torch_save": [(fixtures / "inputs", ["*.pt"]), (capture, ["*.pt"]),
                       (hostile / "inputs", ["*.pt"])],
        "yaml": [(ROOT / "configs", ["*.yaml"]), (config, ["*.yaml"]), (hostile / "yaml", ["*"])],
        "archive_config": [(fixtures, ["*.pt", "*.zip"]), (hostile / "archive", ["*"]),
                           (real, ["*.pt"])],
        "archive_model": [(fixtures, ["*.pt", "*.zip"]), (hostile / "archive", ["*"]),
                          (real, ["*.pt"])],
        "archive_structure": [(fixtures, ["*.pt", "*.zip"]), (hostile / "archive", ["*"]),
                              (real, ["*.pt"]), (pt2 / "torch-2.6", ["*.pt2"]),
                              (pt2 / "torch-2.14", ["*.pt2"]), (pt2 / "published", ["*.pt2"])],
        "pickle": [],  # the data.pkl of each small fixture archive, extracted below
        # and the same data.pkl files
        "scan": [(hostile / "inputs", ["*.pt", "*.pkl"]), (hostile / "archive", ["*.pt"]),
                 (hostile / "scan_published", ["*.pkl", "*.zip", "*.pt", "*.bin", "*.npy"]),
                 (real, ["*quantized*", "*silero_vad.jit"])],
        "export_program": [],  # the .pt2 fixtures' members, extracted below
        "safetensors": [(hostile / "weights", ["*"]), (real, ["*.safetensors"])],
        # torch.save files, zip, legacy and tar: the inputs fixtures (a state dict in each format)
        "torch_save_weights": [(fixtures / "inputs", ["*.pt"]), (capture, ["*.pt"])],
        "records": [(ROOT / "tests" / "cli" / "golden", ["*.jsonl"]), (config, ["*.jsonl"]),
                    (hostile / "records", ["*"])],
    }
    for target, places in sources.items():
        dest = out / target
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir(parents=True)
        count = 0
        for folder, patterns in places:
            for path in small_files(folder, patterns):
                shutil.copyfile(path, dest / f"{folder.name}-{path.name}")
                count += 1
        for name, content in DEPTH_SEEDS.get(target, {}).items():
            if isinstance(content, bytes):
                (dest / name).write_bytes(content)
            else:
                (dest / name).write_text(content, encoding="utf-8")
            count += 1
        if target == "npy":
            for npz in small_files(fixtures / "inputs", ["*.npz"]):
                try:
                    with zipfile.ZipFile(npz) as z:
                        for member in z.namelist():
                            (dest / f"{npz.stem}-{Path(member).name}").write_bytes(z.read(member))
                            count += 1
                except (zipfile.BadZipFile, OSError, ValueError):
                    pass  # the deliberately broken fixtures
        if target == "export_program":
            # each .pt2 fixture's members behind the selector byte of export_program_fuzzer:
            # bit 1 the template (0: torch 2.14's PT2 Archive, 1: torch 2.6's flat zip), bit 0
            # the member (the program; the weights config or the nested state dict)
            for folder, selector in ((pt2 / "torch-2.14", 0), (pt2 / "torch-2.6", 2)):
                for archive in small_files(folder, ["*.pt2"]):
                    with zipfile.ZipFile(archive) as z:
                        for member in z.namelist():
                            picked = (0 if member.endswith(("models/model.json",
                                                            "serialized_exported_program.json"))
                                      else 1 if member.endswith(("model_weights_config.json",
                                                                 "serialized_state_dict.pt"))
                                      else None)
                            if picked is not None:
                                name = f"{folder.name}-{archive.stem}-{Path(member).name}"
                                (dest / name).write_bytes(bytes([selector | picked]) +
                                                          z.read(member))
                                count += 1
        if target in ("pickle", "scan"):
            for archive in small_files(fixtures, ["*.pt"]):
                try:
                    with zipfile.ZipFile(archive) as z:
                        for member in z.namelist():
                            if member.endswith(".pkl"):
                                name = f"{archive.stem}-{member.replace('/', '-')}"
                                (dest / name).write_bytes(z.read(member))
                                count += 1
                except (zipfile.BadZipFile, OSError, ValueError):
                    pass  # the deliberately broken fixtures
        if count == 0:
            print(f"fuzz_seeds: no seeds for {target} under {build}", file=sys.stderr)
            return 1
        print(f"fuzz_seeds: {target}: {count} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
