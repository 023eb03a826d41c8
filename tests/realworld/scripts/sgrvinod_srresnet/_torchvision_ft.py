# Stand-in for torchvision.transforms.functional (torchvision is not available): to_tensor
# for the 8-bit RGB PIL images this script makes, as torchvision writes it
# (torchvision/transforms/functional.py, BSD 3-Clause, Copyright (c) Soumith Chintala 2016):
# the HWC uint8 pixels as a CHW float tensor in [0, 1].
import numpy as np
import torch


def to_tensor(pic):
    img = torch.from_numpy(np.array(pic, np.uint8, copy=True))
    img = img.view(pic.size[1], pic.size[0], 3)
    img = img.permute((2, 0, 1)).contiguous()
    return img.to(dtype=torch.get_default_dtype()).div(255)
