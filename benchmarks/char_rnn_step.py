"""The char-RNN tutorials' step, side by side: torch eager against lazytorch (issue 19).

pytorch/tutorials' char-RNN classification builds each name as a one-hot tensor written
letter by letter (``tensor[li][0][letter] = 1``), runs a hand-written RNN cell over it, and
updates the parameters with ``p.data.add_(p.grad.data, alpha=-lr)``. Two figures per
library, each in a fresh process (lazytorch installed as ``torch``):

* ``line`` — ``lineToTensor`` of a 6-letter name (zeros and six indexed writes), µs;
* ``step`` — one training step over a name of 3 to 8 letters (the tutorial's ``train``),
  ms, after 200 warm-up steps (every length compiled).

Medians of ``--repeat`` blocks.

    python -m benchmarks.char_rnn_step [--repeat 5] [--steps 300]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

_CHILD = textwrap.dedent(
    """
    import json, random, statistics, sys, time
    lib, repeat, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if lib == "lazytorch":
        import lazytorch
        lazytorch.install_as_torch()
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    n_letters, n_hidden, n_categories = 57, 128, 4

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super().__init__()
            self.i2h = nn.Linear(input_size, hidden_size)
            self.h2h = nn.Linear(hidden_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            hidden = F.tanh(self.i2h(input) + self.h2h(hidden))
            return self.softmax(self.h2o(hidden)), hidden

    rnn = RNN(n_letters, n_hidden, n_categories)
    criterion = nn.NLLLoss()
    random.seed(0)

    def line_tensor(n):
        tensor = torch.zeros(n, 1, n_letters)
        for li in range(n):
            tensor[li][0][random.randrange(n_letters)] = 1
        return tensor

    def train(category_tensor, line):
        hidden = torch.zeros(1, n_hidden)
        rnn.zero_grad()
        for i in range(line.size()[0]):
            output, hidden = rnn(line[i], hidden)
        loss = criterion(output, category_tensor)
        loss.backward()
        for p in rnn.parameters():
            p.data.add_(p.grad.data, alpha=-0.005)
        return loss.item()

    def step():
        cat = torch.tensor([random.randrange(n_categories)], dtype=torch.long)
        return train(cat, line_tensor(random.randint(3, 8)))

    for _ in range(200):
        step()
    lines, steps_ms = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(300):
            line_tensor(6)
        lines.append((time.perf_counter() - t) / 300 * 1e6)
        t = time.perf_counter()
        for _ in range(steps):
            step()
        steps_ms.append((time.perf_counter() - t) / steps * 1e3)
    print(json.dumps({"line_us": statistics.median(lines), "step_ms": statistics.median(steps_ms)}))
    """
)


def run(lib: str, repeat: int, steps: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, lib, str(repeat), str(steps)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    rows = {lib: run(lib, args.repeat, args.steps) for lib in ("torch", "lazytorch")}
    t, lz = rows["torch"], rows["lazytorch"]
    print("| measure | torch | lazytorch | ratio |")
    print("|---|---:|---:|---:|")
    print(
        f"| lineToTensor(6), µs | {t['line_us']:.1f} | {lz['line_us']:.1f} "
        f"| {lz['line_us'] / t['line_us']:.2f} |"
    )
    print(
        f"| training step, ms | {t['step_ms']:.2f} | {lz['step_ms']:.2f} "
        f"| {lz['step_ms'] / t['step_ms']:.2f} |"
    )


if __name__ == "__main__":
    main()
