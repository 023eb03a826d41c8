# A synthetic stand-in for eriklindernoren/PyTorch-GAN implementations/cyclegan/datasets.py
# (commit 36d3c77e5ff20ebe0aeefd322326a134a279b93e; MIT, Copyright (c) 2018 Erik Linder-Norén):
# the same ImageDataset interface over random images instead of image folders read with PIL.
# `transforms_` is the shape the torchvision transforms produced (cyclegan.py's header).
# Items are {"A": image, "B": image}, float images in [-1, 1] (ToTensor then Normalize(0.5, 0.5));
# `unaligned` pairs A with a B of another index, fixed instead of random.randint so that worker
# processes (the test loader has num_workers=1) draw nothing.
import torch
from torch.utils.data import Dataset


class ImageDataset(Dataset):
    def __init__(self, root, transforms_=None, unaligned=False, mode="train"):
        shape = transforms_[0]
        n = 8 if mode == "train" else 5
        self.unaligned = unaligned
        self.files_A = torch.rand(n, *shape) * 2 - 1
        self.files_B = torch.rand(n, *shape) * 2 - 1

    def __getitem__(self, index):
        item_A = self.files_A[index % len(self.files_A)]
        if self.unaligned:
            item_B = self.files_B[(index + 1) % len(self.files_B)]
        else:
            item_B = self.files_B[index % len(self.files_B)]
        return {"A": item_A, "B": item_B}

    def __len__(self):
        return max(len(self.files_A), len(self.files_B))
