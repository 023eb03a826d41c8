# Source: https://github.com/lucidrains/mlp-mixer-pytorch README.md, "Usage" (commit b102a9b25cb8bd2360db36cbd252dc4e670fd5e4)
# Licence: MIT. Copyright (c) 2021 Phil Wang (the LICENSE file's line; the file is also copied
#   to LICENSE in this folder). mlp_mixer_pytorch/ is the repository's package, unchanged.
# The README's three usage snippets, one after the other. Changes:
#   - sizes: image_size 256 -> 32 and (256, 128) -> (32, 16), patch_size 16 -> 8, dim 512 ->
#     32, depth 12 -> 2, num_classes 1000 -> 10
#   - each snippet's result, which the README shows as a shape comment, is printed (so the
#     two libraries' outputs are compared)
import torch
from mlp_mixer_pytorch import MLPMixer

model = MLPMixer(
    image_size = 32,
    channels = 3,
    patch_size = 8,
    dim = 32,
    depth = 2,
    num_classes = 10
)

img = torch.randn(1, 3, 32, 32)
pred = model(img) # (1, 1000)
print(pred)

import torch
from mlp_mixer_pytorch import MLPMixer

model = MLPMixer(
    image_size = (32, 16),
    channels = 3,
    patch_size = 8,
    dim = 32,
    depth = 2,
    num_classes = 10
)

img = torch.randn(1, 3, 32, 16)
pred = model(img) # (1, 1000)
print(pred)

import torch
from mlp_mixer_pytorch import MLPMixer3D

model = MLPMixer3D(
    image_size = (32, 16),
    time_size = 4,
    time_patch_size = 2,
    channels = 3,
    patch_size = 8,
    dim = 32,
    depth = 2,
    num_classes = 10
)

video = torch.randn(1, 3, 4, 32, 16)
pred = model(video) # (1, 1000)
print(pred)
