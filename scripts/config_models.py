"""Pydantic configurations for the inspect-config tests (scripts/make_config_fixtures.py).

Every `build_NAME()` returns one configuration; BUILDERS lists them by NAME. Written against the
Pydantic 1.x API (Debian's python3-pydantic), kept to what 2.x accepts too where that is easy.

`build_example()` (also `example_config()`) is the configuration of the worked example
(../shared/docs/examples/config.yaml): its classes carry the example's qualified names
(`tinynet.configs.TinyNetConfig`, target `tinynet.TinyNet`) through `__module__`.
"""
import collections
import dataclasses
import enum
from typing import Any, Dict, List, Literal, Optional, Tuple, Type, Union

import pydantic
from pydantic import AnyUrl, BaseModel

PYDANTIC_2 = int(pydantic.VERSION.split(".")[0]) >= 2
if PYDANTIC_2:
    from pydantic import ConfigDict


# --- the worked example's configuration -----------------------------------------------------

class TinyNet:
    """Stands for the example's model class (only its qualified name matters here)."""
    __module__ = "tinynet"


class Activation(str, enum.Enum):
    __module__ = "tinynet.configs"
    relu = "relu"
    gelu = "gelu"


class BlockConfig(BaseModel):
    __module__ = "tinynet.configs"
    width: int
    activation: Activation


class HeadConfig(BaseModel):
    __module__ = "tinynet.configs"
    classes: int
    bias: bool


class TinyNetConfig(BaseModel):
    __module__ = "tinynet.configs"
    target_type: Type[TinyNet] = TinyNet
    width: int = 3
    blocks: List[BlockConfig]
    head: HeadConfig
    dropout: Optional[float] = None
    tags: Dict[str, Any] = {}


def build_example() -> TinyNetConfig:
    return TinyNetConfig(
        width=3,
        blocks=[BlockConfig(width=3, activation=Activation.relu),
                BlockConfig(width=3, activation="gelu")],
        head=HeadConfig(classes=2, bias=False),
        tags={"owner": "vision", "stage": 2},
    )


example_config = build_example


# --- the kitchen sink -----------------------------------------------------------------------

class Net:
    """Target classes: only their qualified names reach the rendering."""


class ConvEncoder:
    pass


class ViTEncoder:
    pass


class Loss:
    pass


class Level(enum.IntEnum):
    low = 1
    high = 2


class Mode(str, enum.Enum):
    train = "train"
    one = "1"        # a value that looks like a number: must stay a string
    yes = "true"     # and one that looks like a bool


class Scale(enum.Enum):
    half = 0.5
    whole = 1.0


@dataclasses.dataclass
class Point:
    x: int = 0
    y: float = 0.0
    label: str = "origin"


class Opaque:
    """An arbitrary object (arbitrary_types_allowed): rendered as its type only."""

    def __init__(self, secret: int = 7):
        self.secret = secret


class Empty(BaseModel):
    pass


class ConvEncoderConfig(BaseModel):
    target_type: Type[ConvEncoder] = ConvEncoder
    channels: int = 64
    activation: Activation = Activation.relu
    kernel: Tuple[int, int] = (3, 3)


class ViTEncoderConfig(BaseModel):
    target_type: Type[ViTEncoder] = ViTEncoder
    patch: int
    depth: int = 12
    heads: Optional[int] = None


class Outer:
    """Gives a nested qualified name: config_models.Outer.InnerConfig."""

    class InnerConfig(BaseModel):
        level: Level = Level.low
        scale: Scale = Scale.half
        note: Optional[str] = None


class HeadSpec(BaseModel):
    classes: int
    bias: bool = True
    loss: Optional[Type[Loss]] = None
    inner: Outer.InnerConfig = Outer.InnerConfig()


class KitchenSinkConfig(BaseModel):
    if PYDANTIC_2:
        model_config = ConfigDict(arbitrary_types_allowed=True)  # 2.x unions are smart already
    else:
        class Config:
            arbitrary_types_allowed = True
            smart_union = True  # keep a ViTEncoderConfig a ViTEncoderConfig

    target_type: Type[Net] = Net
    name: str = "sink"
    encoder: Union[ConvEncoderConfig, ViTEncoderConfig]
    heads: List[HeadSpec]
    heads_by_name: Dict[str, HeadSpec] = {}
    mixed: List[Union[HeadSpec, int, None]] = []
    pair: Tuple[HeadSpec, ...] = ()
    grid: List[List[int]] = []
    counts: Dict[str, int] = {}
    mode: Mode = Mode.train
    level: Level = Level.high
    choice: Literal["a", "b"] = "a"
    dropout: Optional[float] = None
    momentum: Optional[float] = 0.9
    shape: Tuple[int, float, str] = (1, 2.5, "x")
    origin: Point = Point()
    opaque: Opaque = Opaque()
    loss_cls: Type[Loss] = Loss
    empty: Empty = Empty()
    nothing: Optional[Empty] = None
    ordered: Dict[str, int] = collections.OrderedDict([("z", 1), ("a", 2)])
    homepage: Optional[AnyUrl] = None  # 1.x: a str subclass, so a tagged scalar


def build_kitchen_sink() -> KitchenSinkConfig:
    return KitchenSinkConfig(
        encoder=ConvEncoderConfig(channels=32, activation=Activation.gelu),
        heads=[HeadSpec(classes=10, loss=Loss),
               HeadSpec(classes=1, bias=False,
                        inner=Outer.InnerConfig(level=Level.high, scale=Scale.whole,
                                                note="1e3"))],
        heads_by_name={"main": HeadSpec(classes=3)},
        mixed=[HeadSpec(classes=4), 5, None, HeadSpec(classes=6, bias=False)],
        pair=(HeadSpec(classes=7), HeadSpec(classes=8)),
        grid=[[1, 2], [], [3]],
        counts={"a": 1, "b": 2, "1": 3, "null": 4},
        mode=Mode.train,
        choice="b",
        origin=Point(1, 2.5, "p"),
        opaque=Opaque(42),
        homepage="https://example.org/vin?x=1",
    )


def build_vit() -> KitchenSinkConfig:
    """The Union's second branch, target_type at three levels, nothing optional set."""
    return KitchenSinkConfig(
        encoder=ViTEncoderConfig(patch=16, heads=4),
        heads=[],
        level=Level.low,
        momentum=None,
    )


class ScalarsConfig(BaseModel):
    """Scalars the YAML must keep exactly: look-alike strings, floats, huge integers."""
    s_int: str = "1"
    s_true: str = "true"
    s_null: str = "null"
    s_float: str = "1e3"
    s_tilde: str = "~"
    s_empty: str = ""
    s_yes: str = "yes"
    s_space: str = " padded "
    s_colon: str = "key: value"
    s_hash: str = "a #comment"
    s_dash: str = "- item"
    s_quote: str = "it's \"quoted\""
    s_lines: str = "line one\nline two\ttab"
    s_unicode: str = "naïve ✓ 😀"
    s_control: str = "bell\x07 nul\x00 del\x7f"
    s_inf: str = ".inf"
    s_hex: str = "0x1F"
    f_nan: float = float("nan")
    f_inf: float = float("inf")
    f_ninf: float = float("-inf")
    f_tenth: float = 0.1
    f_small: float = 1e-7
    f_big: float = 1e22
    f_whole: float = 100.0
    f_negzero: float = -0.0
    f_tiny: float = 5e-324
    f_max: float = 1.7976931348623157e308
    i_big: int = 2 ** 100
    i_negbig: int = -(2 ** 70)
    i_max: int = 2 ** 63 - 1
    i_min: int = -(2 ** 63)
    i_over: int = 2 ** 63          # needs 64 bits unsigned: beyond int64, so a string
    i_zero: int = 0
    b_true: bool = True
    b_false: bool = False
    n_none: Optional[int] = None
    counts: Dict[str, Optional[float]] = {"nan": float("nan"), "none": None}


def build_scalars() -> ScalarsConfig:
    return ScalarsConfig()


class Leaf(BaseModel):
    target_type: Optional[Type[Loss]] = None
    value: int = 0


class Branch(BaseModel):
    target_type: Type[ConvEncoder] = ConvEncoder
    leaves: List[Leaf] = []
    leaf: Leaf = Leaf()


class Trunk(BaseModel):
    target_type: Type[ViTEncoder] = ViTEncoder
    branch: Branch = Branch()
    branches: List[Branch] = []


class DeepConfig(BaseModel):
    """Models within models within lists; target_type at every level (set and unset)."""
    target_type: Type[Net] = Net
    trunk: Trunk
    depth: int = 4


def build_deep() -> DeepConfig:
    return DeepConfig(trunk=Trunk(
        branch=Branch(leaves=[Leaf(value=1), Leaf(target_type=Loss, value=2)]),
        branches=[Branch(), Branch(leaf=Leaf(target_type=Loss, value=3),
                                   leaves=[Leaf(value=4)])]))


class ExtrasConfig(BaseModel):
    """Extra fields kept by Pydantic: no declaration, after the declared ones."""
    if PYDANTIC_2:
        model_config = ConfigDict(extra="allow")
    else:
        class Config:
            extra = "allow"

    declared: int = 1
    child: Optional[HeadSpec] = None


def build_extras() -> ExtrasConfig:
    config = ExtrasConfig(declared=2, child=HeadSpec(classes=2))
    # set one by one: Pydantic 1.x orders extras given to the constructor by a set (hash order)
    for name, value in (("zeta", 3), ("alpha", "1"), ("nested", {"k": [1, 2]}),
                        ("with space", None)):
        setattr(config, name, value)
    return config


class MinimalConfig(BaseModel):
    """No target_type: ModelStructureSpec.target_type is null."""
    size: int = 1


def build_minimal() -> MinimalConfig:
    return MinimalConfig()


class Quoted(str, enum.Enum):
    one = "1"
    null = "null"


class QuotedEnumConfig(BaseModel):
    """String enum values that read as other types when unquoted (`!pkg.Quoted "1"`)."""
    a: Quoted = Quoted.one
    b: Quoted = Quoted.null
    c: List[Quoted] = [Quoted.one]


def build_quoted_enum() -> QuotedEnumConfig:
    return QuotedEnumConfig()


def build_local_class():
    """Classes defined in a function: `<locals>` in their qualified names, which a YAML tag
    holds %-escaped (`!config_models.build_local_class.%3Clocals%3E.LocalConfig`)."""

    class LocalNet:
        pass

    class LocalLeaf(BaseModel):
        x: int = 1

    class LocalConfig(BaseModel):
        target_type: Type[LocalNet] = LocalNet
        leaf: LocalLeaf = LocalLeaf()
        leaves: List[LocalLeaf] = [LocalLeaf(x=2)]

    return LocalConfig()


BUILDERS = {
    "example": build_example,
    "kitchen_sink": build_kitchen_sink,
    "vit": build_vit,
    "scalars": build_scalars,
    "deep": build_deep,
    "extras": build_extras,
    "minimal": build_minimal,
    "quoted_enum": build_quoted_enum,
    "local_class": build_local_class,
}
