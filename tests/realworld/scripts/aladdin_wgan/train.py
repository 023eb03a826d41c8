# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/GANs/3. WGAN/train.py (commit 609b7511c82c3421459df79e2324c8ee5a5dbfc5)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, epochs, data and missing libraries only; the code is otherwise as written):
#   - torchvision.datasets.MNIST with Resize(64), ToTensor, Normalize(0.5, 0.5) (download) -> _synthetic_mnist: a TensorDataset of 32 random 1x64x64 images in [-1, 1] (the transforms' range) with int64 labels, instead of 60,000
#   - removed the torchvision imports and the transforms.Compose(...) block (the dataset is replaced; torchvision is not available under lazytorch)
#   - tqdm (not installed) -> a stand-in `tqdm` that yields the items without a progress bar
#   - tensorboard's SummaryWriter and torchvision.utils.make_grid (file output) -> removed: the two writers and, in the every-100-batches block (which these 4 batches never reach), the grids and add_image calls
#   - BATCH_SIZE 64 -> 8, NUM_EPOCHS 5 -> 1, FEATURES_CRITIC and FEATURES_GEN 64 -> 8
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from model import Discriminator, Generator, initialize_weights


# tqdm is not installed here: a stand-in that yields the items without a progress bar
def tqdm(iterable, *args, **kwargs):
    return iterable


# synthetic stand-in for torchvision's MNIST after Resize(64), ToTensor and Normalize(0.5, 0.5):
# 1x64x64 float images in [-1, 1], int64 labels; n images instead of 60,000
def _synthetic_mnist(n):
    return torch.utils.data.TensorDataset(
        torch.rand(n, 1, 64, 64) * 2 - 1, torch.randint(0, 10, (n,))
    )


# Hyperparameters etc
device = "cuda" if torch.cuda.is_available() else "cpu"
LEARNING_RATE = 5e-5
BATCH_SIZE = 8
IMAGE_SIZE = 64
CHANNELS_IMG = 1
Z_DIM = 128
NUM_EPOCHS = 1
FEATURES_CRITIC = 8
FEATURES_GEN = 8
CRITIC_ITERATIONS = 5
WEIGHT_CLIP = 0.01

dataset = _synthetic_mnist(32)
#comment mnist and uncomment below if you want to train on CelebA dataset
#dataset = datasets.ImageFolder(root="celeb_dataset", transform=transforms)
loader = DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=True)

# initialize gen and disc/critic
gen = Generator(Z_DIM, CHANNELS_IMG, FEATURES_GEN).to(device)
critic = Discriminator(CHANNELS_IMG, FEATURES_CRITIC).to(device)
initialize_weights(gen)
initialize_weights(critic)

# initializate optimizer
opt_gen = optim.RMSprop(gen.parameters(), lr=LEARNING_RATE)
opt_critic = optim.RMSprop(critic.parameters(), lr=LEARNING_RATE)

# for tensorboard plotting
fixed_noise = torch.randn(32, Z_DIM, 1, 1).to(device)
step = 0

gen.train()
critic.train()

for epoch in range(NUM_EPOCHS):
    # Target labels not needed! <3 unsupervised
    for batch_idx, (data, _) in enumerate(tqdm(loader)):
        data = data.to(device)
        cur_batch_size = data.shape[0]

        # Train Critic: max E[critic(real)] - E[critic(fake)]
        for _ in range(CRITIC_ITERATIONS):
            noise = torch.randn(cur_batch_size, Z_DIM, 1, 1).to(device)
            fake = gen(noise)
            critic_real = critic(data).reshape(-1)
            critic_fake = critic(fake).reshape(-1)
            loss_critic = -(torch.mean(critic_real) - torch.mean(critic_fake))
            critic.zero_grad()
            loss_critic.backward(retain_graph=True)
            opt_critic.step()

            # clip critic weights between -0.01, 0.01
            for p in critic.parameters():
                p.data.clamp_(-WEIGHT_CLIP, WEIGHT_CLIP)

        # Train Generator: max E[critic(gen_fake)] <-> min -E[critic(gen_fake)]
        gen_fake = critic(fake).reshape(-1)
        loss_gen = -torch.mean(gen_fake)
        gen.zero_grad()
        loss_gen.backward()
        opt_gen.step()

        # Print losses occasionally and print to tensorboard
        if batch_idx % 100 == 0 and batch_idx > 0:
            gen.eval()
            critic.eval()
            print(
                f"Epoch [{epoch}/{NUM_EPOCHS}] Batch {batch_idx}/{len(loader)} \
                  Loss D: {loss_critic:.4f}, loss G: {loss_gen:.4f}"
            )

            with torch.no_grad():
                fake = gen(noise)

            step += 1
            gen.train()
            critic.train()
