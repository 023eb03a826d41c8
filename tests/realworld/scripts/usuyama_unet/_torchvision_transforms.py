# Stand-in for torchvision.transforms (torchvision is not available): Compose and ToTensor for
# the HWC uint8 NumPy images this notebook makes, following torchvision's code
# (torchvision/transforms/transforms.py and functional.py; BSD 3-Clause, Copyright (c) Soumith
# Chintala 2016): the image as a CHW float tensor in [0, 1].
import numpy as np
import torch


class _Transforms:
    class Compose:
        def __init__(self, transforms):
            self.transforms = transforms

        def __call__(self, img):
            for t in self.transforms:
                img = t(img)
            return img

    class ToTensor:
        def __call__(self, pic):
            if pic.ndim == 2:
                pic = pic[:, :, None]
            img = torch.from_numpy(pic.transpose((2, 0, 1))).contiguous()
            if isinstance(img, torch.ByteTensor):
                return img.to(dtype=torch.get_default_dtype()).div(255)
            return img


transforms = _Transforms
