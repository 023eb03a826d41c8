# Source: https://github.com/rasbt/deeplearning-models pytorch_ipynb/helper_data.py (commit 18e046926551378cd691fd871dda0f21dcd272ab)
# Licence: MIT. Copyright (c) 2019-2022 Sebastian Raschka
# Changes (data only): torchvision is not installed: datasets.CIFAR10 -> an in-place synthetic
#   stand-in (64 train / 16 test random uint8 32x32x3 images, int labels) and
#   transforms.ToTensor -> an in-place stand-in; the split sizes 50000 -> 64; only
#   get_dataloaders_cifar10 (the function the notebook uses) kept
import numpy as np
import torch
from torch.utils.data import sampler
from torch.utils.data import DataLoader
from torch.utils.data import SubsetRandomSampler


class transforms:
    class ToTensor:
        def __call__(self, img):
            return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))).float().div(255)


class datasets:
    class CIFAR10(torch.utils.data.Dataset):
        def __init__(self, root, train=True, transform=None, download=False):
            rs = np.random.RandomState(0 if train else 1)
            n = 64 if train else 16
            self.data = rs.randint(0, 256, (n, 32, 32, 3)).astype(np.uint8)
            self.targets = [int(v) for v in rs.randint(0, 10, n)]
            self.transform = transform

        def __getitem__(self, index):
            img, target = self.data[index], self.targets[index]
            if self.transform is not None:
                img = self.transform(img)
            return img, target

        def __len__(self):
            return len(self.data)


def get_dataloaders_cifar10(batch_size, num_workers=0,
                            validation_fraction=None,
                            train_transforms=None,
                            test_transforms=None):

    if train_transforms is None:
        train_transforms = transforms.ToTensor()

    if test_transforms is None:
        test_transforms = transforms.ToTensor()

    train_dataset = datasets.CIFAR10(root='data',
                                     train=True,
                                     transform=train_transforms,
                                     download=True)

    valid_dataset = datasets.CIFAR10(root='data',
                                     train=True,
                                     transform=test_transforms)

    test_dataset = datasets.CIFAR10(root='data',
                                    train=False,
                                    transform=test_transforms)

    if validation_fraction is not None:
        num = int(validation_fraction * 64)
        train_indices = torch.arange(0, 64 - num)
        valid_indices = torch.arange(64 - num, 64)

        train_sampler = SubsetRandomSampler(train_indices)
        valid_sampler = SubsetRandomSampler(valid_indices)

        valid_loader = DataLoader(dataset=valid_dataset,
                                  batch_size=batch_size,
                                  num_workers=num_workers,
                                  sampler=valid_sampler)

        train_loader = DataLoader(dataset=train_dataset,
                                  batch_size=batch_size,
                                  num_workers=num_workers,
                                  drop_last=True,
                                  sampler=train_sampler)

    else:
        train_loader = DataLoader(dataset=train_dataset,
                                  batch_size=batch_size,
                                  num_workers=num_workers,
                                  drop_last=True,
                                  shuffle=True)

    test_loader = DataLoader(dataset=test_dataset,
                             batch_size=batch_size,
                             num_workers=num_workers,
                             shuffle=False)

    if validation_fraction is None:
        return train_loader, test_loader
    else:
        return train_loader, valid_loader, test_loader

