# Source: https://github.com/lucidrains/g-mlp-pytorch README.md, "Usage" and "Experimental" (commit 970966c10c10770b2098b8f88c7d1f86efbf611b)
# Licence: MIT. Copyright (c) 2021 Phil Wang (the LICENSE file's line; the file is also copied
#   to LICENSE in this folder). g_mlp_pytorch/ is the repository's package, unchanged.
# The README's five usage snippets, one after the other. Changes:
#   - sizes: num_tokens 20000 -> 100, dim 512 -> 32, depth 6 -> 2, seq_len 256 -> 16,
#     image_size 256 -> 32 (and (256, 128) -> (32, 16)), patch_size 16 -> 8 (and (16, 8) ->
#     (8, 4)), num_classes 1000 -> 10, attn_dim 64 -> 16
#   - each snippet's result, which the README shows as a shape comment, is printed (so the
#     two libraries' outputs are compared); the models stay in training mode, as the README
#     leaves them
import torch
from torch import nn
from g_mlp_pytorch import gMLP

model = gMLP(
    num_tokens = 100,
    dim = 32,
    depth = 2,
    seq_len = 16,
    circulant_matrix = True,      # use circulant weight matrix for linear increase in parameters in respect to sequence length
    act = nn.Tanh()               # activation for spatial gate (defaults to identity)
)

x = torch.randint(0, 100, (1, 16))
logits = model(x) # (1, 256, 20000)
print(logits)

import torch
from g_mlp_pytorch import gMLPVision

model = gMLPVision(
    image_size = 32,
    patch_size = 8,
    num_classes = 10,
    dim = 32,
    depth = 2
)

img = torch.randn(1, 3, 32, 32)
logits = model(img) # (1, 1000)
print(logits)

import torch
from g_mlp_pytorch import gMLPVision

model = gMLPVision(
    image_size = 32,
    patch_size = 8,
    num_classes = 10,
    dim = 32,
    depth = 2,
    attn_dim = 16
)

img = torch.randn(1, 3, 32, 32)
pred = model(img) # (1, 1000)
print(pred)

import torch
from g_mlp_pytorch import gMLPVision

model = gMLPVision(
    image_size = (32, 16),
    patch_size = (8, 4),
    num_classes = 10,
    dim = 32,
    depth = 2,
    attn_dim = 16
)

img = torch.randn(1, 3, 32, 16)
pred = model(img) # (1, 1000)
print(pred)

import torch
from torch import nn
from g_mlp_pytorch import gMLP

model = gMLP(
    num_tokens = 100,
    dim = 32,
    depth = 2,
    seq_len = 16,
    causal = True,
    circulant_matrix = True,
    heads = 4 # 4 heads
)

x = torch.randint(0, 100, (1, 16))
logits = model(x) # (1, 256, 20000)
print(logits)
