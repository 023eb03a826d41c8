"""lazytorch in two minutes: write PyTorch, get a lazy graph.

    python examples/quickstart.py

The script is ordinary PyTorch code with ``import lazytorch as torch``. Every op records a
node; nothing is computed until a value is needed. The metrics at the end say where that
happened.
"""

import lazytorch as torch
import lazytorch.nn.functional as F

torch.manual_seed(0)

# A two-layer network's forward pass, written exactly as in PyTorch.
x = torch.randn(8, 16)
w1 = torch.randn(16, 32) * 0.25
b1 = torch.zeros(32)
w2 = torch.randn(32, 4) * 0.25
labels = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])

hidden = F.gelu(x @ w1 + b1)
logits = hidden @ w2
probs = F.softmax(logits, dim=-1)
loss = F.cross_entropy(logits, labels)

# Nothing has run yet: the lines above only recorded a graph.
print(f"recorded {torch.metrics.counters()['nodes_recorded']} nodes; computed nothing so far")
print("\nthe program a cut of `loss` would run:")
print(torch.debug.program(loss))

# Reading a value is an implicit materialization point...
print(f"\nloss = {loss.item():.4f}")

# ... while materialize() is the explicit cut: one program computes everything asked for.
torch.materialize(probs, hidden)
print("probabilities of the first sample:", probs[0])
print("predicted classes:", probs.argmax(dim=1).tolist())

# Views and in-place updates work as in PyTorch (and stay lazy).
scores = logits.clone()
scores[:, 0] = -1.0  # write through a view
scores.clamp_(min=-0.5)
print("clamped scores, first row:", scores[0])

# Sync mode runs every op immediately, for eager-style debugging with the same numbers.
with torch.sync_mode():
    check = F.cross_entropy(logits, labels)
    print(f"same loss in sync mode: {check.item():.4f}")

c = torch.metrics.counters()
print(
    f"\n{c['materializations']} materializations, {c['implicit_materializations']} of them "
    f"implicit, by cause: {torch.metrics.causes()}"
)
