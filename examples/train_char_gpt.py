"""A tiny character-level GPT trained on Shakespeare's sonnets (public domain, kept in
examples/data/), printing the loss and then a generated sample.

    python examples/train_char_gpt.py [--steps 300] [--torch] [--compile]

Written as a PyTorch script: ``import lazytorch as torch`` is the only change (``--torch``
runs the same code on PyTorch). Every training step — forward, backward and the AdamW
update — is one compiled program, built on the first two steps and reused after; with
``--compile`` the step function is ``torch.compile``d and lazytorch replays that program
without running the step's Python. Sampling uses a fixed-length window so it reuses one
program too.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

TEXT = Path(__file__).resolve().parent / "data" / "sonnets.txt"


def build(torch, vocab: int, context: int, width: int, heads: int, layers: int):
    nn = torch.nn
    F = nn.functional

    class SelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(width, 3 * width)
            self.out = nn.Linear(width, width)
            self.register_buffer("causal", torch.tril(torch.ones(context, context)))

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = (
                z.view(b, t, heads, c // heads).transpose(1, 2) for z in self.qkv(x).split(c, dim=2)
            )
            scores = q @ k.transpose(-2, -1) / math.sqrt(c // heads)
            scores = scores.masked_fill(self.causal[:t, :t] == 0, float("-inf"))
            y = F.softmax(scores, dim=-1) @ v
            return self.out(y.transpose(1, 2).reshape(b, t, c))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.attn = SelfAttention()
            self.ff = nn.Sequential(
                nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width)
            )

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.ff(self.norm2(x))

    class CharGPT(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(context, width)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab)

        def forward(self, idx):
            t = idx.shape[1]
            x = self.tokens(idx) + self.positions(torch.arange(t))
            return self.head(self.norm(self.blocks(x)))

    return CharGPT()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--context", type=int, default=64)
    ap.add_argument("--sample", type=int, default=300, help="characters to generate")
    ap.add_argument("--torch", action="store_true", help="run on PyTorch instead")
    ap.add_argument(
        "--compile",
        action="store_true",
        help="compile the whole training step: from its fourth call lazytorch replays the "
        "step's program without running its Python (docs/compile.md)",
    )
    args = ap.parse_args()
    if args.torch:
        import torch
    else:
        import lazytorch as torch
    torch.manual_seed(0)

    text = TEXT.read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text])
    ctx = args.context
    model = build(torch, len(chars), ctx, width=128, heads=4, layers=2)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{len(text)} characters, vocabulary {len(chars)}, {n_params} parameters")

    def train_step(x, y):
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    if args.compile:
        train_step = torch.compile(train_step)

    gen = torch.Generator().manual_seed(1)
    t0 = time.perf_counter()
    for step in range(args.steps):
        starts = torch.randint(0, len(text) - ctx - 1, (args.batch,), generator=gen)
        offsets = starts[:, None] + torch.arange(ctx + 1)
        chunk = data[offsets]
        loss = train_step(chunk[:, :-1], chunk[:, 1:])
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.3f}  ({time.perf_counter() - t0:.1f} s)")

    # Sampling: a window of the last `ctx` characters (a fixed shape), the next character
    # drawn from the softmax of the last position (inverse CDF of a uniform draw).
    model.eval()
    window = [stoi[c] for c in text[:ctx]]
    out = []
    with torch.no_grad():
        for _ in range(args.sample):
            logits = model(torch.tensor([window]))[0, -1]
            probs = torch.softmax(logits / 0.8, dim=-1)
            u = torch.rand(1, generator=gen)
            nxt = min(int((probs.cumsum(0) < u).sum().item()), len(chars) - 1)
            out.append(chars[nxt])
            window = [*window[1:], nxt]
    print("--- sample ---")
    print(text[:ctx] + "".join(out))


if __name__ == "__main__":
    main()
