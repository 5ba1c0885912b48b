#!/usr/bin/python3
"""The command line as a whole: --help, --version, usage errors that are no one subcommand's
(a missing or mistyped subcommand, unknown options, a build without LibTorch asked for
capture), the README and man page covering every subcommand and option, the man page
rendering, and --log-level.

usage: test_docs_and_usage.py --binary PATH --fixtures DIR --source REPO_ROOT [--no-torch] [TEST...]
"""
import os
import re
import shutil
import subprocess
import sys

import cli_common
from cli_common import ARGS, assert_clean_error, fixture, run, test, torch_test


# --- usage errors: exit 2 ---------------------------------------------------------------------

@test
def without_libtorch_capture_is_a_usage_error():
    if not ARGS.no_torch:
        print("  (skipped: this binary has LibTorch; the torch tests cover capture and compare)")
        return
    for args in (["capture", fixture("convnet.pt"), "--shape", "images=1x3x8x8"],
                 ["compare", fixture("convnet.pt"), fixture("convnet.pt"), "--shape", "images=1x3x8x8"],
                 ["model", fixture("computed_state.pt"), "--load-with-libtorch"]):
        p = run(*args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert "built without LibTorch: capture, compare and --load-with-libtorch need it" in p.stderr
    p = run("--version")
    assert p.returncode == 0 and p.stdout.endswith("(built without LibTorch)\n"), p.stdout
    # what needs no LibTorch works
    assert run("model", fixture("convnet.pt"), "--all").returncode == 0
    assert run("diff", fixture("convnet.pt"), fixture("everything.pt")).returncode == 1


@test
def usage_errors_exit_2():
    cases = [
        ((), r"A subcommand is required"),
        (("inspect-model",), r"ARCHIVE is required"),
        (("inspect-model", fixture("convnet.pt"), "--format", "xml"), r"xml"),
        (("--log-level", "loud", "model", fixture("convnet.pt")), r"loud"),
        (("inspect-model", fixture("convnet.pt"), "--bogus"), r"--bogus"),
    ]
    for args, pattern in cases:
        p = run(*args)
        assert p.returncode == 2, f"{args}: exit {p.returncode}"
        assert p.stdout == "", f"{args}: {p.stdout}"
        assert p.stderr.startswith("vin-inspect: error: "), f"{args}: {p.stderr}"
        assert re.search(pattern, p.stderr), f"{args}: {pattern!r} not in {p.stderr!r}"


@test
def a_mistyped_subcommand_gets_a_suggestion():
    p = run("modle", fixture("convnet.pt"))
    assert p.returncode == 2, p.returncode
    assert "unknown subcommand 'modle'; did you mean 'model'?" in p.stderr, p.stderr
    p = run("inspect-modle", fixture("convnet.pt"))
    assert "did you mean 'inspect-model'?" in p.stderr, p.stderr


@test
def unknown_options_are_named_with_the_closest_one():
    assert_clean_error(run("capture", fixture("everything.pt"), "--input", "x.npz"), 2,
                       r"unknown option '--input'; did you mean '--inputs'\?")
    assert_clean_error(run("model", fixture("everything.pt"), "--formt", "json"), 2,
                       r"unknown option '--formt'; did you mean '--format'\?")


# --- version, help, logging, docs -------------------------------------------------------------

@torch_test
def version_names_the_tool_and_libtorch():
    p = run("--version")
    assert p.returncode == 0, p.stderr
    assert re.fullmatch(r"vin-inspect \d+\.\d+\.\d+ \(LibTorch \d+\.\d+\.\d+\)\n", p.stdout), p.stdout


def subcommands_from_help():
    p = run("--help")
    assert p.returncode == 0, p.stderr
    section = p.stdout.split("Subcommands:")[1].split("Examples:")[0]
    return p.stdout, re.findall(r"^  ([a-z-]+)(?:, ([a-z-]+))? ", section, re.M)


@test
def help_lists_each_subcommand_with_an_example():
    text, commands = subcommands_from_help()
    assert commands, text
    for name, alias in commands:
        assert re.search(rf"^  vin-inspect {name} ", text, re.M), f"no example for {name}"
        sub = run(name, "--help")
        # every command writes somewhere -o names; all but report (one HTML page) in --format
        assert sub.returncode == 0 and "--output" in sub.stdout, sub.stdout
        assert name == "report" or "--format" in sub.stdout, sub.stdout


@test
def docs_and_man_page_list_the_formats_the_format_table_gives():
    # inspect-model --help names the formats it reads from the one table of formats; the man
    # page and docs/cli.md must list each (issue 69)
    text = " ".join(run("inspect-model", "--help").stdout.split())
    listed = text.split("The model file: ", 1)[1].split("; or a directory", 1)[0]
    formats = [f for part in listed.split(", ") for f in part.split(" or ")]
    assert "a TorchScript archive" in formats and "a safetensors file" in formats, formats
    with open(os.path.join(ARGS.source, "man", "vin-inspect.1")) as f:
        man = " ".join(f.read().replace("\\-", "-").split())
    with open(os.path.join(ARGS.source, "docs", "cli.md")) as f:
        cli = f.read()
    for phrase in formats:
        assert f"\\(bu 2 {phrase} " in man, f"the man page does not list {phrase!r}"
        assert f"\n- {phrase}\n" in cli, f"docs/cli.md does not list {phrase!r}"


@test
def docs_and_man_page_cover_every_subcommand_and_option():
    _, commands = subcommands_from_help()
    with open(os.path.join(ARGS.source, "docs", "cli.md")) as f:
        readme = f.read()
    with open(os.path.join(ARGS.source, "man", "vin-inspect.1")) as f:
        man = f.read().replace("\\-", "-")
    for name, alias in commands:
        for doc, label in ((readme, "docs/cli.md"), (man, "man page")):
            assert name in doc and (alias or name) in doc, f"{label} does not mention {name} / {alias}"
    # every option --help lists, of the program and of each subcommand (none hard-coded here)
    options = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", run("--help").stdout))
    for name, _ in commands:
        options |= set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", run(name, "--help").stdout))
    assert {"--format", "--inputs", "--timeout", "--ignore"} <= options, options
    for option in sorted(options):
        assert option in man, f"man page does not mention {option}"
        assert option in readme, f"docs/cli.md does not mention {option}"


def help_defaults():
    """{(subcommand, option): default} for every option whose --help line says "(default X)"."""
    _, commands = subcommands_from_help()
    defaults = {}
    for name, _ in commands:
        option = None
        for line in run(name, "--help").stdout.splitlines():
            named = re.match(r"\s+(?:-\w, )?(--[a-z][a-z-]*)", line)
            if named:
                option = named.group(1)
            found = re.search(r"\(default ([^:;)][^;)]*)[;)]", line)
            if found and option:
                defaults[(name, option)] = found.group(1)
    return defaults


@test
def the_defaults_the_docs_give_are_the_ones_help_gives():
    # an option's default is declared once (apps/vin-inspect/options.h); --help prints it from
    # there, and every table row of docs/ that names the option must say the same
    defaults = help_defaults()
    assert defaults[("profile", "--warmup")] == "3" and defaults[("capture", "--max-tensors")] == "64", defaults
    rows = []
    for page in sorted(p for p in os.listdir(os.path.join(ARGS.source, "docs")) if p.endswith(".md")):
        with open(os.path.join(ARGS.source, "docs", page)) as f:
            rows += [(page, l) for l in f if l.startswith("| `--")]
    # an option two commands share with two defaults (--max-bytes: capture's 16384, report's
    # 32 MiB) is documented once per command: a row says one of its defaults, and each is said
    by_option = {}
    for (command, option), default in sorted(defaults.items()):
        by_option.setdefault(option, {})[default] = command
    checked = 0
    for option, commands_of in sorted(by_option.items()):
        said = set()
        for page, row in rows:
            first_cell = row.split("|")[1]
            if not re.search(re.escape(option) + r"(?![\w-])", first_cell) or "default" not in row:
                continue
            checked += 1
            found = [d for d in commands_of if f"default {d}" in row]
            assert found, f"{page} says of {option} {row.strip()!r}; --help: " + ", ".join(
                f"{c}: default {d}" for d, c in commands_of.items())
            said.update(found)
        if said and len(commands_of) > 1:
            assert said == set(commands_of), f"docs/ give {option} only the defaults {said}"
    assert checked >= 10, f"only {checked} documented defaults found"
    # and the man page's option entries (.TP, the option, then its text up to the next entry)
    with open(os.path.join(ARGS.source, "man", "vin-inspect.1")) as f:
        man = f.read().replace("\\-", "-")
    entries = re.split(r"\n\.(?:TP|SH|SS|PP)\n", man)
    checked = 0
    for option, commands_of in sorted(by_option.items()):
        for entry in entries:
            head, _, body = entry.partition("\n")
            if not re.search(re.escape(option) + r"(?![\w-])", head):
                continue
            said = re.search(r"default ([^;,.)]+(?:\.\d+)?)", body)
            if not said:
                continue
            checked += 1
            assert said.group(1).strip() in commands_of, \
                f"the man page says of {option} 'default {said.group(1)}'; --help: " + ", ".join(
                    f"{c}: default {d}" for d, c in commands_of.items())
    assert checked >= 8, f"only {checked} defaults found in the man page"
    print(f"  ({checked} defaults in the man page checked)")


@test
def man_page_renders_without_warnings():
    groff = shutil.which("groff")
    if not groff:
        print("  (skipped: groff is not installed)")
        return
    page = os.path.join(ARGS.source, "man", "vin-inspect.1")
    p = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", page], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    p = subprocess.run([groff, "-man", "-Tutf8", "-P-cbu", page], capture_output=True, text=True)
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES"):
        assert re.search(rf"^{heading}", p.stdout, re.M), f"man page lacks {heading}"


@test
def log_level_debug_goes_to_stderr_only():
    quiet = run("inspect-model", fixture("convnet.pt"))
    loud = run("--log-level", "debug", "inspect-model", fixture("convnet.pt"))
    after = run("inspect-model", fixture("convnet.pt"), "--log-level", "debug")
    assert loud.returncode == 0 and loud.stdout == quiet.stdout
    assert "vin-inspect: debug: inspecting" in loud.stderr, loud.stderr
    assert after.stderr == loud.stderr
    assert quiet.stderr == ""


if __name__ == "__main__":
    sys.exit(cli_common.main(cli_common.TESTS))
