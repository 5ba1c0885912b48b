"""The zoo: every torchvision 0.14 model and torch.nn's recurrent and transformer modules, with the
smallest inputs each accepts. tests/zoo/run_zoo.py checks the tool against Python on each.

Models are built with weights=None and a fixed seed. The weights are not initialised the
torchvision way (truncated normals over 600 million parameters cost minutes): every parameter
and floating buffer gets a cheap deterministic fill of small values, which is all a parity check
needs. Where a builder fixes an input size that the architecture does not need (a ViT's
image_size, a detection model's resize), the smallest size the architecture accepts is passed.
"""
import dataclasses
import inspect
from typing import Callable, Dict, List, Optional, Tuple

import torch
from torch import nn

Inputs = Tuple[tuple, dict]


@dataclasses.dataclass
class ZooCase:
    name: str                        # archive name
    build: Callable[[], nn.Module]   # the eager model, in the mode it is exported in
    inputs: Callable[[], Inputs]     # positional and keyword arguments of one forward
    export: str = "script"           # "script" or "trace"
    # "compare": capture against the Python reference; "torchvision_library": the model calls
    # torchvision's custom operators (torchvision::nms, ...): without --load-library capture must
    # refuse, naming one, and with torchvision's library it is compared like any other
    capture: str = "compare"
    skip: Optional[str] = None       # why TorchScript cannot export it (listed, never run)
    big: bool = False                # over 200M parameters: run alone, not beside another
    # makes the eager model return what the scripted one does, where the model's own code
    # branches on torch.jit.is_scripting() (the reference hooks run on the eager model)
    as_scripted: Optional[Callable[[nn.Module], None]] = None
    # compare the archive with its eager model (scripts/eager_capture.py, then vin-inspect
    # compare): every call's whole tensors within torch.testing's tolerances
    eager_compare: bool = False


def outputs_tuple_when_scripted(model: nn.Module) -> None:
    """GoogLeNet and Inception v3 return their named tuple of outputs (logits and the auxiliary
    ones, None in eval) when scripted, and the logits alone in eager eval mode."""
    from torchvision.models.googlenet import GoogLeNetOutputs
    from torchvision.models.inception import InceptionOutputs
    if hasattr(model, "aux1") or type(model).__name__.endswith("GoogLeNet"):
        model.eager_outputs = lambda x, aux2, aux1: GoogLeNetOutputs(x, aux2, aux1)
    else:
        model.eager_outputs = lambda x, aux: InceptionOutputs(x, aux)


def losses_and_detections_when_scripted(model: nn.Module) -> None:
    """Scripted detection models return (losses, detections); eager ones the detections alone."""
    model.eager_outputs = lambda losses, detections: (losses, detections)


# a quasi-random pattern in [0, 1) (multiples of the golden ratio), of a prime length so that
# it does not line up with tensor shapes; tensors are filled by repeating it
PATTERN = (torch.arange(65521, dtype=torch.float64) * 0.6180339887498949 % 1.0).float()


def fill_deterministically(model: nn.Module) -> nn.Module:
    """Small, varied, deterministic values in every floating parameter and buffer, much faster
    than the builders' initialisation: uniform-like in +-1/sqrt(fan_in) for weights; batch-norm
    variances near 1."""
    with torch.no_grad():
        for name, tensor in list(model.named_parameters()) + list(model.named_buffers()):
            if not tensor.is_floating_point() or tensor.numel() == 0:
                continue
            n = tensor.numel()
            flat = PATTERN.repeat((n + PATTERN.numel() - 1) // PATTERN.numel())[:n]
            if name.endswith("running_var"):
                flat = flat * 0.5 + 0.75
            elif name.endswith("running_mean"):
                flat = (flat - 0.5) * 0.1
            else:
                fan_in = tensor[0].numel() if tensor.dim() > 1 else 1
                flat = (flat - 0.5) * (2.0 / max(1.0, float(fan_in)) ** 0.5)
            tensor.copy_(flat.reshape(tensor.shape))
    return model


def no_init():
    """A context in which torch.nn.init does nothing (the builders' initialisation is replaced by
    fill_deterministically)."""
    class NoInit:
        def __enter__(self):
            self.saved = {}
            for name in ("normal_", "uniform_", "trunc_normal_", "kaiming_normal_",
                         "kaiming_uniform_", "xavier_uniform_", "xavier_normal_", "constant_",
                         "zeros_", "ones_", "orthogonal_"):
                if hasattr(nn.init, name):
                    self.saved[name] = getattr(nn.init, name)
                    setattr(nn.init, name, lambda tensor, *a, **k: tensor)
            return self

        def __exit__(self, *exc):
            for name, fn in self.saved.items():
                setattr(nn.init, name, fn)
    return NoInit()


class video_size:
    """MViT's builders pass spatial_size=(224, 224), temporal_size=16 themselves (they cannot be
    given): inside this context, their helper gets (size, size) and `frames` instead."""

    def __init__(self, size: Optional[Tuple[int, int]]):
        self.size = size

    def __enter__(self):
        if self.size is None:
            return self
        import torchvision.models.video.mvit as mvit
        self.saved = mvit._mvit
        frames, side = self.size

        def smaller(*args, **kwargs):
            kwargs.update(spatial_size=(side, side), temporal_size=frames)
            return self.saved(*args, **kwargs)
        mvit._mvit = smaller
        return self

    def __exit__(self, *exc):
        if self.size is not None:
            import torchvision.models.video.mvit as mvit
            mvit._mvit = self.saved


def image(c: int, h: int, w: int, batch: int = 1) -> torch.Tensor:
    g = torch.Generator().manual_seed(1234)
    return torch.randn(batch, c, h, w, generator=g)


def torchvision_builder(name: str, **kwargs) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        from torchvision import models
        builder = models.get_model_builder(name)
        params = inspect.signature(builder).parameters
        extra = dict(kwargs)
        if "weights_backbone" in params:
            extra["weights_backbone"] = None
        torch.manual_seed(0)
        with no_init(), video_size(extra.pop("video_size", None)):
            model = builder(weights=None, **extra)
        fill_deterministically(model).eval()
        if name.startswith("quantized_"):
            # as the builder's quantize=True does, after the weights are filled: fuse, observe
            # one batch, convert (qnnpack: Debian's torch has no fbgemm)
            from torchvision.models.quantization.utils import quantize_model
            torch.backends.quantized.engine = "qnnpack"
            quantize_model(model, "qnnpack")
        return model
    return build


# the smallest square input each classification family accepts (downsampling by 32 mostly)
CLASSIFICATION_SIZE = {
    "alexnet": 63, "googlenet": 32, "inception_v3": 75, "maxvit_t": 224, "squeezenet": 32,
}

# architectures whose builder fixes an input size they do not need
SIZE_KWARGS = {
    "vit_b_16": {"image_size": 32}, "vit_b_32": {"image_size": 32}, "vit_l_16": {"image_size": 32},
    "vit_l_32": {"image_size": 32}, "vit_h_14": {"image_size": 28},
}


def classification_size(name: str) -> int:
    base = name.replace("quantized_", "")
    for prefix, size in CLASSIFICATION_SIZE.items():
        if base.startswith(prefix):
            return size
    if base in SIZE_KWARGS:
        return SIZE_KWARGS[base]["image_size"]
    return 32


BIG = {"vit_h_14", "regnet_y_128gf", "vit_l_16", "vit_l_32", "regnet_y_32gf", "regnet_x_32gf",
       "convnext_large", "efficientnet_v2_l", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16",
       "vgg16_bn", "vgg19", "vgg19_bn", "regnet_y_16gf", "wide_resnet101_2"}


def torchvision_cases() -> List[ZooCase]:
    from torchvision import models
    cases: List[ZooCase] = []
    for name in models.list_models():
        module = models.get_model_builder(name).__module__
        big = name in BIG
        if ".detection." in module:
            kwargs = {} if name.startswith("ssd") else {"min_size": 64, "max_size": 64}
            cases.append(ZooCase(name, torchvision_builder(name, **kwargs),
                                 lambda: (([image(3, 64, 64)[0]],), {}),
                                 capture="torchvision_library",
                                 as_scripted=losses_and_detections_when_scripted))
        elif ".segmentation." in module:
            cases.append(ZooCase(name, torchvision_builder(name),
                                 lambda: ((image(3, 32, 32),), {})))
        elif ".video." in module:
            # MViT's builder fixes 16 x 224 x 224; it works down to 2 x 32 x 32. S3D's last
            # pooling needs 16 x 224 x 224.
            t, hw = {"mvit_v1_b": (2, 32), "mvit_v2_s": (2, 32), "s3d": (16, 224)}.get(name, (1, 32))
            kwargs = {"video_size": (t, hw)} if "mvit" in name else {}
            cases.append(ZooCase(name, torchvision_builder(name, **kwargs),
                                 lambda t=t, hw=hw: ((torch.randn(1, 3, t, hw, hw,
                                                                  generator=torch.Generator().manual_seed(1)),), {})))
        elif ".optical_flow." in module:
            cases.append(ZooCase(name, torchvision_builder(name),
                                 lambda: ((image(3, 128, 128), image(3, 128, 128)), {})))
        else:  # classification, quantized or not
            size = classification_size(name)
            base = name.replace("quantized_", "")
            build = torchvision_builder(name, **SIZE_KWARGS.get(base, {}))
            scripted_outputs = outputs_tuple_when_scripted if base in ("googlenet", "inception_v3") \
                else None
            cases.append(ZooCase(name, build, lambda s=size: ((image(3, s, s),), {}), big=big,
                                 as_scripted=scripted_outputs,
                                 eager_compare=not name.startswith("quantized_")))
            if not name.startswith("quantized_"):
                cases.append(ZooCase(name + "_traced", build, lambda s=size: ((image(3, s, s),), {}),
                                     export="trace", big=big))
    return cases


# --- torch.nn's recurrent and transformer modules -------------------------------------------------

def seq(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(7))


class MhaSelf(nn.Module):
    """nn.MultiheadAttention used as self-attention with a key padding mask."""

    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x: torch.Tensor,
                mask: torch.Tensor) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        return self.attn(x, x, x, key_padding_mask=mask)


class EncoderWithMask(nn.Module):
    def __init__(self, batch_first: bool = True):
        super().__init__()
        layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=batch_first)
        self.encoder = nn.TransformerEncoder(layer, 2)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(x, src_key_padding_mask=mask)


class DecoderWithMasks(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 2)

    def forward(self, tgt: torch.Tensor, memory: torch.Tensor, tgt_mask: torch.Tensor,
                memory_mask: torch.Tensor) -> torch.Tensor:
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_key_padding_mask=memory_mask)


class Tagger(nn.Module):
    """An LSTM tagger: embedding, a two-layer LSTM, a linear head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(20, 8)
        self.lstm = nn.LSTM(8, 16, num_layers=2, batch_first=True)
        self.head = nn.Linear(16, 5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(tokens))
        return self.head(h)


def padding_mask() -> torch.Tensor:
    return torch.tensor([[False] * 5, [False, False, False, True, True]])


def nn_module(make: Callable[[], nn.Module], train: bool) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(0)
        return fill_deterministically(make()).train(train)
    return build


def nn_cases() -> List[ZooCase]:
    cases: List[ZooCase] = []
    for mode in ("train", "eval"):
        train = mode == "train"
        cases += [
            ZooCase(f"lstm_{mode}", nn_module(lambda: nn.LSTM(8, 16, num_layers=2), train),
                    lambda: ((seq(5, 2, 8),), {})),
            ZooCase(f"gru_{mode}", nn_module(lambda: nn.GRU(8, 16, bidirectional=True), train),
                    lambda: ((seq(5, 2, 8),), {})),
            ZooCase(f"rnn_{mode}", nn_module(lambda: nn.RNN(8, 16, nonlinearity="relu"), train),
                    lambda: ((seq(5, 2, 8),), {})),
            ZooCase(f"lstm_tagger_{mode}", nn_module(Tagger, train),
                    lambda: ((torch.tensor([[1, 4, 2, 9], [3, 3, 0, 7]]),), {})),
            ZooCase(f"transformer_{mode}",
                    nn_module(lambda: nn.Transformer(16, 2, 1, 1, 32, dropout=0.0), train),
                    lambda: ((seq(5, 2, 16), seq(4, 2, 16)), {})),
            ZooCase(f"transformer_encoder_{mode}",
                    nn_module(lambda: nn.TransformerEncoder(
                        nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0), 2), train),
                    lambda: ((seq(5, 2, 16),), {})),
            ZooCase(f"transformer_encoder_mask_{mode}", nn_module(EncoderWithMask, train),
                    lambda: ((seq(2, 5, 16), padding_mask()), {})),
            ZooCase(f"transformer_decoder_{mode}",
                    nn_module(lambda: nn.TransformerDecoder(
                        nn.TransformerDecoderLayer(16, 2, 32, dropout=0.0), 2), train),
                    lambda: ((seq(4, 2, 16), seq(5, 2, 16)), {})),
            ZooCase(f"transformer_decoder_masks_{mode}", nn_module(DecoderWithMasks, train),
                    lambda: ((seq(2, 4, 16), seq(2, 5, 16),
                              nn.Transformer.generate_square_subsequent_mask(4), padding_mask()),
                             {})),
            ZooCase(f"multihead_attention_{mode}", nn_module(MhaSelf, train),
                    lambda: ((seq(2, 5, 16), padding_mask()), {})),
        ]
    return cases


def all_cases() -> List[ZooCase]:
    return torchvision_cases() + nn_cases()


def cases_by_name() -> Dict[str, ZooCase]:
    return {c.name: c for c in all_cases()}
