"""Sampling a language model token by token (issue 19's eager-style loops): lazytorch
against torch on the loop that ends nanoGPT, minGPT and llm.c's scripts.

A 2-layer, 64-wide GPT (causal attention by ``F.scaled_dot_product_attention``) samples
``--tokens`` tokens from one start token: logits of the last position, top-k (40) masking
by a boolean index write, ``multinomial`` of the softmax, then ``idx = torch.cat([idx,
nxt], 1)``. Every token is an implicit cut (``multinomial`` checks its weights eagerly) of a
program one position longer than the last. Each library runs in a fresh process with an
empty compile cache (a first run on a machine), alternating over ``--rounds``; times
exclude the import.

    python -m benchmarks.sampling [--tokens 300] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

_SCRIPT = r"""
import json, sys, time
if sys.argv[1] == "lazytorch":
    import lazytorch
    lazytorch.install_as_torch()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
C, V, L, N = 64, 500, 2, int(sys.argv[2])


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln1, s.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        s.attn, s.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        s.fc, s.fc2 = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)

    def forward(s, x):
        B, T, _ = x.shape
        q, k, v = s.attn(s.ln1(x)).split(C, 2)
        q, k, v = (t.view(B, T, 4, C // 4).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + s.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + s.fc2(F.gelu(s.fc(s.ln2(x))))


class GPT(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, C), nn.Embedding(N + 1, C)
        s.h = nn.ModuleList([Block() for _ in range(L)])
        s.ln, s.head = nn.LayerNorm(C), nn.Linear(C, V, bias=False)

    def forward(s, idx):
        x = s.wte(idx) + s.wpe(torch.arange(idx.shape[1]))
        for b in s.h:
            x = b(x)
        return s.head(s.ln(x)[:, [-1], :])


model = GPT().eval()
idx = torch.zeros(1, 1, dtype=torch.long)
t0 = time.perf_counter()
stamps = []
with torch.no_grad():
    for _ in range(N):
        logits = model(idx)[:, -1, :]
        v, _ = torch.topk(logits, 40)
        logits[logits < v[:, [-1]]] = -float("inf")
        nxt = torch.multinomial(F.softmax(logits, -1), 1)
        idx = torch.cat([idx, nxt], 1)
        stamps.append(time.perf_counter())
last = min(20, N - 1)
print(json.dumps({"total_s": stamps[-1] - t0,
                  "ms_per_token": (stamps[-1] - stamps[-1 - last]) / last * 1e3}))
"""


def _run(lib: str, tokens: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "LAZYTORCH_CACHE_DIR": cache}
        out = subprocess.run(
            [sys.executable, "-c", _SCRIPT, lib, str(tokens)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    runs: dict[str, list[dict[str, float]]] = {"torch": [], "lazytorch": []}
    for r in range(args.rounds):
        for lib in ("torch", "lazytorch") if r % 2 == 0 else ("lazytorch", "torch"):
            runs[lib].append(_run(lib, args.tokens))
            print(f"round {r + 1} {lib}: {runs[lib][-1]}", file=sys.stderr)
    print(f"\n{args.tokens} tokens, medians of {args.rounds} rounds")
    print("| library | whole loop, s | ms per token (last 20) |")
    print("|---|---:|---:|")
    for lib, rs in runs.items():
        total = statistics.median(x["total_s"] for x in rs)
        per = statistics.median(x["ms_per_token"] for x in rs)
        print(f"| {lib} | {total:.2f} | {per:.1f} |")


if __name__ == "__main__":
    main()
