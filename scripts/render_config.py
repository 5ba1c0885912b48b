#!/usr/bin/python3
"""Renders a Pydantic configuration as the YAML that `vin-inspect inspect-config` reads
(docs/config-rendering.md).

usage: render_config.py [--target-style name|string] MODULE:FACTORY

MODULE is imported from the current directory / sys.path (or loaded from a file when it ends in
.py), FACTORY() is called, and the rendering of the configuration it returns is printed.

Embed the rendering in the archive at export time, so that `vin-inspect inspect-config` can read
it from the archive without loading the model:

    from render_config import render

    cfg = NetConfig(...)
    m = torch.jit.script(cfg.target_type(cfg))
    torch.jit.save(m, "net.pt", _extra_files={"config.yaml": render(cfg)})

What is written:
- the root model as a block mapping tagged with its fully qualified type (`!pkg.NetConfig`), its
  fields in declaration order, then any extra (undeclared) fields Pydantic kept, then
  `__declared__`: every model type the walk reaches (root first, then in walk order) mapped to its
  fields' annotations in declaration order, written like `List[pkg.HeadConfig]`,
  `Optional[int]`, `Literal['a', 'b']`, `Dict[str, int]`, `Type[pkg.Net]` (builtins plain).
- nested models as tagged mappings (`!pkg.HeadConfig`); enum members as tagged scalars
  (`!pkg.Activation relu`, `!pkg.Level 2`); other subclasses of str/int/float (not enums) the same
  way; exact str/int/float/bool/None as plain YAML 1.2 core scalars (strings quoted whenever the
  core schema, or YAML 1.1, would read them as something else); non-finite floats as
  `.nan`/`.inf`/`-.inf`; integers exact, however large.
- a class in a field named `target_type` as `!!python/name:pkg.Net ''` (or, with
  target_style="string", as the plain string `pkg.Net`); a class anywhere else as the tagged
  scalar `!builtins.type pkg.Net`.
- lists as block sequences; tuples, sets and other sequence types as sequences tagged with their
  type (`!builtins.tuple`); dicts as plain mappings (keys and values rendered the same way; other
  mapping types tagged); dataclasses as mappings of their fields tagged with their type; any other
  object as an empty mapping tagged with its type (`!pkg.Thing {}`): the walk does not look inside
  any of these.
Only block style is used (empty collections are `[]` / `{}`), so every line is easy to read.

Works with the Pydantic 1.x API (`__fields__`, `ModelField.annotation`) and the 2.x API
(`model_fields`, `FieldInfo.annotation`, `model_extra`), chosen per model class at run time.
Run with Debian's /usr/bin/python3 (python3-pydantic).
"""
from __future__ import annotations

import argparse
import collections
import collections.abc
import dataclasses
import enum
import importlib
import importlib.util
import math
import os
import re
import sys
import types
import typing

__all__ = [
    "render",
    "qualified_name",
    "annotation_text",
    "is_model",
    "model_items",
    "model_annotations",
    "is_sequence",
    "sequence_items",
    "enum_scalar",
    "load_factory",
]

DECLARED_KEY = "__declared__"
TARGET_TYPE_KEY = "target_type"
_MAX_DEPTH = 200  # nesting of rendered values; deeper is a cycle or a mistake

# --- Pydantic, 1.x or 2.x ---------------------------------------------------------------------

_model_bases: typing.Optional[tuple] = None


def _bases() -> tuple:
    """The installed Pydantic's BaseModel classes (2.x also ships the 1.x API as pydantic.v1)."""
    global _model_bases
    if _model_bases is None:
        found = []
        for name in ("pydantic", "pydantic.v1"):
            try:
                base = getattr(importlib.import_module(name), "BaseModel", None)
            except ImportError:
                continue
            if isinstance(base, type) and base not in found:
                found.append(base)
        _model_bases = tuple(found)
    return _model_bases


def is_model(value) -> bool:
    """True for a Pydantic model instance (not a model class)."""
    return not isinstance(value, type) and isinstance(value, _bases())


def _v2_fields(cls) -> typing.Optional[dict]:
    """A 2.x model class's fields (name -> FieldInfo, declaration order); None for 1.x ones."""
    for attribute in ("model_fields", "__pydantic_fields__"):
        fields = getattr(cls, attribute, None)
        if isinstance(fields, dict):
            return fields
    return None


def model_annotations(cls) -> typing.List[typing.Tuple[str, object]]:
    """(field name, annotation) of a model class, in declaration order (inherited fields first)."""
    fields = _v2_fields(cls)
    if fields is not None:
        return [(name, info.annotation) for name, info in fields.items()]
    out = []
    for name, field in cls.__fields__.items():  # 1.x: name -> ModelField
        annotation = getattr(field, "annotation", None)  # 1.10+; older ones: the outer type
        out.append((name, field.outer_type_ if annotation is None else annotation))
    return out


def model_items(model) -> typing.List[typing.Tuple[str, object, bool]]:
    """(name, value, declared) of a model instance: its fields in declaration order, then the
    extra fields it keeps (`extra = "allow"`), in insertion order. Names starting with `_` are
    left out (Pydantic fields never start with one)."""
    cls = type(model)
    declared = [name for name, _ in model_annotations(cls)]
    items = [(name, getattr(model, name), True) for name in declared]
    if _v2_fields(cls) is not None:
        extra = getattr(model, "model_extra", None) or {}
    else:
        names = set(declared)
        extra = {k: v for k, v in model.__dict__.items() if k not in names}
    for name, value in extra.items():
        if isinstance(name, str) and not name.startswith("_"):
            items.append((name, value, False))
    return items


# --- names ------------------------------------------------------------------------------------

def qualified_name(cls) -> str:
    """`module.QualName` of a class (`builtins.int`, `builtins.NoneType`, `pkg.Outer.Inner`)."""
    module = getattr(cls, "__module__", None) or "builtins"
    name = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", None) or repr(cls)
    return f"{module}.{name}"


_GENERIC_NAMES = {
    list: "List", dict: "Dict", tuple: "Tuple", set: "Set", frozenset: "FrozenSet", type: "Type",
    collections.deque: "Deque", collections.defaultdict: "DefaultDict",
    collections.OrderedDict: "OrderedDict", collections.Counter: "Counter",
    collections.ChainMap: "ChainMap",
    collections.abc.Sequence: "Sequence", collections.abc.MutableSequence: "MutableSequence",
    collections.abc.Mapping: "Mapping", collections.abc.MutableMapping: "MutableMapping",
    collections.abc.Set: "AbstractSet", collections.abc.MutableSet: "MutableSet",
    collections.abc.Iterable: "Iterable", collections.abc.Iterator: "Iterator",
    collections.abc.Collection: "Collection", collections.abc.Container: "Container",
    collections.abc.Callable: "Callable", collections.abc.Generator: "Generator",
    collections.abc.Awaitable: "Awaitable", collections.abc.Coroutine: "Coroutine",
    collections.abc.AsyncIterable: "AsyncIterable", collections.abc.AsyncIterator: "AsyncIterator",
    collections.abc.KeysView: "KeysView", collections.abc.ValuesView: "ValuesView",
    collections.abc.ItemsView: "ItemsView", re.Pattern: "Pattern", re.Match: "Match",
}
_UNION_TYPES = (typing.Union,) + ((types.UnionType,) if hasattr(types, "UnionType") else ())
_NONE_TYPE = type(None)
_ANNOTATED = getattr(typing, "Annotated", None)  # 3.9+


def _literal_text(value) -> str:
    if isinstance(value, enum.Enum):
        return f"{qualified_name(type(value))}.{value.name}"
    return repr(value)


def annotation_text(tp) -> str:
    """A field annotation written as people write it: `int`, `Optional[float]`,
    `List[pkg.HeadConfig]`, `Union[pkg.A, pkg.B]`, `Literal['a', 'b']`, `Type[pkg.Net]`."""
    if tp is None or tp is _NONE_TYPE:
        return "None"
    if tp is typing.Any:
        return "Any"
    if tp is Ellipsis:
        return "..."
    if isinstance(tp, str):
        return tp  # an annotation left as a string
    if isinstance(tp, typing.ForwardRef):
        return tp.__forward_arg__
    if isinstance(tp, typing.TypeVar):
        return tp.__name__
    if isinstance(tp, list):  # the parameter list of Callable[[...], R]
        return "[" + ", ".join(annotation_text(a) for a in tp) + "]"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is not None and origin is _ANNOTATED:
        return annotation_text(args[0])
    if origin in _UNION_TYPES:
        rest = [a for a in args if a is not _NONE_TYPE]
        inner = annotation_text(rest[0]) if len(rest) == 1 else \
            "Union[" + ", ".join(annotation_text(a) for a in rest) + "]"
        return f"Optional[{inner}]" if len(rest) < len(args) else inner
    if origin is typing.Literal:
        return "Literal[" + ", ".join(_literal_text(a) for a in args) + "]"
    if origin is typing.ClassVar or origin is getattr(typing, "Final", None):
        name = "ClassVar" if origin is typing.ClassVar else "Final"
        return f"{name}[{', '.join(annotation_text(a) for a in args)}]"
    if origin is not None:
        name = _GENERIC_NAMES.get(origin) or (
            origin.__qualname__ if getattr(origin, "__module__", None) == "builtins"
            else qualified_name(origin))
        if not args:
            # Tuple[()] has parameters (none); a bare Tuple / List has no __args__ at all
            return f"{name}[()]" if origin is tuple and hasattr(tp, "__args__") else name
        return f"{name}[{', '.join(annotation_text(a) for a in args)}]"
    if isinstance(tp, type):
        return tp.__qualname__ if tp.__module__ == "builtins" else qualified_name(tp)
    if hasattr(tp, "__supertype__"):  # typing.NewType
        return getattr(tp, "__qualname__", None) or tp.__name__
    text = repr(tp)
    return text[len("typing."):] if text.startswith("typing.") else text


# --- values -----------------------------------------------------------------------------------

def is_sequence(value) -> bool:
    """Values rendered as YAML sequences (the walk looks for models directly inside them)."""
    return isinstance(value, (list, tuple, set, frozenset, collections.deque))


def sequence_items(value) -> list:
    """The items of a sequence value in rendering order: sets sorted when their items allow it."""
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    return list(value)


def _plain_scalar(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def enum_scalar(member: enum.Enum):
    """What an enum member's tagged scalar holds: its value when that is a scalar, else its name."""
    value = member.value
    if isinstance(value, enum.Enum) or not _plain_scalar(value):
        return member.name
    return value


# YAML 1.2 core schema (and YAML 1.1 words, so that 1.1 readers agree): plain scalars that do not
# read back as a string.
_NOT_A_STRING = {"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n"}
_PLAIN_START = re.compile(r"[A-Za-z_/]")


def _plain_ok(text: str) -> bool:
    if not text or not _PLAIN_START.match(text) or text.lower() in _NOT_A_STRING:
        return False
    if text != text.strip() or ":" in text or " #" in text:
        return False
    return all(" " <= c <= "~" for c in text)


_ESCAPES = {"\0": "\\0", "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\v": "\\v",
            "\f": "\\f", "\r": "\\r", "\x1b": "\\e", '"': '\\"', "\\": "\\\\"}


def _double_quoted(text: str) -> str:
    out = ['"']
    for c in text:
        o = ord(c)
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif 0xD800 <= o <= 0xDFFF:
            raise ValueError(f"string {text[:80]!r} holds a lone surrogate; it has no UTF-8 form")
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            out.append(f"\\x{o:02x}")
        elif o in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF):
            out.append(f"\\u{o:04x}")
        else:
            out.append(c)
    out.append('"')
    return "".join(out)


def _str_text(text: str) -> str:
    return text if _plain_ok(text) else _double_quoted(text)


def _float_text(value: float) -> str:
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    text = repr(value)  # shortest round-trip form: '0.1', '100.0', '1e+22', '5e-324'
    if "." not in text:  # '1e+22' is a YAML 1.2 float; '1.0e+22' is one for YAML 1.1 readers too
        text = text.replace("e", ".0e", 1)
    return text


def _builtin_scalar_text(value) -> str:
    """A None/bool/int/float/str (or subclass, read as its base type) as an untagged scalar."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float_text(float(value))
    return _str_text(str.__str__(value))


# characters a tag shorthand may hold (YAML 1.2 ns-tag-char); others are %-escaped
_TAG_CHARS = re.compile(r"[A-Za-z0-9\-#;/?:@&=+$_.~*'()%]")


def _tag(name: str) -> str:
    return "".join(c if _TAG_CHARS.fullmatch(c) and c != "%" else
                   "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in name)


# --- the renderer -----------------------------------------------------------------------------

Node = typing.Tuple[str, typing.Optional[typing.List[str]]]  # (text on the line, block lines)


def _indent(lines: typing.List[str], by: int = 2) -> typing.List[str]:
    pad = " " * by
    return [pad + line for line in lines]


def _mapping_lines(items: typing.List[typing.Tuple[Node, Node]]) -> typing.List[str]:
    lines = []
    for (key_head, key_body), (head, body) in items:
        if key_body is None and len(key_head) <= 1000:
            lines.append(f"{key_head}: {head}".rstrip() if head else f"{key_head}:")
        else:  # a key that cannot be an implicit one: explicit `? key` / `: value`
            lines.append(f"? {key_head}".rstrip())
            lines.extend(_indent(key_body or []))
            lines.append(f": {head}".rstrip())
        lines.extend(_indent(body or []))
    return lines


def _sequence_lines(items: typing.List[Node]) -> typing.List[str]:
    lines = []
    for head, body in items:
        lines.append(f"- {head}".rstrip())
        lines.extend(_indent(body or []))
    return lines


def _with_tag(tag: typing.Optional[str], node: Node) -> Node:
    if tag is None:
        return node
    head, body = node
    return (f"!{_tag(tag)} {head}".rstrip(), body)


class _Renderer:
    def __init__(self, target_style: str):
        if target_style not in ("name", "string"):
            raise ValueError(f"target_style must be 'name' or 'string', not {target_style!r}")
        self.target_style = target_style
        self.declared: typing.Dict[str, typing.List[typing.Tuple[str, str]]] = {}
        self.declared_types: typing.Dict[str, type] = {}
        self.active: typing.List[int] = []

    def declare(self, cls) -> None:
        name = qualified_name(cls)
        known = self.declared_types.get(name)
        if known is cls:
            return
        if known is not None:
            raise ValueError(f"two model types are both named {name}; the rendering cannot "
                             "tell them apart")
        self.declared_types[name] = cls
        self.declared[name] = [(field, annotation_text(tp))
                               for field, tp in model_annotations(cls)]

    def model(self, model, walked: bool) -> Node:
        """A model's fields as block-mapping lines (its tag is added by the caller)."""
        if walked:
            self.declare(type(model))
        items = []
        for name, value, _ in model_items(model):
            if name == TARGET_TYPE_KEY and isinstance(value, type):
                node = self.target(value)
            else:
                node = self.value(value, walked=walked)
            items.append(((_str_text(name), None), node))
        if not items:
            return ("{}", None)
        return ("", _mapping_lines(items))

    def target(self, cls: type) -> Node:
        name = qualified_name(cls)
        if self.target_style == "string":
            return (_str_text(name), None)
        return (f"!!python/name:{_tag(name)} ''", None)

    def value(self, value, walked: bool = False) -> Node:
        """Any field value. `walked`: the value sits where inspect-config walks into models (a
        model's field, or an item directly in a sequence that is one)."""
        if value is None or type(value) in (bool, int, float, str):
            return (_builtin_scalar_text(value), None)
        if isinstance(value, enum.Enum):
            return _with_tag(qualified_name(type(value)),
                             (_builtin_scalar_text(enum_scalar(value)), None))
        if isinstance(value, type):
            return _with_tag("builtins.type", (_str_text(qualified_name(value)), None))
        if isinstance(value, (bool, int, float, str)):  # str/int/float subclasses: tagged scalars
            return _with_tag(qualified_name(type(value)), (_builtin_scalar_text(value), None))
        if id(value) in self.active:
            raise ValueError(f"the configuration refers to itself (a {qualified_name(type(value))} "
                             "holds itself); it cannot be rendered")
        if len(self.active) >= _MAX_DEPTH:
            raise ValueError(f"the configuration nests deeper than {_MAX_DEPTH} levels")
        self.active.append(id(value))
        try:
            return self._structured(value, walked)
        finally:
            self.active.pop()

    def _structured(self, value, walked: bool) -> Node:
        cls = type(value)
        if is_model(value):
            return _with_tag(qualified_name(cls), self.model(value, walked))
        if is_sequence(value):
            items = [self.value(item, walked=walked and is_model(item))
                     for item in sequence_items(value)]
            node = (("[]", None) if not items else ("", _sequence_lines(items)))
            return _with_tag(None if cls is list else qualified_name(cls), node)
        if isinstance(value, collections.abc.Mapping):
            items = [(self.key(k), self.value(v)) for k, v in value.items()]
            node = ("{}", None) if not items else ("", _mapping_lines(items))
            return _with_tag(None if cls is dict else qualified_name(cls), node)
        if dataclasses.is_dataclass(value):
            items = [((_str_text(f.name), None), self.value(getattr(value, f.name)))
                     for f in dataclasses.fields(value)]
            node = ("{}", None) if not items else ("", _mapping_lines(items))
            return _with_tag(qualified_name(cls), node)
        return _with_tag(qualified_name(cls), ("{}", None))

    def key(self, key) -> Node:
        return self.value(key)  # a collection (or a long string) becomes an explicit `? key`

    def root(self, config) -> str:
        if not is_model(config):
            raise TypeError(f"render() takes a Pydantic model instance, not {type(config)!r}")
        self.active.append(id(config))
        head, body = self.model(config, walked=True)
        lines = [f"!{_tag(qualified_name(type(config)))}"]
        lines.extend(body or [])
        declared = [((_str_text(model), None),
                     ("", _mapping_lines([((_str_text(f), None), (_str_text(t), None))
                                          for f, t in fields])) if fields else ("{}", None))
                    for model, fields in self.declared.items()]
        lines.extend(_mapping_lines([((DECLARED_KEY, None), ("", _mapping_lines(declared)))]))
        return "\n".join(lines) + "\n"


def render(config, *, target_style: str = "name") -> str:
    """The YAML rendering (docs/config-rendering.md) of a Pydantic model instance (see the module docstring).

    target_style: "name" writes a `target_type` class as `!!python/name:pkg.Net ''` (PyYAML's
    form), "string" as the plain string `pkg.Net`.
    """
    return _Renderer(target_style).root(config)


# --- command line -----------------------------------------------------------------------------

def load_factory(spec: str):
    """`MODULE:FACTORY` -> the callable. MODULE is a module name (imported with the current
    directory first on sys.path) or a path to a .py file."""
    module_name, sep, factory = spec.rpartition(":")
    if not sep or not module_name or not factory:
        raise ValueError(f"expected MODULE:FACTORY, got {spec!r}")
    if module_name.endswith(".py") or os.sep in module_name:
        path = os.path.abspath(module_name)
        name = os.path.splitext(os.path.basename(path))[0]
        sys.path.insert(0, os.path.dirname(path))
        module = sys.modules.get(name)
        if module is None or os.path.abspath(getattr(module, "__file__", "") or "") != path:
            spec_ = importlib.util.spec_from_file_location(name, path)
            if spec_ is None or spec_.loader is None:
                raise ImportError(f"cannot load {path}")
            module = importlib.util.module_from_spec(spec_)
            sys.modules[name] = module
            spec_.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(module_name)
    fn = getattr(module, factory, None)
    if not callable(fn):
        raise AttributeError(f"{module_name} has no callable {factory!r}")
    return fn


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Print the YAML rendering of a Pydantic config.")
    parser.add_argument("factory", metavar="MODULE:FACTORY")
    parser.add_argument("--target-style", choices=("name", "string"), default="name",
                        help="target_type as !!python/name:pkg.Cls '' (name) or a plain string")
    args = parser.parse_args(argv)
    try:
        factory = load_factory(args.factory)
    except (ValueError, ImportError, AttributeError) as exc:
        parser.error(str(exc))
    try:
        text = render(factory(), target_style=args.target_style)
    except (TypeError, ValueError) as exc:
        print(f"render_config.py: error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write(text.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
