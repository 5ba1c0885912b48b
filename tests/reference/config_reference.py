#!/usr/bin/python3
"""vin.diagnostics.model_inspection's `inspect_config`, in Python, on the Pydantic objects themselves: the records
`vin-inspect inspect-config` must print for the YAML rendering (scripts/render_config.py) of the
same configuration.

usage: config_reference.py MODULE:FACTORY   prints the jsonl records of FACTORY()'s config

MODULE is a module name (imported with the current directory first on sys.path) or a .py file.

`records(config)` returns the record dicts, in order: one ModelStructureSpec (`config_type`,
`target_type`), then one ConfigFieldSpec per field (`path`, `declared_type`, `configured_type`,
`value`), depth first: a model's fields in declaration order, then the extra fields it keeps;
each field's record before the records inside it. The walk goes into models held by model fields
and models held directly in sequences (lists, tuples, sets: the item gets no record of its own,
its fields do, under its decimal index); mappings, dataclasses and other objects are not walked.
- `declared_type`: the field's annotation as render_config writes it; null for extra fields.
- `configured_type`: the fully qualified runtime type (`builtins.int`, `builtins.NoneType`, the
  enum or model class); `builtins.type` for a class.
- `value`: the scalar (enum members: their value), with non-finite floats as "NaN",
  "Infinity", "-Infinity" and integers outside int64 as their decimal digits (docs/config-rendering.md, section
  2/6); `{"type_marker": T}` for anything else, T its configured type.
- `target_type` (a class, or a string naming one): `builtins.type`, value
  `{"type_marker": "pkg.Net"}`; the root's one is ModelStructureSpec.target_type.
- A class held by any other field is rendered as the tagged scalar `!builtins.type pkg.Cls`, the
  one form docs/config-rendering.md can express: its value is the string "pkg.Cls".
Run with Debian's /usr/bin/python3 (python3-pydantic).
"""
import enum
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "scripts"))

from render_config import (TARGET_TYPE_KEY, annotation_text, enum_scalar, is_model,  # noqa: E402
                           is_sequence, load_factory, model_annotations, model_items,
                           qualified_name, sequence_items)

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def json_scalar(value):
    """A None/bool/int/float/str (or subclass) as docs/records.md writes it in JSON."""
    if value is None:
        return None
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        number = int(value)
        return number if INT64_MIN <= number <= INT64_MAX else str(number)
    if isinstance(value, float):
        number = float(value)
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        return number
    return str.__str__(value)


def marker(type_name: str) -> dict:
    return {"type_marker": type_name}


def target_name(value):
    """The class a `target_type` field names (a class, or a string), else None."""
    if isinstance(value, type):
        return qualified_name(value)
    if type(value) is str:
        return value
    return None


def configured(name: str, value):
    """(configured_type, value) of one field."""
    if name == TARGET_TYPE_KEY and target_name(value) is not None:
        return "builtins.type", marker(target_name(value))
    if value is None:
        return "builtins.NoneType", None
    if isinstance(value, enum.Enum):
        return qualified_name(type(value)), json_scalar(enum_scalar(value))
    if isinstance(value, type):
        return "builtins.type", qualified_name(value)
    if isinstance(value, (bool, int, float, str)):
        return qualified_name(type(value)), json_scalar(value)
    type_name = qualified_name(type(value))
    return type_name, marker(type_name)


def _walk(model, path: list, out: list) -> None:
    annotations = dict(model_annotations(type(model)))
    for name, value, declared in model_items(model):
        here = path + [name]
        configured_type, shown = configured(name, value)
        out.append({"record": "ConfigFieldSpec", "path": here,
                    "declared_type": annotation_text(annotations[name]) if declared else None,
                    "configured_type": configured_type, "value": shown})
        if name == TARGET_TYPE_KEY and target_name(value) is not None:
            continue
        if is_model(value):
            _walk(value, here, out)
        elif is_sequence(value):
            for index, item in enumerate(sequence_items(value)):
                if is_model(item):
                    _walk(item, here + [str(index)], out)


def records(config) -> list:
    """The ModelStructureSpec record, then every ConfigFieldSpec record, as dicts."""
    if not is_model(config):
        raise TypeError(f"records() takes a Pydantic model instance, not {type(config)!r}")
    target = None
    for name, value, _ in model_items(config):
        if name == TARGET_TYPE_KEY:
            target = target_name(value)
    out = [{"record": "ModelStructureSpec", "config_type": qualified_name(type(config)),
            "target_type": target}]
    _walk(config, [], out)
    return out


def dumps(record: dict) -> str:
    """One jsonl line, laid out as the tool prints it (Python's json.dumps defaults)."""
    return json.dumps(record)


def jsonl(config) -> str:
    return "".join(dumps(r) + "\n" for r in records(config))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        factory = load_factory(argv[0])
    except (ValueError, ImportError, AttributeError) as exc:
        print(f"config_reference.py: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(jsonl(factory()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
