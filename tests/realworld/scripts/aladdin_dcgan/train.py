# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/GANs/2. DCGAN/train.py (commit 609b7511c82c3421459df79e2324c8ee5a5dbfc5)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
#   (model.py is the stored version of commit 95362d7a23de81bc4e7d200bbbcad02a5377f2ef: its
#   initialize_weights(m) acts on a module whose class name holds Conv or BatchNorm, so the
#   calls on the whole gen and disc below leave torch's default initialization)
# Changes (sizes, epochs, data and file output only; the code is otherwise as written):
#   - torchvision.datasets.MNIST with Resize(64), ToTensor, Normalize(0.5, 0.5) (download) -> _synthetic_mnist: a TensorDataset of 32 random 1x64x64 images in [-1, 1] (the transforms' range) with int64 labels, instead of 60,000
#   - removed the torchvision imports and the transforms.Compose(...) block (the dataset is replaced; torchvision is not available under lazytorch)
#   - tensorboard's SummaryWriter and torchvision.utils.make_grid (file output) -> removed: the two writers and, in the every-100-batches block, the grids and add_image calls (the generator still runs on fixed_noise there)
#   - BATCH_SIZE 128 -> 8, NUM_EPOCHS 5 -> 1, FEATURES_DISC and FEATURES_GEN 64 -> 8
"""
Training of DCGAN network on MNIST dataset with Discriminator
and Generator imported from models.py

Programmed by Aladdin Persson <aladdin.persson at hotmail dot com>
* 2020-11-01: Initial coding
* 2022-12-20: Small revision of code, checked that it works with latest PyTorch version
"""

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from model import Discriminator, Generator, initialize_weights


# synthetic stand-in for torchvision's MNIST after Resize(64), ToTensor and Normalize(0.5, 0.5):
# 1x64x64 float images in [-1, 1], int64 labels; n images instead of 60,000
def _synthetic_mnist(n):
    return torch.utils.data.TensorDataset(
        torch.rand(n, 1, 64, 64) * 2 - 1, torch.randint(0, 10, (n,))
    )


# Hyperparameters etc.
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
LEARNING_RATE = 2e-4  # could also use two lrs, one for gen and one for disc
BATCH_SIZE = 8
IMAGE_SIZE = 64
CHANNELS_IMG = 1
NOISE_DIM = 100
NUM_EPOCHS = 1
FEATURES_DISC = 8
FEATURES_GEN = 8

# If you train on MNIST, remember to set channels_img to 1
dataset = _synthetic_mnist(32)

# comment mnist above and uncomment below if train on CelebA
# dataset = datasets.ImageFolder(root="celeb_dataset", transform=transforms)
dataloader = DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=True)
gen = Generator(NOISE_DIM, CHANNELS_IMG, FEATURES_GEN).to(device)
disc = Discriminator(CHANNELS_IMG, FEATURES_DISC).to(device)
initialize_weights(gen)
initialize_weights(disc)

opt_gen = optim.Adam(gen.parameters(), lr=LEARNING_RATE, betas=(0.5, 0.999))
opt_disc = optim.Adam(disc.parameters(), lr=LEARNING_RATE, betas=(0.5, 0.999))
criterion = nn.BCELoss()

fixed_noise = torch.randn(32, NOISE_DIM, 1, 1).to(device)
step = 0

gen.train()
disc.train()

for epoch in range(NUM_EPOCHS):
    # Target labels not needed! <3 unsupervised
    for batch_idx, (real, _) in enumerate(dataloader):
        real = real.to(device)
        noise = torch.randn(BATCH_SIZE, NOISE_DIM, 1, 1).to(device)
        fake = gen(noise)

        ### Train Discriminator: max log(D(x)) + log(1 - D(G(z)))
        disc_real = disc(real).reshape(-1)
        loss_disc_real = criterion(disc_real, torch.ones_like(disc_real))
        disc_fake = disc(fake.detach()).reshape(-1)
        loss_disc_fake = criterion(disc_fake, torch.zeros_like(disc_fake))
        loss_disc = (loss_disc_real + loss_disc_fake) / 2
        disc.zero_grad()
        loss_disc.backward()
        opt_disc.step()

        ### Train Generator: min log(1 - D(G(z))) <-> max log(D(G(z))
        output = disc(fake).reshape(-1)
        loss_gen = criterion(output, torch.ones_like(output))
        gen.zero_grad()
        loss_gen.backward()
        opt_gen.step()

        # Print losses occasionally and print to tensorboard
        if batch_idx % 100 == 0:
            print(
                f"Epoch [{epoch}/{NUM_EPOCHS}] Batch {batch_idx}/{len(dataloader)} \
                  Loss D: {loss_disc:.4f}, loss G: {loss_gen:.4f}"
            )

            with torch.no_grad():
                fake = gen(fixed_noise)

            step += 1
