# Source: https://github.com/state-spaces/s4 example.py + models/s4/s4d.py (commit e757cef57d89e448c413de7325ed5601aceaac13)
# Licence: Apache-2.0 (the repository's LICENSE, copied to LICENSE in this folder).
# models/s4/s4d.py and src/models/nn/dropout.py are the repository's files, unchanged
# (S4D: complex parameters stored as view_as_real pairs, a Vandermonde kernel through
# complex exp / division, rfft / irfft convolution, per-parameter optimizer hints);
# src/models/nn/__init__.py imports only dropout (its other modules are not needed).
# S4Model and setup_optimizer below are example.py's, as written. The loop is example.py's
# train() written out. Changes: sequential CIFAR / MNIST (torchvision, downloads) ->
# synthetic (16, 256, 1) sequences in [0, 1) from numpy's RandomState(0) with random labels,
# 5 steps; d_model 64, 2 layers, dropout 0.1 (example.py: 0.1), lr 0.01 and weight decay
# 0.01 as example.py's defaults; no tqdm, no checkpointing.
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from models.s4.s4d import S4D

# Dropout broke in PyTorch 1.11 (example.py's check)
if tuple(map(int, torch.__version__.split(".")[:2])) == (1, 11):
    print("WARNING: Dropout is bugged in PyTorch 1.11. Results may be worse.")
    dropout_fn = nn.Dropout
if tuple(map(int, torch.__version__.split(".")[:2])) >= (1, 12):
    dropout_fn = nn.Dropout1d
else:
    dropout_fn = nn.Dropout2d

args = argparse.Namespace(
    lr=0.01, weight_decay=0.01, epochs=5, d_model=64, n_layers=2, dropout=0.1, prenorm=False
)

class S4Model(nn.Module):

    def __init__(
        self,
        d_input,
        d_output=10,
        d_model=256,
        n_layers=4,
        dropout=0.2,
        prenorm=False,
    ):
        super().__init__()

        self.prenorm = prenorm

        # Linear encoder (d_input = 1 for grayscale and 3 for RGB)
        self.encoder = nn.Linear(d_input, d_model)

        # Stack S4 layers as residual blocks
        self.s4_layers = nn.ModuleList()
        self.norms = nn.ModuleList()
        self.dropouts = nn.ModuleList()
        for _ in range(n_layers):
            self.s4_layers.append(
                S4D(d_model, dropout=dropout, transposed=True, lr=min(0.001, args.lr))
            )
            self.norms.append(nn.LayerNorm(d_model))
            self.dropouts.append(dropout_fn(dropout))

        # Linear decoder
        self.decoder = nn.Linear(d_model, d_output)

    def forward(self, x):
        """
        Input x is shape (B, L, d_input)
        """
        x = self.encoder(x)  # (B, L, d_input) -> (B, L, d_model)

        x = x.transpose(-1, -2)  # (B, L, d_model) -> (B, d_model, L)
        for layer, norm, dropout in zip(self.s4_layers, self.norms, self.dropouts):
            # Each iteration of this loop will map (B, d_model, L) -> (B, d_model, L)

            z = x
            if self.prenorm:
                # Prenorm
                z = norm(z.transpose(-1, -2)).transpose(-1, -2)

            # Apply S4 block: we ignore the state input and output
            z, _ = layer(z)

            # Dropout on the output of the S4 block
            z = dropout(z)

            # Residual connection
            x = z + x

            if not self.prenorm:
                # Postnorm
                x = norm(x.transpose(-1, -2)).transpose(-1, -2)

        x = x.transpose(-1, -2)

        # Pooling: average pooling over the sequence length
        x = x.mean(dim=1)

        # Decode the outputs
        x = self.decoder(x)  # (B, d_model) -> (B, d_output)

        return x

# Model

def setup_optimizer(model, lr, weight_decay, epochs):
    """
    S4 requires a specific optimizer setup.

    The S4 layer (A, B, C, dt) parameters typically
    require a smaller learning rate (typically 0.001), with no weight decay.

    The rest of the model can be trained with a higher learning rate (e.g. 0.004, 0.01)
    and weight decay (if desired).
    """

    # All parameters in the model
    all_parameters = list(model.parameters())

    # General parameters don't contain the special _optim key
    params = [p for p in all_parameters if not hasattr(p, "_optim")]

    # Create an optimizer with the general parameters
    optimizer = optim.AdamW(params, lr=lr, weight_decay=weight_decay)

    # Add parameters with special hyperparameters
    hps = [getattr(p, "_optim") for p in all_parameters if hasattr(p, "_optim")]
    hps = [
        dict(s) for s in sorted(list(dict.fromkeys(frozenset(hp.items()) for hp in hps)))
    ]  # Unique dicts
    for hp in hps:
        params = [p for p in all_parameters if getattr(p, "_optim", None) == hp]
        optimizer.add_param_group(
            {"params": params, **hp}
        )

    # Create a lr scheduler
    # scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=patience, factor=0.2)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, epochs)

    # Print optimizer info
    keys = sorted(set([k for hp in hps for k in hp.keys()]))
    for i, g in enumerate(optimizer.param_groups):
        group_hps = {k: g.get(k, None) for k in keys}
        print(' | '.join([
            f"Optimizer group {i}",
            f"{len(g['params'])} tensors",
        ] + [f"{k} {v}" for k, v in group_hps.items()]))

    return optimizer, scheduler



model = S4Model(
    d_input=1,
    d_output=10,
    d_model=args.d_model,
    n_layers=args.n_layers,
    dropout=args.dropout,
    prenorm=args.prenorm,
)
criterion = nn.CrossEntropyLoss()
optimizer, scheduler = setup_optimizer(
    model, lr=args.lr, weight_decay=args.weight_decay, epochs=args.epochs
)

rs = np.random.RandomState(0)
X = rs.uniform(0, 1, size=(5, 16, 256, 1)).astype(np.float32)
Y = rs.randint(0, 10, size=(5, 16))

model.train()
train_loss = 0
correct = 0
total = 0
for batch_idx in range(5):
    inputs, targets = torch.tensor(X[batch_idx]), torch.tensor(Y[batch_idx])
    optimizer.zero_grad()
    outputs = model(inputs)
    loss = criterion(outputs, targets)
    loss.backward()
    optimizer.step()

    train_loss += loss.item()
    _, predicted = outputs.max(1)
    total += targets.size(0)
    correct += predicted.eq(targets).sum().item()
    print(
        "Batch Idx: (%d/%d) | Loss: %.3f | Acc: %.3f%% (%d/%d)"
        % (batch_idx, 5, train_loss / (batch_idx + 1), 100.0 * correct / total, correct, total)
    )
    scheduler.step()

model.eval()
with torch.no_grad():
    print("eval loss", criterion(model(torch.tensor(X[0])), torch.tensor(Y[0])).item())
