# Stand-in for the torchvision.transforms SimCLR's augmentation pipeline uses; ours, not
# torchvision's code. Images are HWC uint8 NumPy arrays where torchvision has PIL images, and
# the random augmentations are simpler versions drawn from NumPy's generator:
# RandomResizedCrop takes a random square window and resizes it back by nearest neighbour,
# ColorJitter scales brightness only, RandomGrayscale uses the ITU-R 601 weights. ToTensor
# and ToPILImage convert as torchvision does (CHW float in [0, 1]; mul(255).byte() back).
# `from torchvision.transforms import transforms` finds this module itself.
import sys

import numpy as np
import torch


class Compose:
    def __init__(self, ts):
        self.ts = ts

    def __call__(self, x):
        for t in self.ts:
            x = t(x)
        return x


class RandomResizedCrop:
    def __init__(self, size):
        self.size = size

    def __call__(self, img):
        h, w = img.shape[:2]
        s = np.random.randint(h // 2, h + 1)
        i, j = np.random.randint(0, h - s + 1), np.random.randint(0, w - s + 1)
        idx = np.arange(self.size) * s // self.size
        return img[i : i + s, j : j + s][idx][:, idx]


class RandomHorizontalFlip:
    def __call__(self, img):
        return img[:, ::-1].copy() if np.random.rand() < 0.5 else img


class ColorJitter:
    def __init__(self, brightness, contrast, saturation, hue):
        self.b = brightness

    def __call__(self, img):
        f = np.random.uniform(1 - self.b, 1 + self.b)
        return np.clip(img.astype(np.float64) * f, 0, 255).astype(np.uint8)


class RandomApply:
    def __init__(self, ts, p=0.5):
        self.ts, self.p = ts, p

    def __call__(self, img):
        if np.random.rand() < self.p:
            for t in self.ts:
                img = t(img)
        return img


class RandomGrayscale:
    def __init__(self, p=0.1):
        self.p = p

    def __call__(self, img):
        if np.random.rand() < self.p:
            g = img.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
            img = np.repeat(g[..., None], 3, axis=2).astype(np.uint8)
        return img


class ToTensor:
    def __call__(self, pic):
        if isinstance(pic, torch.Tensor):
            return pic
        return torch.from_numpy(np.ascontiguousarray(pic.transpose(2, 0, 1))).float().div(255)


class ToPILImage:
    def __call__(self, pic):
        return pic.mul(255).byte().permute(1, 2, 0).numpy()


transforms = sys.modules[__name__]
