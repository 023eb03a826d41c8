# Stand-in for torchvision's MNIST dataset (torchvision/datasets/mnist.py; BSD 3-Clause,
# Copyright (c) Soumith Chintala 2016) with the attributes main.py reads: `data`, uint8 images
# of shape (n, 28, 28), and `targets`, int64 labels. The images are synthetic: random uint8
# pixels; the labels are a random permutation of 0..n-1 taken modulo 10, so that every class
# holds n / 10 images (APP_MATCHER picks two different images of one class); n is 64 for
# training and 40 for testing instead of 60,000 / 10,000. root and download are ignored.
import torch


class MNIST(torch.utils.data.Dataset):
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        n = 64 if train else 40
        self.data = torch.randint(0, 256, (n, 28, 28), dtype=torch.uint8)
        self.targets = torch.randperm(n) % 10

    def __len__(self):
        return len(self.data)
