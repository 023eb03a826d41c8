# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/Basics/Imbalanced_classes/main.py (commit 3a4d3ae807379e71f9f756d985be0587e58291b0)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes and data only; the code is otherwise as written):
#   - torchvision.datasets.ImageFolder over the repository's dataset/ folder (JPEG photos of two dog breeds) with Resize((224, 224)) and ToTensor -> _SyntheticImageFolder: the same folder layout built in place (40 empty "Golden retriever" files and 4 "Swedish elkhound" ones, which get_loader counts with os.listdir), with random 3x32x32 images in [0, 1] (ToTensor's range) and ImageFolder's int labels and `classes`
#   - removed the torchvision imports (the dataset is replaced; torchvision is not available under lazytorch)
#   - Resize((224, 224)) -> 32x32 images (the transforms go with the dataset)
"""
This code is for dealing with imbalanced datasets in PyTorch. Imbalanced datasets 
are those where the number of samples in one or more classes is significantly lower 
than the number of samples in the other classes. This can be a problem because it 
can lead to a model that is biased towards the more common classes, which can result 
in poor performance on the less common classes.

To deal with imbalanced datasets, this code implements two methods: oversampling and 
class weighting.

Oversampling involves generating additional samples for the underrepresented classes, 
while class weighting involves assigning higher weights to the loss of samples in the 
underrepresented classes, so that the model pays more attention to them.

In this code, the get_loader function takes a root directory for a dataset and a batch 
size, and returns a PyTorch data loader. The data loader is used to iterate over the 
dataset in batches. The get_loader function first applies some transformations to the 
images in the dataset using the transforms module from torchvision. Then it calculates 
the class weights based on the number of samples in each class. It then creates a 
WeightedRandomSampler object, which is used to randomly select a batch of samples with a 
probability proportional to their weights. Finally, it creates the data loader using the 
dataset and the weighted random sampler.

The main function then uses the data loader to iterate over the dataset for 10 epochs, 
and counts the number of samples in each class. Finally, it prints the counts for each class.

Programmed by Aladdin Persson <aladdin.persson at hotmail dot com>
* 2020-04-08: Initial coding
* 2021-03-24: Added more detailed comments also removed part of
              check_accuracy which would only work specifically on MNIST.
* 2022-12-19: Updated detailed comments, small code revision, checked code still works with latest PyTorch. 
"""

import torch
import os
from torch.utils.data import WeightedRandomSampler, DataLoader
import torch.nn as nn


# synthetic stand-in for torchvision's ImageFolder over dataset/ (after Resize and ToTensor):
# builds the class folders with empty files (get_loader lists them) and gives random 3x32x32
# images in [0, 1] with the folder's label, classes in ImageFolder's (sorted) order
class _SyntheticImageFolder(torch.utils.data.Dataset):
    def __init__(self, root, counts={"Golden retriever": 40, "Swedish elkhound": 4}):
        self.classes = sorted(counts)
        self.labels = []
        for label, name in enumerate(self.classes):
            os.makedirs(os.path.join(root, name), exist_ok=True)
            for i in range(counts[name]):
                open(os.path.join(root, name, f"{i}.jpg"), "w").close()
            self.labels += [label] * counts[name]
        self.images = torch.rand(len(self.labels), 3, 32, 32)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx]


# Methods for dealing with imbalanced datasets:
# 1. Oversampling (probably preferable)
# 2. Class weighting


def get_loader(root_dir, batch_size):
    dataset = _SyntheticImageFolder(root=root_dir)
    subdirectories = dataset.classes
    class_weights = []

    # loop through each subdirectory and calculate the class weight
    # that is 1 / len(files) in that subdirectory
    for subdir in subdirectories:
        files = os.listdir(os.path.join(root_dir, subdir))
        class_weights.append(1 / len(files))

    sample_weights = [0] * len(dataset)

    for idx, (data, label) in enumerate(dataset):
        class_weight = class_weights[label]
        sample_weights[idx] = class_weight

    sampler = WeightedRandomSampler(
        sample_weights, num_samples=len(sample_weights), replacement=True
    )

    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler)
    return loader


def main():
    loader = get_loader(root_dir="dataset", batch_size=8)

    num_retrievers = 0
    num_elkhounds = 0
    for epoch in range(10):
        for data, labels in loader:
            num_retrievers += torch.sum(labels == 0)
            num_elkhounds += torch.sum(labels == 1)

    print(num_retrievers.item())
    print(num_elkhounds.item())


if __name__ == "__main__":
    main()
