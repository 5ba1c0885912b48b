#!/usr/bin/python3
"""Writes the bad-input corpus under tests/hostile/ (committed; rerun to regenerate).

usage: make_hostile_corpus.py [OUTDIR]        default: tests/hostile next to this script's repo

Each file is something a reader must refuse cleanly: truncated, bit-flipped, wrong magic, absurd
or overflowing sizes, object dtypes, pickles that name code to run, alias bombs, deep nesting,
wrong root types, non-UTF-8 names, empty files. The folder says which reader gets it:
archive/ (inspect-model and inspect-config), inputs/ (capture --inputs), yaml/ (inspect-config),
records/ (diff). tests/hostile/run_hostile.py runs them.
"""
import io
import os
import pickle
import struct
import sys
import zipfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_models as fm  # noqa: E402

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "hostile")


def write(folder, name, data):
    d = os.path.join(ROOT, folder)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def zip_bytes(members):
    """A stored zip of (name, data) members with fixed timestamps, so the corpus is reproducible."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def with_bad_memo_index(pickled):
    """The pickle with EMPTY_LIST, LONG_BINPUT 0x7fffffff, POP after its PROTO: harmless to
    Python, but LibTorch 1.13's unpickler would size its memo table for 2^31 entries (32 GiB)."""
    assert pickled[:1] == b"\x80"
    return pickled[:2] + b"]r\xff\xff\xff\x7f0" + pickled[2:]


def replace_members(archive, transform):
    """`archive` with each member's bytes passed through transform(name, data)."""
    z = zipfile.ZipFile(io.BytesIO(archive))
    return zip_bytes([(n, transform(n, z.read(n))) for n in z.namelist()])


def npy_bytes(header, data=b""):
    text = header
    while (10 + len(text) + 1) % 64:
        text += " "
    text += "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode("latin-1") + data


def main():
    torch.manual_seed(0)
    buf = io.BytesIO()
    torch.jit.save(torch.jit.script(fm.Block(3)), buf)
    archive = buf.getvalue()
    z = zipfile.ZipFile(io.BytesIO(archive))
    names = z.namelist()
    prefix = names[0].split("/")[0] + "/"

    # --- archives --------------------------------------------------------------------------
    write("archive", "empty.pt", b"")
    write("archive", "text.pt", "definitely not a model\n")
    write("archive", "magic_only.pt", b"PK\x03\x04")
    for pct in (10, 50, 90, 99):
        write("archive", f"truncated_{pct}.pt", archive[: len(archive) * pct // 100])
    flipped = bytearray(archive)
    pkl = flipped.find(prefix.encode() + b"data.pkl")
    for i in range(pkl + 120, pkl + 160):
        flipped[i] ^= 0xFF
    write("archive", "bitflip_data_pkl.pt", bytes(flipped))
    central = bytearray(archive)
    cd = central.rfind(b"PK\x01\x02")
    for i in range(cd + 10, cd + 30):
        central[i] ^= 0xA5
    write("archive", "bitflip_directory.pt", bytes(central))
    write("archive", "garbage_pickle.pt", zip_bytes([(prefix + "data.pkl", b"\x80\x02garbage"),
                                                     (prefix + "constants.pkl", b"\x80\x02)."),
                                                     (prefix + "version", b"3\n")]))
    write("archive", "code_without_data.pt", zip_bytes([(prefix + "code/__torch__/x.py", "x")]))
    write("archive", "version_text.pt", zip_bytes(
        [(n, b"abc\n" if n.endswith("/version") else z.read(n)) for n in names]))
    write("archive", "version_huge.pt", zip_bytes(
        [(n, b"99999999999999999999999\n" if n.endswith("/version") else z.read(n)) for n in names]))
    write("archive", "non_utf8_names.pt", zip_bytes([("\udcff\udcfe/data.pkl".encode("utf-8", "surrogateescape").decode("latin-1"), b"x")]))
    write("archive", "nested_zip.pt", zip_bytes([("inner.zip", archive)]))
    # sizes LibTorch's unpickler trusts (found by torch_save_fuzzer): refused before it loads
    write("archive", "memo_index_huge.pt", replace_members(
        archive, lambda n, d: with_bad_memo_index(d) if n.endswith("/data.pkl") else d))
    # LibTorch checks no CRC: a changed byte in code/ once sent its type parser into endless
    # recursion (found by archive_model_fuzzer); every code/ and pickle record's CRC is checked
    code_flip = bytearray(replace_members(archive, lambda n, d: d))  # stored, so findable
    at = code_flip.find(b"class Block(Module)")
    assert at > 0
    code_flip[at + 6] ^= 0x01
    write("archive", "code_crc_mismatch.pt", bytes(code_flip))
    write("archive", "debug_pkl_length_huge.pt", replace_members(
        archive, lambda n, d: d[:2] + b"X\xff\xff\xff\xff" + d[2:] if n.endswith(".debug_pkl") else d))
    torch.save({"w": torch.ones(2)}, os.path.join(ROOT, "archive", "state_dict.pt"))

    # --- inputs (capture --inputs, against a model taking one tensor) ------------------------
    good = io.BytesIO()
    np.save(good, np.arange(6, dtype=np.float32).reshape(2, 3))
    raw = good.getvalue()
    f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
    for name, member in [
        ("npy_huge_shape.npz", npy_bytes(f4 % "(1000000000000000,)", b"\0" * 16)),
        ("npy_overflow_shape.npz", npy_bytes(f4 % "(4294967296, 4294967296, 4294967296)")),
        ("npy_negative_dim.npz", npy_bytes(f4 % "(-1, 3)")),
        ("npy_shape_mismatch.npz", npy_bytes(f4 % "(9, 3)", b"\0" * 24)),
        ("npy_too_long.npz", raw + b"\0" * 8),
        ("npy_bad_descr.npz", npy_bytes("{'descr': '<f3', 'fortran_order': False, 'shape': (1,), }", b"\0" * 3)),
        ("npy_object.npz", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8)),
        ("npy_unicode.npz", npy_bytes("{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }", b"\0" * 16)),
        ("npy_fortran_garbage.npz", npy_bytes("{'descr': '<f4', 'fortran_order': 2, 'shape': (1,), }", b"\0" * 4)),
        ("npy_header_not_dict.npz", npy_bytes("[1, 2, 3]")),
        ("npy_bad_magic.npz", b"\x93NUMPX" + raw[6:]),
        ("npy_truncated_header.npz", raw[:20]),
    ]:
        write("inputs", name, zip_bytes([("arr_0.npy", member)]))
    write("inputs", "npy_header_length_huge.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 0xFFFFFFF0))
    write("inputs", "empty.npz", b"")
    compressed = io.BytesIO()
    np.savez_compressed(compressed, np.arange(4096, dtype=np.float64))
    write("inputs", "npz_truncated.npz", compressed.getvalue()[:-30])
    deflated = bytearray(compressed.getvalue())
    start = deflated.find(b"arr_0.npy") + 40
    for i in range(start, start + 40):
        deflated[i] ^= 0x55
    write("inputs", "npz_bitflip_deflated.npz", bytes(deflated))
    write("inputs", "npz_not_npy_member.npz", zip_bytes([("notes.txt", "hi")]))
    write("inputs", "npz_non_utf8_member.npz", zip_bytes([("arr_\udcff.npy".encode("utf-8", "surrogateescape").decode("latin-1"), raw)]))
    # pickles: code to run must never run; LibTorch's unpickler knows no arbitrary globals
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > /tmp/vin-hostile-pwned",))
    write("inputs", "pickle_legacy_os_system.pt", pickle.dumps(Evil(), protocol=2))
    evil = io.BytesIO()
    torch.save({"x": torch.ones(2)}, evil)
    ez = zipfile.ZipFile(io.BytesIO(evil.getvalue()))
    members = [(n, pickle.dumps(Evil(), protocol=2) if n.endswith("data.pkl") else ez.read(n))
               for n in ez.namelist()]
    write("inputs", "pickle_zip_os_system.pt", zip_bytes(members))
    saved = io.BytesIO()
    torch.save({"x": torch.ones(2)}, saved)
    write("inputs", "pickle_memo_index_huge.pt", replace_members(
        saved.getvalue(), lambda n, d: with_bad_memo_index(d) if n.endswith("/data.pkl") else d))
    write("inputs", "pickle_length_huge.pt", replace_members(
        saved.getvalue(), lambda n, d: d[:2] + b"X\xff\xff\xff\xff" + d[2:] if n.endswith("/data.pkl") else d))
    # a stack LibTorch's unpickler pops blindly (found by torch_save_fuzzer: it corrupted memory)
    write("inputs", "pickle_stack_underflow.pt", replace_members(
        saved.getvalue(), lambda n, d: b"\x80\x02](cm\nf\nebN." if n.endswith("/data.pkl") else d))
    sparse = io.BytesIO()
    torch.save(torch.ones(3).to_sparse(), sparse)
    write("inputs", "pickle_sparse.pt", sparse.getvalue())
    deep = io.BytesIO()
    nested = torch.ones(1)
    for _ in range(5000):
        nested = [nested]
    try:
        torch.save(nested, deep)
        write("inputs", "pickle_deep_nesting.pt", deep.getvalue())
    except RecursionError:
        pass
    write("inputs", "pickle_truncated.pt", evil.getvalue()[: len(evil.getvalue()) // 2])

    # --- YAML renderings ----------------------------------------------------------------------
    write("yaml", "empty.yaml", "")
    write("yaml", "malformed.yaml", "!m.C\na: [1, 2\nb: {c\n")
    write("yaml", "list_root.yaml", "- 1\n- 2\n")
    write("yaml", "scalar_root.yaml", "just a string\n")
    write("yaml", "deep_flow.yaml", "a: " + "[" * 5000 + "]" * 5000 + "\n")
    write("yaml", "deep_flow_mapping.yaml", "!m.C\na: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")
    bomb = "a: &a {x: 1, y: 2}\n" + "".join(
        f"{chr(c)}: &{chr(c)} {{p: *{chr(c - 1)}, q: *{chr(c - 1)}, r: *{chr(c - 1)}}}\n" for c in range(98, 123))
    write("yaml", "alias_bomb.yaml", bomb)
    write("yaml", "alias_bomb_lists.yaml", "a: &a [lol, lol]\n" + "".join(
        f"{chr(c)}: &{chr(c)} [*{chr(c - 1)}, *{chr(c - 1)}, *{chr(c - 1)}]\n" for c in range(98, 123))
        + "__declared__:\n  m: {a: int}\n" + "!m.C {}\n")
    write("yaml", "non_utf8.yaml", b"!m.C\na: \xff\xfe\n")
    write("yaml", "two_documents.yaml", "!m.C\na: 1\n---\n!m.C\na: 2\n")
    write("yaml", "duplicate_keys.yaml", "!m.C\na: 1\na: 2\n")
    write("yaml", "declared_not_mapping.yaml", "!m.C\na: 1\n__declared__: [m.C]\n")
    write("yaml", "declared_field_missing.yaml", "!m.C\na: 1\n__declared__:\n  m.C: {a: int, b: int}\n")
    write("yaml", "declared_entry_list.yaml", "!m.C\na: 1\n__declared__:\n  m.C: [a]\n")
    write("yaml", "bad_int_tag.yaml", "!m.C\na: !!int twelve\n")
    write("yaml", "nul_bytes.yaml", b"!m.C\na: 1\x00\x00\n")
    # a stray flow token: yaml-cpp 0.7's LoadAll looped on it for ever (found by yaml_fuzzer)
    write("yaml", "stray_comma.yaml", ",- 1epoch\ns- 2\n")

    # --- record files (diff) ------------------------------------------------------------------
    write("records", "empty.jsonl", "")
    write("records", "not_json.jsonl", "this is not json\n")
    write("records", "wrong_first_record.jsonl", '{"record": "TensorSnapshot"}\n')
    write("records", "mixed_kinds.jsonl", '{"record": "ModelMetadata", "model_type": "x", '
          '"total_parameters": 1, "trainable_parameters": 1}\n{"record": "ConfigFieldSpec"}\n')
    write("records", "truncated_line.jsonl", '{"record": "ModelMetadata", "model_type": "x", "tot')
    write("records", "missing_keys.jsonl", '{"record": "ModelMetadata"}\n')
    write("records", "non_utf8.jsonl", b'{"record": "\xff\xfe"}\n')


if __name__ == "__main__":
    main()
