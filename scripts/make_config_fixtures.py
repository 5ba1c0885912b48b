#!/usr/bin/python3
"""Writes the inputs, expected outputs and manifest of the inspect-config parity test.

usage: make_config_fixtures.py OUTDIR

- For every configuration of scripts/config_models.py (BUILDERS): NAME.yaml, its rendering by
  scripts/render_config.py, and NAME.expected.jsonl, the records of
  tests/reference/config_reference.py (the seed's walk over the Pydantic objects themselves).
- TorchScript archives (a scripted nn.Linear saved by torch.jit.save) carrying a rendering as the
  extra file config.yaml (example.pt, kitchen_sink.pt), and one without it (no_config.pt).
- Hand-written renderings for the contract's rules that render() never produces (an untagged
  root, no __declared__, YAML's own tags, core-schema corner cases, declaration order), with
  hand-written expected records.
- Bad inputs (malformed YAML, a non-mapping root, a declared field with no value, a malformed
  __declared__, 10,000 nested brackets, an alias bomb, ...), each expecting exit status 1 and a
  message matching a regex (`vin-inspect: error: FILE:LINE:COLUMN: ...`).
- OUTDIR/config_manifest.json: {"cases": [{"name", "input", "command", "args", "format",
  "expected", "expect_exit", "stderr_regex"}, ...]}, read by tests/reference/compare_config.py.
  `input`/`expected` are relative to OUTDIR; `expected` is a jsonl file (for format "json" the
  document is built from it), null for error cases; `stderr_regex` is searched in stderr.
Run with Debian's /usr/bin/python3 (python3-pydantic, python3-torch). Takes a few seconds.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "reference"))

import config_models as cm  # noqa: E402
import config_reference  # noqa: E402
from render_config import render  # noqa: E402

MANIFEST = "config_manifest.json"
# how each configuration is rendered: `target_type` as !!python/name:... or as a plain string
TARGET_STYLE = {"deep": "string"}
ARCHIVES = ("example", "kitchen_sink")  # also saved as NAME.pt with the rendering inside


def spec(config_type, target_type):
    return {"record": "ModelStructureSpec", "config_type": config_type, "target_type": target_type}


def field(path, declared, configured, value):
    return {"record": "ConfigFieldSpec", "path": path, "declared_type": declared,
            "configured_type": configured, "value": value}


def marker(name):
    return {"type_marker": name}


# --- hand-written renderings and their records ------------------------------------------------

# No __declared__: every mapping with a tag of its own is a model (walked, document order,
# declared_type null); untagged scalars by the YAML 1.2 core schema; YAML's tags force a type.
CORE_SCHEMA_YAML = """\
!hand.Scalars
target_type: ~
octal: 0o17
hex: 0x1F
plus: +5
zeros: 007
negzero: -0
under: 1_000
half: .5
one_dot: 1.
exp: 1e3
quoted_exp: "1e3"
single: 'true'
null_word: NULL
tilde: ~
empty:
true_word: True
yes_word: Yes
binary: 0b11
ninf: -.inf
nan: .NaN
huge: 123456789012345678901234567890
neg_huge: -9223372036854775809
int64_min: -9223372036854775808
forced_str: !!str 12
forced_int: !!int "7"
forced_float: !!float 1
forced_bool: !!bool "false"
forced_null: !!null ""
level: !hand.Level 2
act: !hand.Act relu
point: !hand.Point {x: 1}
plain: {x: 1}
tup: !builtins.tuple [1, !hand.Point {x: 2}]
"""


def core_schema_records():
    def f(name, configured, value):
        return field([name], None, configured, value)

    i, fl, s, n, b = "builtins.int", "builtins.float", "builtins.str", "builtins.NoneType", \
        "builtins.bool"
    return [
        spec("hand.Scalars", None),
        f("target_type", n, None),
        f("octal", i, 15), f("hex", i, 31), f("plus", i, 5), f("zeros", i, 7), f("negzero", i, 0),
        f("under", s, "1_000"), f("half", fl, 0.5), f("one_dot", fl, 1.0), f("exp", fl, 1000.0),
        f("quoted_exp", s, "1e3"), f("single", s, "true"), f("null_word", n, None),
        f("tilde", n, None), f("empty", n, None), f("true_word", b, True), f("yes_word", s, "Yes"),
        f("binary", s, "0b11"), f("ninf", fl, "-Infinity"), f("nan", fl, "NaN"),
        f("huge", i, "123456789012345678901234567890"),
        f("neg_huge", i, "-9223372036854775809"), f("int64_min", i, -9223372036854775808),
        f("forced_str", s, "12"), f("forced_int", i, 7), f("forced_float", fl, 1.0),
        f("forced_bool", b, False), f("forced_null", n, None),
        f("level", "hand.Level", 2), f("act", "hand.Act", "relu"),
        f("point", "hand.Point", marker("hand.Point")),
        field(["point", "x"], None, i, 1),
        f("plain", "builtins.dict", marker("builtins.dict")),
        f("tup", "builtins.tuple", marker("builtins.tuple")),
        field(["tup", "1", "x"], None, i, 2),
    ]


# An untagged root: read leniently (every mapping walked, config_type null, only the root's
# target_type fills ModelStructureSpec.target_type).
LENIENT_YAML = """\
target_type: hand.Net
width: 3
encoder:
  target_type: !!python/name:hand.Encoder ''
  depth: 2
blocks:
  - {k: 1}
  - 5
  - !hand.Block {k: 2}
"""


def lenient_records():
    return [
        spec(None, "hand.Net"),
        field(["target_type"], None, "builtins.type", marker("hand.Net")),
        field(["width"], None, "builtins.int", 3),
        field(["encoder"], None, "builtins.dict", marker("builtins.dict")),
        field(["encoder", "target_type"], None, "builtins.type", marker("hand.Encoder")),
        field(["encoder", "depth"], None, "builtins.int", 2),
        field(["blocks"], None, "builtins.list", marker("builtins.list")),
        field(["blocks", "0", "k"], None, "builtins.int", 1),
        field(["blocks", "2", "k"], None, "builtins.int", 2),
    ]


# Declaration order wins over document order; undeclared keys follow in document order; a tag
# that __declared__ does not name is a value, not walked.
DECLARED_ORDER_YAML = """\
!hand.M
z: 1
extra: 2
a: 3
sub: !hand.N {q: 1, p: 2}
other: !hand.Unknown {r: 1}
__declared__:
  hand.M:
    a: int
    z: int
    sub: hand.N
    other: Any
  hand.N:
    p: int
    q: int
"""


def declared_order_records():
    return [
        spec("hand.M", None),
        field(["a"], "int", "builtins.int", 3),
        field(["z"], "int", "builtins.int", 1),
        field(["sub"], "hand.N", "hand.N", marker("hand.N")),
        field(["sub", "p"], "int", "builtins.int", 2),
        field(["sub", "q"], "int", "builtins.int", 1),
        field(["other"], "Any", "hand.Unknown", marker("hand.Unknown")),
        field(["extra"], None, "builtins.int", 2),
    ]


# Integers beyond 64 bits written in hex keep their *decimal* digits.
BIG_HEX_YAML = """\
!hand.M
u64_max: 0xFFFFFFFFFFFFFFFF
beyond: 0x1FFFFFFFFFFFFFFFF
"""


def big_hex_records():
    return [
        spec("hand.M", None),
        field(["u64_max"], None, "builtins.int", str(2 ** 64 - 1)),
        field(["beyond"], None, "builtins.int", str(2 ** 65 - 1)),
    ]


HAND_WRITTEN = {
    "core_schema": (CORE_SCHEMA_YAML, core_schema_records),
    "lenient": (LENIENT_YAML, lenient_records),
    "declared_order": (DECLARED_ORDER_YAML, declared_order_records),
    "big_hex": (BIG_HEX_YAML, big_hex_records),
}


# --- bad inputs -------------------------------------------------------------------------------

def alias_bomb() -> str:
    """Billion laughs through models: every level is a model whose ten fields alias the level
    below, so walking the last one would record 10^9 fields (no __declared__: every mapping with
    a tag is a model)."""
    keys = "abcdefghij"
    lines = ["!bomb.Root", "l0: &l0 !bomb.M {" + ", ".join(f"{k}: lol" for k in keys) + "}"]
    for level in range(1, 10):
        body = ", ".join(f"{k}: *l{level - 1}" for k in keys)
        lines.append(f"l{level}: &l{level} !bomb.M {{{body}}}")
    return "\n".join(lines) + "\n"


DEPTH = 10000
# name -> (file contents (str or bytes), stderr regex); every one expects exit status 1
BAD = {
    # an unclosed flow sequence on line 3, at the end of the file: reported on line 3 or 4
    "malformed_unclosed.yaml": ("!hand.M\na: 1\nb: [1, 2\n",
                                r"malformed_unclosed\.yaml:[34]:\d+: "),
    "malformed_mismatch.yaml": ("!hand.M\na: 1\nb: [1, 2}\nc: 3\n",
                                r"malformed_mismatch\.yaml:3:\d+: "),
    "malformed_indent.yaml": ("!hand.M\na:\n  b: 1\n c: 2\n", r"malformed_indent\.yaml:4:\d+: "),
    "root_sequence.yaml": ("- 1\n- 2\n", r"root_sequence\.yaml:1:1: .*mapping"),
    "root_scalar.yaml": ("!hand.M 42\n", r"root_scalar\.yaml:1:\d+: .*mapping"),
    "empty.yaml": ("", r"empty\.yaml:1:1: "),
    # `missing_bias` is declared for hand.Head, whose mapping (line 3) has no such key
    "declared_missing.yaml": (
        "!hand.M\nwidth: 3\nhead: !hand.Head {classes: 2}\n__declared__:\n  hand.M:\n"
        "    width: int\n    head: hand.Head\n  hand.Head:\n    classes: int\n"
        "    missing_bias: bool\n",
        r"declared_missing\.yaml:3:\d+: .*missing_bias"),
    "declared_missing_root.yaml": (
        "!hand.M\nwidth: 3\n__declared__:\n  hand.M:\n    width: int\n    missing_depth: int\n",
        r"declared_missing_root\.yaml:[12]:\d+: .*missing_depth"),
    "declared_entry_sequence.yaml": (
        "!hand.M\na: 1\nb: 2\n__declared__:\n  hand.M: [a, b]\n",
        r"declared_entry_sequence\.yaml:5:\d+: "),
    "declared_value_not_string.yaml": (
        "!hand.M\na: 1\nb: 2\n__declared__:\n  hand.M:\n    a: [int]\n    b: int\n",
        r"declared_value_not_string\.yaml:6:\d+: "),
    "declared_not_mapping.yaml": (
        "!hand.M\na: 1\n__declared__:\n  - hand.M\n", r"declared_not_mapping\.yaml:4:\d+: "),
    "deep_nesting.yaml": ("!hand.M\na: " + "[" * DEPTH + "]" * DEPTH + "\n",
                          r"deep_nesting\.yaml:2:\d+: "),
    "alias_bomb.yaml": (alias_bomb(), r"alias_bomb\.yaml:\d+:\d+: "),
    # beyond the brief's list; each is bad YAML 1.2 (unique keys, UTF-8, one document)
    "duplicate_key.yaml": ("!hand.M\na: 1\na: 2\n", r"duplicate_key\.yaml:3:\d+: "),
    "invalid_utf8.yaml": (b"!hand.M\na: \xff\xfe\n", r"invalid_utf8\.yaml:2:\d+: "),
    "two_documents.yaml": ("!hand.M\na: 1\n---\n!hand.M\na: 2\n", r"two_documents\.yaml:3:1: a rendering is one YAML document"),
}


# --- writing ----------------------------------------------------------------------------------

def write(path: str, data) -> None:
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def write_jsonl(path: str, records: list) -> None:
    write(path, "".join(config_reference.dumps(r) + "\n" for r in records))


def case(name, input_, expected=None, expect_exit=0, stderr_regex=None, command="inspect-config",
         args=(), format_="jsonl"):
    return {"name": name, "input": input_, "command": command, "args": list(args),
            "format": format_, "expected": expected, "expect_exit": expect_exit,
            "stderr_regex": stderr_regex}


def save_archive(path: str, rendering) -> None:
    import torch  # only here: the rest needs no torch

    torch.manual_seed(0)
    module = torch.jit.script(torch.nn.Linear(2, 2))
    extra = {} if rendering is None else {"config.yaml": rendering}
    torch.jit.save(module, path, _extra_files=extra)


def main(argv) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    cases = []
    renderings = {}
    for name, build in cm.BUILDERS.items():
        config = build()
        renderings[name] = render(config, target_style=TARGET_STYLE.get(name, "name"))
        write(os.path.join(out, name + ".yaml"), renderings[name])
        write_jsonl(os.path.join(out, name + ".expected.jsonl"), config_reference.records(config))
        cases.append(case(name, name + ".yaml", name + ".expected.jsonl"))

    # the same records from other spellings of the same input
    write(os.path.join(out, "example_string_target.yaml"),
          render(cm.build_example(), target_style="string"))
    cases.append(case("example_string_target", "example_string_target.yaml",
                      "example.expected.jsonl"))
    write(os.path.join(out, "example.yml"), renderings["example"])
    cases.append(case("example_yml", "example.yml", "example.expected.jsonl"))
    cases.append(case("example_alias", "example.yaml", "example.expected.jsonl", command="config"))
    cases.append(case("example_json", "example.yaml", "example.expected.jsonl",
                      args=["--format", "json"], format_="json"))
    cases.append(case("kitchen_sink_json", "kitchen_sink.yaml", "kitchen_sink.expected.jsonl",
                      args=["--format", "json"], format_="json"))

    for name in ARCHIVES:
        save_archive(os.path.join(out, name + ".pt"), renderings[name])
        cases.append(case(name + "_archive", name + ".pt", name + ".expected.jsonl"))
    save_archive(os.path.join(out, "no_config.pt"), None)
    cases.append(case("no_config_archive", "no_config.pt", expect_exit=1,
                      stderr_regex=r"no_config\.pt.*config\.yaml"))

    for name, (text, records) in HAND_WRITTEN.items():
        write(os.path.join(out, name + ".yaml"), text)
        write_jsonl(os.path.join(out, name + ".expected.jsonl"), records())
        cases.append(case(name, name + ".yaml", name + ".expected.jsonl"))

    for file_name, (data, regex) in BAD.items():
        write(os.path.join(out, file_name), data)
        cases.append(case(os.path.splitext(file_name)[0], file_name, expect_exit=1,
                          stderr_regex=regex))
    cases.append(case("missing_file", "does_not_exist.yaml", expect_exit=1,
                      stderr_regex=r"does_not_exist\.yaml"))

    with open(os.path.join(out, MANIFEST), "w") as f:
        json.dump({"cases": cases}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(cases)} inspect-config cases to {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
