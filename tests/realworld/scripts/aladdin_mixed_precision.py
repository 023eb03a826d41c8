# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/Basics/pytorch_mixed_precision_example.py (commit 65b8c8049560b19ace11ef754cb4dbe5aa415296)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
#   (this version, not the later one that asserts a GPU: on a CPU torch.cuda.amp's
#   GradScaler and autocast warn and run disabled, in float32)
# Changes (sizes, epochs and data only; the code is otherwise as written):
#   - torchvision.datasets.MNIST (download) -> _synthetic_mnist: TensorDatasets of random 1x28x28 images in [0, 1] (ToTensor's range) with int64 labels, 64 train / 32 test images instead of 60,000 / 10,000
#   - removed the torchvision imports (the datasets are replaced; torchvision is not available under lazytorch)
#   - the CNN's channels 420 -> 42 and 1000 -> 100 (fc1's input 1000*7*7 -> 100*7*7 with them); batch_size 100 -> 16; num_epochs 5 -> 1
# Imports
import torch
import torch.nn as nn  # All neural network modules, nn.Linear, nn.Conv2d, BatchNorm, Loss functions
import torch.optim as optim  # For all Optimization algorithms, SGD, Adam, etc.
import torch.nn.functional as F  # All functions that don't have any parameters
from torch.utils.data import DataLoader  # Gives easier dataset managment and creates mini batches


# synthetic stand-in for torchvision's MNIST (same shapes and dtypes after ToTensor: 1x28x28
# float images in [0, 1], int64 labels); n images instead of 60,000 / 10,000
def _synthetic_mnist(n):
    return torch.utils.data.TensorDataset(torch.rand(n, 1, 28, 28), torch.randint(0, 10, (n,)))


# Simple CNN
class CNN(nn.Module):
    def __init__(self, in_channels=1, num_classes=10):
        super(CNN, self).__init__()
        self.conv1 = nn.Conv2d(in_channels=1, out_channels=42, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        self.pool = nn.MaxPool2d(kernel_size=(2, 2), stride=(2, 2))
        self.conv2 = nn.Conv2d(in_channels=42, out_channels=100, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
        self.fc1 = nn.Linear(100 * 7 * 7, num_classes)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(x)
        x = F.relu(self.conv2(x))
        x = self.pool(x)
        x = x.reshape(x.shape[0], -1)
        x = self.fc1(x)

        return x


# Set device
device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

# Hyperparameters
in_channel = 1
num_classes = 10
learning_rate = 0.001
batch_size = 16
num_epochs = 1

# Load Data
train_dataset = _synthetic_mnist(64)
train_loader = DataLoader(dataset=train_dataset, batch_size=batch_size, shuffle=True)
test_dataset = _synthetic_mnist(32)
test_loader = DataLoader(dataset=test_dataset, batch_size=batch_size, shuffle=True)

# Initialize network
model = CNN().to(device)

# Loss and optimizer
criterion = nn.CrossEntropyLoss()
optimizer = optim.Adam(model.parameters(), lr=learning_rate)

# Necessary for FP16
scaler = torch.cuda.amp.GradScaler()

# Train Network
for epoch in range(num_epochs):
    for batch_idx, (data, targets) in enumerate(train_loader):
        # Get data to cuda if possible
        data = data.to(device=device)
        targets = targets.to(device=device)

        # forward
        with torch.cuda.amp.autocast():
            scores = model(data)
            loss = criterion(scores, targets)

        # backward
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


# Check accuracy on training & test to see how good our model

def check_accuracy(loader, model):
    num_correct = 0
    num_samples = 0
    model.eval()

    with torch.no_grad():
        for x, y in loader:
            x = x.to(device=device)
            y = y.to(device=device)

            scores = model(x)
            _, predictions = scores.max(1)
            num_correct += (predictions == y).sum()
            num_samples += predictions.size(0)

        print(f'Got {num_correct} / {num_samples} with accuracy {float(num_correct) / float(num_samples) * 100:.2f}')

    model.train()


check_accuracy(train_loader, model)
check_accuracy(test_loader, model)
