# Stand-in for torchvision's CIFAR10 and STL10 datasets (downloads): 24 synthetic HWC uint8
# images (32 x 32 for CIFAR10, 96 x 96 for STL10) and int labels from NumPy's generator,
# indexed as torchvision's are: (transform(image), target). root, train, split and download
# are ignored.
import numpy as np


class _Synthetic:
    def __init__(self, n, size, transform):
        self.data = np.random.randint(0, 256, (n, size, size, 3), dtype=np.uint8)
        self.targets = np.random.randint(0, 10, n).tolist()
        self.transform = transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        return self.transform(self.data[i]), self.targets[i]


def CIFAR10(root, train=True, transform=None, download=False):
    return _Synthetic(24, 32, transform)


def STL10(root, split="unlabeled", transform=None, download=False):
    return _Synthetic(24, 96, transform)
