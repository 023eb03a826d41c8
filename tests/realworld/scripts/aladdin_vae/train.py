# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/more_advanced/VAE/train.py (commit ae581a64e6b1a9350adbdc726bc5a860cb6f5370)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, epochs, data, file output and missing libraries only; the code is otherwise as written):
#   - torchvision.datasets.MNIST (download) -> _synthetic_mnist: a TensorDataset of 320 random 1x28x28 images in [0, 1] (ToTensor's range) with int64 labels, instead of 60,000
#   - removed the torchvision imports (the dataset is replaced; torchvision is not available under lazytorch)
#   - tqdm (not installed) -> a stand-in `tqdm` that yields the items and ignores set_postfix
#   - inference's save_image (PNG files; torchvision) -> removed: the decoded digits are made and not written
#   - NUM_EPOCHS 10 -> 2
import torch
from torch import nn, optim
from model import VariationalAutoEncoder
from torch.utils.data import DataLoader


# tqdm is not installed here: a stand-in that yields the items without a progress bar
class tqdm:
    def __init__(self, iterable, *args, **kwargs):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_postfix(self, *args, **kwargs):
        pass


# synthetic stand-in for torchvision's MNIST (same shapes and dtypes after ToTensor: 1x28x28
# float images in [0, 1], int64 labels); n images instead of 60,000
def _synthetic_mnist(n):
    return torch.utils.data.TensorDataset(torch.rand(n, 1, 28, 28), torch.randint(0, 10, (n,)))


# Configuration
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
INPUT_DIM = 784
H_DIM = 200
Z_DIM = 20
NUM_EPOCHS = 2
BATCH_SIZE = 32
LR_RATE = 3e-4  # Karpathy constant

# Dataset Loading
dataset = _synthetic_mnist(320)
train_loader = DataLoader(dataset=dataset, batch_size=BATCH_SIZE, shuffle=True)
model = VariationalAutoEncoder(INPUT_DIM, H_DIM, Z_DIM).to(DEVICE)
optimizer = optim.Adam(model.parameters(), lr=LR_RATE)
loss_fn = nn.BCELoss(reduction="sum")

# Start Training
for epoch in range(NUM_EPOCHS):
    loop = tqdm(enumerate(train_loader))
    for i, (x, _) in loop:
        # Forward pass
        x = x.to(DEVICE).view(x.shape[0], INPUT_DIM)
        x_reconstructed, mu, sigma = model(x)

        # Compute loss
        reconstruction_loss = loss_fn(x_reconstructed, x)
        kl_div = -torch.sum(1 + torch.log(sigma.pow(2)) - mu.pow(2) - sigma.pow(2))

        # Backprop
        loss = reconstruction_loss + kl_div
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loop.set_postfix(loss=loss.item())


model = model.to("cpu")
def inference(digit, num_examples=1):
    """
    Generates (num_examples) of a particular digit.
    Specifically we extract an example of each digit,
    then after we have the mu, sigma representation for
    each digit we can sample from that.

    After we sample we can run the decoder part of the VAE
    and generate examples.
    """
    images = []
    idx = 0
    for x, y in dataset:
        if y == idx:
            images.append(x)
            idx += 1
        if idx == 10:
            break

    encodings_digit = []
    for d in range(10):
        with torch.no_grad():
            mu, sigma = model.encode(images[d].view(1, 784))
        encodings_digit.append((mu, sigma))

    mu, sigma = encodings_digit[digit]
    for example in range(num_examples):
        epsilon = torch.randn_like(sigma)
        z = mu + sigma * epsilon
        out = model.decode(z)
        out = out.view(-1, 1, 28, 28)

for idx in range(10):
    inference(idx, num_examples=5)
