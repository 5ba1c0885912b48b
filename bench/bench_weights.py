#!/usr/bin/env python3
"""Weights at memory speed (issue 68): the checksums of big weights files against the floor.

Makes its files (once, in --dir): a 1 GiB safetensors file of 16 float32 tensors of 4096 x 4096
(random values), a second one that differs in one tensor, and a sharded set of 8 safetensors
shards holding 4 GiB with its `model.safetensors.index.json`. Then, page cache warm (every file
read once first), runs interleaved, best of --runs:

  - `vin-inspect model FILE --tensors` (every tensor's data_crc32) against the floor: libdeflate's
    `libdeflate_crc32` over the same bytes on one core, mapped read-only or read in 1 MiB pieces,
    whichever is faster (ctypes into Debian's libdeflate0, timed inside Python: no process start,
    no parsing);
  - `vin-inspect diff OLD NEW` against the floor of both files;
  - the 4 GiB sharded set, by its index, against the floor of its 8 shards.

Prints one Markdown table (wall time, the floor, their ratio, the tool's peak RSS from GNU time:
mapped file pages included) for docs/performance.md.

  /usr/bin/python3 bench/bench_weights.py --binary build/ci/apps/vin-inspect [--runs 5]
      [--dir /var/tmp/vin-bench-weights] [--only one,diff,shards] [--before OLD_BINARY]

--before adds a column: another build (the commit before a change) run interleaved with the
others.
"""
import argparse
import ctypes
import ctypes.util
import json
import mmap
import os
import struct
import subprocess
import sys
import time

import numpy as np

SIDE = 4096  # each tensor 4096 x 4096 float32: 64 MiB
TENSORS_PER_GIB = 16


def write_safetensors(path, tensors):
    """A safetensors file as the format says: an 8-byte little-endian header length, the JSON
    header (padded with spaces to 8 bytes), then each tensor's bytes in order."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, array in tensors:
        header[name] = {"dtype": "F32", "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, array in tensors:
            f.write(array.tobytes())
    os.replace(tmp, path)


def random_tensors(rng, names):
    for name in names:
        yield name, rng.random((SIDE, SIDE), dtype=np.float32)


def make_files(folder):
    os.makedirs(folder, exist_ok=True)
    one = os.path.join(folder, "one.safetensors")
    other = os.path.join(folder, "other.safetensors")
    index = os.path.join(folder, "shards", "model.safetensors.index.json")
    names = [f"layers.{i}.weight" for i in range(TENSORS_PER_GIB)]
    if not os.path.exists(one):
        write_safetensors(one, list(random_tensors(np.random.default_rng(0), names)))
    if not os.path.exists(other):  # the same but its last tensor
        tensors = list(random_tensors(np.random.default_rng(0), names[:-1]))
        tensors += list(random_tensors(np.random.default_rng(1), names[-1:]))
        write_safetensors(other, tensors)
    if not os.path.exists(index):
        os.makedirs(os.path.dirname(index), exist_ok=True)
        rng, weight_map, total = np.random.default_rng(2), {}, 0
        for shard in range(8):
            file = f"model-{shard + 1:05d}-of-00008.safetensors"
            shard_names = [f"layers.{shard * 8 + i}.weight" for i in range(8)]
            tensors = list(random_tensors(rng, shard_names))
            write_safetensors(os.path.join(os.path.dirname(index), file), tensors)
            for name, array in tensors:
                weight_map[name] = file
                total += array.nbytes
        with open(index, "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    shards = sorted(os.path.join(os.path.dirname(index), f)
                    for f in os.listdir(os.path.dirname(index)) if f.endswith(".safetensors"))
    return one, other, index, shards


def load_libdeflate():
    name = ctypes.util.find_library("deflate") or "libdeflate.so.0"
    lib = ctypes.CDLL(name)
    lib.libdeflate_crc32.restype = ctypes.c_uint32
    lib.libdeflate_crc32.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
    return lib


def tensor_ranges(path):
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    start = 8 + length
    return [(start + v["data_offsets"][0], start + v["data_offsets"][1])
            for k, v in header.items() if k != "__metadata__"]


def floor_seconds(lib, paths):
    """libdeflate's CRC-32 of every tensor's bytes of `paths` on one core, the faster of two
    ways to reach them (the header parsed before the clock starts): each file mapped read-only,
    one call per tensor; and each tensor read in 1 MiB pieces into one buffer. On this virtual
    machine the cost of a mapping's page faults varies from hour to hour (0.1 s to 0.6 s for
    1 GiB) where reads do not."""
    ranges = [(p, tensor_ranges(p)) for p in paths]
    start = time.perf_counter()
    for path, spans in ranges:
        with open(path, "rb") as f:
            m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
            # the mapping's address: a read-only mmap gives ctypes none, numpy does
            view = np.frombuffer(m, dtype=np.uint8)
            base = view.ctypes.data
            for begin, end in spans:
                lib.libdeflate_crc32(0, base + begin, end - begin)
            del view
            m.close()
    mapped = time.perf_counter() - start
    buffer = bytearray(1 << 20)
    address = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    start = time.perf_counter()
    for path, spans in ranges:
        with open(path, "rb", buffering=0) as f:
            for begin, end in spans:
                crc, at = 0, begin
                while at < end:
                    n = os.preadv(f.fileno(), [memoryview(buffer)[:min(len(buffer), end - at)]], at)
                    crc = lib.libdeflate_crc32(crc, address, n)
                    at += n
    read = time.perf_counter() - start
    return min(mapped, read)


def tool_run(argv):
    """Wall seconds and peak RSS (KiB) of one run of argv, its output thrown away."""
    start = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode not in (0, 1):  # diff exits 1 when the sides differ
        sys.exit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr}")
    return seconds, int(proc.stderr.strip().splitlines()[-1])


def warm(paths):
    for path in paths:
        with open(path, "rb") as f:
            while f.read(64 << 20):
                pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--dir", default="/var/tmp/vin-bench-weights")
    parser.add_argument("--only", default="one,diff,shards")
    parser.add_argument("--before", help="another vin-inspect to time beside --binary")
    args = parser.parse_args()
    one, other, index, shards = make_files(args.dir)
    lib = load_libdeflate()
    cases = {
        "one": ("`model one.safetensors --tensors` (1 GiB)", ["model", one, "--tensors"], [one]),
        "diff": ("`diff one.safetensors other.safetensors` (2 x 1 GiB)", ["diff", one, other],
                 [one, other]),
        "shards": ("`model model.safetensors.index.json --tensors` (8 shards, 4 GiB)",
                   ["model", index, "--tensors"], shards),
    }
    wanted = [c for c in args.only.split(",") if c]
    before = " before |" if args.before else ""
    print(f"| what |{before} vin-inspect | floor (libdeflate, 1 core) | ratio | "
          "vin-inspect peak RSS |")
    print("| --- |" + (" --- |" if args.before else "") + " --- | --- | --- | --- |")
    for name in wanted:
        label, argv, files = cases[name]
        warm(files)
        tool, floor, rss, old = [], [], [], []
        for _ in range(args.runs):  # interleaved: the tool, the floor, the build before
            seconds, kib = tool_run([args.binary] + argv)
            tool.append(seconds)
            rss.append(kib)
            floor.append(floor_seconds(lib, files))
            if args.before:
                old.append(tool_run([args.before] + argv)[0])
        best_tool, best_floor = min(tool), min(floor)
        old_cell = f" {min(old):.3f} s |" if args.before else ""
        print(f"| {label} |{old_cell} {best_tool:.3f} s | {best_floor:.3f} s | "
              f"{best_tool / best_floor:.2f}x | {max(rss) / 1024:.0f} MiB |", flush=True)


if __name__ == "__main__":
    main()
