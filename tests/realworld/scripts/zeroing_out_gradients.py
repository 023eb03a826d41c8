# Source: https://github.com/pytorch/tutorials recipes_source/recipes/zeroing_out_gradients.py (commit 0a7e68666de5faceafa90276ad2b7874cd32c5e0)
# Licence: BSD 3-Clause. Copyright (c) 2017-2022, Pytorch contributors. All rights reserved.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, steps and data only; the code is otherwise as written):
#   - torchvision.datasets.CIFAR10 (download) with its transform -> TensorDatasets of synthetic normalized 3x32x32 images (range [-1, 1], as the transform gives) with int64 labels: 200 train / 200 test instead of 50,000 / 10,000; the torchvision imports removed with it
#   - DataLoader num_workers 2 -> 0 (the draws are recorded in-process); statistics printed every 2000 -> 20 mini-batches (the divisor 2000 kept)
#   - the recipe's prose (module docstring, explanatory comments) shortened
"""
Zeroing out gradients in PyTorch
================================
"""

import torch

import torch.nn as nn
import torch.nn.functional as F

import torch.optim as optim


######################################################################
# 2. Load and normalize the dataset

# synthetic stand-in for torchvision's CIFAR10 after ToTensor and Normalize: 3x32x32 float
# images in [-1, 1] and int64 labels
def _synthetic_cifar10(n):
    return torch.utils.data.TensorDataset(torch.rand(n, 3, 32, 32) * 2 - 1, torch.randint(0, 10, (n,)))

trainset = _synthetic_cifar10(200)
trainloader = torch.utils.data.DataLoader(trainset, batch_size=4,
                                          shuffle=True, num_workers=0)

testset = _synthetic_cifar10(200)
testloader = torch.utils.data.DataLoader(testset, batch_size=4,
                                         shuffle=False, num_workers=0)

classes = ('plane', 'car', 'bird', 'cat',
           'deer', 'dog', 'frog', 'horse', 'ship', 'truck')


######################################################################
# 3. Build the neural network

class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = x.flatten(start_dim=1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


######################################################################
# 4. Define a Loss function and optimizer

net = Net()
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)


######################################################################
# 5. Zero the gradients while training the network

for epoch in range(2):  # loop over the dataset multiple times

    running_loss = 0.0
    for i, data in enumerate(trainloader, 0):
        # get the inputs; data is a list of [inputs, labels]
        inputs, labels = data

        # zero the parameter gradients
        optimizer.zero_grad()

        # forward + backward + optimize
        outputs = net(inputs)
        loss = criterion(outputs, labels)
        loss.backward()
        optimizer.step()

        # print statistics
        running_loss += loss.item()
        if i % 20 == 19:    # print every 20 mini-batches
            print('[%d, %5d] loss: %.3f' %
                  (epoch + 1, i + 1, running_loss / 2000))
            running_loss = 0.0

print('Finished Training')
