#!/usr/bin/python3
"""Checks the rules the tree keeps (ARCHITECTURE.md):

- no file outside the LibTorch folders (lib/vin/diagnostics/{torch,capture,compare,torch_plugin}) includes
  a LibTorch header (<torch/...>, <ATen/...>, <c10/...>, <caffe2/...>): not the other library
  folders, the binary, nor the unit tests of vin_core;
- every folder under lib/vin/diagnostics has a CMakeLists.txt that names each of its .cpp files;
- ARCHITECTURE.md names every such folder, in an order each folder keeps: its files include
  only from itself and the folders drawn above it (the request types that cross into the
  LibTorch plugin, `*_request.h`, are the one way up: the plugin's table names them);
- every script the README names (`scripts/x.sh`, `scripts/x.py`), and every file under scripts/
  that starts with `#!`, is executable in git (mode 100755): the README runs them directly.

usage: check_layout.py REPO_ROOT
"""
import os
import re
import subprocess
import sys

TORCH_FOLDERS = {"torch", "capture", "compare", "torch_plugin"}
TORCH_INCLUDE = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|caffe2)/')
INCLUDE = re.compile(r'\s*#\s*include\s*"vin/diagnostics/([a-z_]+)/([\w.]+)"')
# the unit tests that link vin_core only (tests/CMakeLists.txt, vin_core_tests)
CORE_TESTS_START = "add_executable(vin_core_tests"


def core_unit_tests(root):
    text = open(os.path.join(root, "tests", "CMakeLists.txt")).read()
    block = text[text.index(CORE_TESTS_START):]
    block = block[:block.index(")")]
    return [os.path.join(root, "tests", f) for f in re.findall(r"unit/\S+\.cpp", block)]


def main():
    root = sys.argv[1]
    lib = os.path.join(root, "lib", "vin", "diagnostics")
    problems = []
    folders = sorted(d for d in os.listdir(lib) if os.path.isdir(os.path.join(lib, d)))
    files = []
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(lib, folder))):
            files.append((folder, os.path.join(lib, folder, name)))
    for name in sorted(os.listdir(lib)):
        if os.path.isfile(os.path.join(lib, name)):
            problems.append(f"lib/vin/diagnostics/{name} is in no folder")
    others = [os.path.join(root, "apps", "vin-inspect", "main.cpp")] + core_unit_tests(root)
    for folder, path in files + [(None, p) for p in others]:
        if folder in TORCH_FOLDERS or not path.endswith((".h", ".cpp")):
            continue
        for number, line in enumerate(open(path), 1):
            if TORCH_INCLUDE.search(line):
                problems.append(f"{os.path.relpath(path, root)}:{number} includes LibTorch outside "
                                f"the LibTorch folders: {line.strip()}")
    architecture = open(os.path.join(root, "ARCHITECTURE.md")).read()
    for folder in folders:
        cmake = os.path.join(lib, folder, "CMakeLists.txt")
        if not os.path.exists(cmake):
            problems.append(f"lib/vin/diagnostics/{folder} has no CMakeLists.txt")
            continue
        listed = open(cmake).read()
        for name in sorted(os.listdir(os.path.join(lib, folder))):
            if name.endswith(".cpp") and name not in listed:
                problems.append(f"lib/vin/diagnostics/{folder}/CMakeLists.txt does not build {name}")
        if f"{folder}/" not in architecture:
            problems.append(f"ARCHITECTURE.md does not name lib/vin/diagnostics/{folder}/")
    # the folders in the order the drawing lists them
    order = re.findall(r"(?m)^  ([a-z_]+)/ ", architecture)
    rank = {name: i for i, name in enumerate(order)}
    for folder, path in files:
        if not path.endswith((".h", ".cpp")) or folder not in rank:
            continue
        for number, line in enumerate(open(path), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == folder or m.group(2).endswith("_request.h"):
                continue
            if rank.get(m.group(1), -1) > rank[folder]:
                problems.append(f"{os.path.relpath(path, root)}:{number} includes from "
                                f"{m.group(1)}/, drawn below {folder}/ in ARCHITECTURE.md")
    readme = open(os.path.join(root, "README.md")).read()
    modes = {}
    for line in subprocess.run(["git", "ls-files", "-s", "scripts"], cwd=root, capture_output=True,
                               text=True).stdout.splitlines():
        mode, _, _, path = line.split(None, 3)
        modes[path] = mode
    scripts = set(re.findall(r"(?m)(?:^|`)(scripts/[\w.-]+\.(?:sh|py)) ", readme))
    for path in modes:
        with open(os.path.join(root, path), "rb") as f:
            if f.read(2) == b"#!":
                scripts.add(path)
    for script in sorted(scripts):
        if modes.get(script) != "100755":
            problems.append(f"{script} is run directly (README, #!) but is not executable in git")
    for p in problems:
        print("FAIL " + p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
