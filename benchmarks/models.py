"""Models written once for both libraries: ``lib`` is ``torch`` or ``lazytorch``.

lazytorch mirrors torch's API, so the same class definitions build a torch model and a
lazytorch model; the training benchmarks and the parity tests copy one's weights into the
other and compare.
"""

from __future__ import annotations

import itertools
import math
from typing import Any


def mlp(lib: Any, sizes: tuple[int, ...] = (64, 128, 128, 10)) -> Any:
    """Linear layers with ReLU between them."""
    nn = lib.nn
    layers: list[Any] = []
    for i, (a, b) in enumerate(itertools.pairwise(sizes)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def cnn(lib: Any, classes: int = 10) -> Any:
    """A ResNet-8-style net for 32×32 RGB: conv-BN-ReLU ×6 (a stem, two residual blocks of
    two, a strided conv between them) with 2 residual adds, global average pool, a head."""
    nn = lib.nn
    F = nn.functional

    def conv_bn(cin: int, cout: int, stride: int = 1) -> Any:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout)
        )

    class Block(nn.Module):
        def __init__(self, c: int) -> None:
            super().__init__()
            self.a, self.b = conv_bn(c, c), conv_bn(c, c)

        def forward(self, x: Any) -> Any:
            return F.relu(x + self.b(F.relu(self.a(x))))

    class ResNet8(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = conv_bn(3, 16)
            self.block1 = Block(16)
            self.down = conv_bn(16, 32, stride=2)
            self.block2 = Block(32)
            self.head = nn.Linear(32, classes)

        def forward(self, x: Any) -> Any:
            x = self.block1(F.relu(self.stem(x)))
            x = self.block2(F.relu(self.down(x)))
            return self.head(x.mean(dim=(2, 3)))

    return ResNet8()


def gpt(
    lib: Any,
    vocab: int = 65,
    context: int = 64,
    width: int = 128,
    heads: int = 4,
    layers: int = 2,
) -> Any:
    """A GPT-style decoder: token and position embeddings, pre-norm blocks of causal
    self-attention (masked_fill + softmax) and a GELU MLP, a final LayerNorm and a head.
    ``model(idx, targets)`` returns ``(logits, loss)`` (loss None without targets)."""
    nn = lib.nn
    F = nn.functional

    class Attention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.proj = nn.Linear(width, width)
            self.register_buffer("mask", lib.tril(lib.ones(context, context)))

        def forward(self, x: Any) -> Any:
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            hs = C // heads
            q = q.view(B, T, heads, hs).transpose(1, 2)
            k = k.view(B, T, heads, hs).transpose(1, 2)
            v = v.view(B, T, heads, hs).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.mask[:T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).reshape(B, T, C)
            return self.proj(y)

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(width)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(width)
            self.mlp = nn.Sequential(
                nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
            )

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tok = nn.Embedding(vocab, width)
            self.pos = nn.Embedding(context, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab)

        def forward(self, idx: Any, targets: Any = None) -> Any:
            B, T = idx.shape
            x = self.tok(idx) + self.pos(lib.arange(T))
            for block in self.blocks:
                x = block(x)
            logits = self.head(self.ln_f(x))
            loss = None
            if targets is not None:
                loss = F.cross_entropy(logits.reshape(B * T, vocab), targets.reshape(B * T))
            return logits, loss

    return GPT()


def copy_weights(src: Any, dst: Any, lt: Any) -> None:
    """Load torch module `src`'s parameters and buffers into lazytorch module `dst`."""
    state = {k: lt.tensor(v.detach().cpu().numpy()) for k, v in src.state_dict().items()}
    dst.load_state_dict(state)
