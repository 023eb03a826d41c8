# Source: https://github.com/lucidrains/lion-pytorch lion_pytorch/ (commit 6a74fdc0ba572ab5683dc0270c66c20ecbc02d09)
# Licence: MIT, Copyright (c) 2023 Phil Wang (LICENSE copied to this folder).
# lion_pytorch/lion_pytorch.py, cautious_lion.py and foreach.py are copied unchanged. This driver (a small MLP regression trained with each of the
# three Lion variants, as the README's usage shows) is ours.
import torch
from torch import nn
from lion_pytorch import Lion
from lion_pytorch.cautious_lion import Lion as CautiousLion
from lion_pytorch.foreach import Lion as ForeachLion

torch.manual_seed(0)
X = torch.randn(64, 16)
Y = torch.randn(64, 4)

for name, make in [
    ("lion", lambda ps: Lion(ps, lr=1e-3, weight_decay=1e-2)),
    ("lion_decoupled", lambda ps: Lion(ps, lr=1e-3, weight_decay=1e-2, decoupled_weight_decay=True)),
    ("cautious", lambda ps: CautiousLion(ps, lr=1e-3, weight_decay=1e-2, cautious_factor=0.)),
    ("foreach", lambda ps: ForeachLion(ps, lr=1e-3, weight_decay=1e-2)),
]:
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
    opt = make(model.parameters())
    for step in range(15):
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(name, loss.item())
