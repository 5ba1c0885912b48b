#!/usr/bin/python3
"""Checks the rules the tree keeps (ARCHITECTURE.md):

- no file outside the LibTorch folders (lib/vin/diagnostics/{torch,export_run,run,instrument,capture,compare,profiling,torch_plugin}) includes
  a LibTorch header (<torch/...>, <ATen/...>, <c10/...>, <caffe2/...>): not the other library
  folders, the binary, nor the unit tests of vin_core;
- every folder under lib/vin/diagnostics has a CMakeLists.txt that names each of its .cpp files;
- ARCHITECTURE.md names every such folder, in an order each folder keeps: its files include
  only from itself and the folders drawn above it (the request types that cross into the
  LibTorch plugin, `*_request.h`, are the one way up: the plugin's table names them);
- every script the README or docs/ names (`scripts/x.sh`, `scripts/x.py`), and every file under scripts/
  that starts with `#!`, is executable in git (mode 100755): the README runs them directly;
- no function in apps/ or lib/ is longer than 150 lines (a lambda counts as part of the
  function it is written in), and apps/vin-inspect/main.cpp, which only dispatches, is under 300;
- no .cpp in lib/ is over 700 lines, and no folder of lib/ holds more than 15 files (its
  CMakeLists.txt included): a file or folder past them does more than one job (issue 69).

usage: check_layout.py REPO_ROOT
"""
import os
import re
import subprocess
import sys

TORCH_FOLDERS = {"torch", "export_run", "run", "instrument", "capture", "compare", "profiling", "torch_plugin"}
TORCH_INCLUDE = re.compile(r'#\s*include\s*[<"](torch|ATen|c10|caffe2)/')
INCLUDE = re.compile(r'\s*#\s*include\s*"vin/diagnostics/([a-z_]+)/([\w.]+)"')
# the unit tests that link vin_core only (tests/CMakeLists.txt, vin_core_tests)
CORE_TESTS_START = "add_executable(vin_core_tests"
MAX_FUNCTION_LINES = 150
MAX_MAIN_LINES = 300
MAX_CPP_LINES = 700
MAX_FOLDER_FILES = 15
# how far before a `{` its function's head is looked for: a parameter list and its qualifiers
# (looking at the whole text before each brace made the check quadratic: 80 s a run)
HEAD_WINDOW = 1500
TAIL_WINDOW = 160
# a brace that opens a body after `)`: a function's, unless the parenthesis was a statement's
STATEMENT_KEYWORDS = re.compile(r"\b(if|for|while|switch|catch)\s*$")
# what may stand between a parameter list's `)` and the body: qualifiers, ref-qualifiers
# (`run() && {`), a trailing return type (`-> std::string {`)
FUNCTION_TAIL = re.compile(
    r"(\s*(\boverride|\bconst|\bnoexcept|\bfinal|\bmutable|&&|&|->\s*[\w:<>,\s*&]+?))*$")
CODE_OR_NOT = re.compile(r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'""", re.S)


def without_comments_and_literals(text):
    """The text with comments, strings and characters blanked (newlines kept)."""
    return CODE_OR_NOT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def long_functions(path, limit):
    """(first line, lines) of each outermost function body in `path` longer than `limit`."""
    text = without_comments_and_literals(open(path).read())
    found, stack = [], []  # stack: (is a function body, line) per open brace
    line = 1
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = text[max(0, i - HEAD_WINDOW):i].rstrip()
            # the qualifiers and trailing return type are short: the regex sees their zone only
            zone = head[-TAIL_WINDOW:]
            before = head[:len(head) - len(zone)] + FUNCTION_TAIL.sub("", zone)
            is_function = False
            if before.endswith(")"):
                depth, j = 0, len(before) - 1
                while j >= 0:  # the parenthesis this one closes
                    depth += {")": 1, "(": -1}.get(before[j], 0)
                    if depth == 0:
                        break
                    j -= 1
                is_function = not STATEMENT_KEYWORDS.search(before[:j])
            stack.append((is_function, line))
        elif c == "}" and stack:
            is_function, start = stack.pop()
            outermost = not any(f for f, _ in stack)
            if is_function and outermost and line - start + 1 > limit:
                found.append((start, line - start + 1))
    return found


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
    apps = [os.path.join(d, f) for d, _, names in os.walk(os.path.join(root, "apps"))
            for f in sorted(names) if f.endswith((".h", ".cpp"))]
    others = apps + core_unit_tests(root)
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
    # the README and the docs/ pages it sends readers to run scripts directly
    readme = open(os.path.join(root, "README.md")).read()
    docs = os.path.join(root, "docs")
    for page in sorted(os.listdir(docs)):
        if page.endswith(".md"):
            readme += open(os.path.join(docs, page)).read()
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
            problems.append(f"{script} is run directly (README, docs/, #!) but is not executable in git")
    for folder, path in files + [(None, p) for p in apps]:
        if not path.endswith((".h", ".cpp")):
            continue
        for start, lines in long_functions(path, MAX_FUNCTION_LINES):
            problems.append(f"{os.path.relpath(path, root)}:{start}: a function of {lines} lines, "
                            f"more than {MAX_FUNCTION_LINES}")
    for folder in folders:
        entries = os.listdir(os.path.join(lib, folder))
        if len(entries) > MAX_FOLDER_FILES:
            problems.append(f"lib/vin/diagnostics/{folder}/ holds {len(entries)} files, more than "
                            f"{MAX_FOLDER_FILES}")
    for folder, path in files:
        if path.endswith(".cpp"):
            lines = len(open(path).readlines())
            if lines > MAX_CPP_LINES:
                problems.append(f"{os.path.relpath(path, root)} has {lines} lines, more than "
                                f"{MAX_CPP_LINES}")
    main_lines = len(open(os.path.join(root, "apps", "vin-inspect", "main.cpp")).readlines())
    if main_lines >= MAX_MAIN_LINES:
        problems.append(f"apps/vin-inspect/main.cpp has {main_lines} lines; it only dispatches "
                        f"(under {MAX_MAIN_LINES})")
    for p in problems:
        print("FAIL " + p)
    print(f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
