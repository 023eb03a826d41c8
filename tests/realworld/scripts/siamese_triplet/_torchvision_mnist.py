# Stand-in for torchvision's MNIST dataset and the two transforms the notebook uses
# (torchvision is not available), following torchvision's code (torchvision/datasets/mnist.py,
# torchvision/transforms/transforms.py and functional.py; BSD 3-Clause, Copyright (c) Soumith
# Chintala 2016): the same attributes (train, transform, data/targets and their old names
# train_data/train_labels/test_data/test_labels) and the same __getitem__ (uint8 image ->
# PIL 'L' image -> transform, int label). The images and labels are synthetic: n random uint8
# 28x28 images with random labels 0..9 (520 train / 300 test) instead of the 60,000 / 10,000 of the download.
import numpy as np
import torch
from PIL import Image


class MNIST(torch.utils.data.Dataset):
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False, n=None):
        self.train = train
        self.transform = transform
        self.target_transform = target_transform
        n = n or (520 if train else 300)
        self.data = torch.randint(0, 256, (n, 28, 28), dtype=torch.uint8)
        self.targets = torch.randint(0, 10, (n,))

    @property
    def train_labels(self):
        return self.targets

    @property
    def test_labels(self):
        return self.targets

    @property
    def train_data(self):
        return self.data

    @property
    def test_data(self):
        return self.data

    def __getitem__(self, index):
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)


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
            img = torch.from_numpy(np.array(pic, np.uint8, copy=True))
            img = img.view(pic.size[1], pic.size[0], 1)
            img = img.permute((2, 0, 1)).contiguous()
            return img.to(dtype=torch.get_default_dtype()).div(255)

    class Normalize:
        def __init__(self, mean, std):
            self.mean, self.std = mean, std

        def __call__(self, tensor):
            tensor = tensor.clone()
            mean = torch.as_tensor(self.mean, dtype=tensor.dtype, device=tensor.device)
            std = torch.as_tensor(self.std, dtype=tensor.dtype, device=tensor.device)
            if mean.ndim == 1:
                mean = mean.view(-1, 1, 1)
            if std.ndim == 1:
                std = std.view(-1, 1, 1)
            return tensor.sub_(mean).div_(std)


transforms = _Transforms
