# Source: https://github.com/lucidrains/vit-pytorch train_vit_decorr.py (commit 69d24fe9e3024c0d4b02761123b8583a24ebed1e)
# Licence: MIT. Copyright (c) 2020 Phil Wang (the LICENSE file's line).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, steps, data, and stand-ins for libraries not installed here; the model and
# the training loop are as written):
#   - torchvision's CIFAR100 (download) with ToTensor + Normalize(0.5, 0.5) -> _synthetic_cifar100:
#     a TensorDataset of 32 random 3x32x32 images in [-1, 1] (the range Normalize gives) with
#     int64 labels in [0, 100); the torchvision imports removed
#   - accelerate is not installed: a stand-in Accelerator for its single-process CPU case
#     (prepare returns its arguments, backward calls loss.backward(), print prints)
#   - wandb is not installed: a stand-in whose init/log do nothing (the script runs it
#     with mode 'disabled', where wandb logs nothing either)
#   - BATCH_SIZE 32 -> 8, EPOCHS 10 -> 1; the ViT's dim 128 -> 32, depth 6 -> 2, heads 8 -> 4,
#     dim_head 64 -> 16, mlp_dim 128 * 4 -> 32 * 4, decorr_dim_subspace 64 -> 16
# /// script
# dependencies = [
#   "accelerate",
#   "vit-pytorch",
#   "wandb"
# ]
# ///

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader


# synthetic stand-in for torchvision's CIFAR100 after ToTensor + Normalize((0.5,) * 3, (0.5,) * 3):
# 3x32x32 float images in [-1, 1], int64 labels; n images instead of 50,000
def _synthetic_cifar100(n):
    return torch.utils.data.TensorDataset(torch.rand(n, 3, 32, 32) * 2 - 1, torch.randint(0, 100, (n,)))

# constants

BATCH_SIZE = 8
LEARNING_RATE = 3e-4
EPOCHS = 1
DECORR_LOSS_WEIGHT = 1e-1

TRACK_EXPERIMENT_ONLINE = False

# helpers

def exists(v):
    return v is not None

# data

dataset = _synthetic_cifar100(32)

dataloader = DataLoader(dataset, batch_size = BATCH_SIZE, shuffle = True)

# model

from vit_pytorch.vit_with_decorr import ViT

vit = ViT(
    dim = 32,
    num_classes = 100,
    image_size = 32,
    patch_size = 4,
    depth = 2,
    heads = 4,
    dim_head = 16,
    mlp_dim = 32 * 4,
    decorr_sample_frac = 1.,        # use all tokens
    decorr_use_subspace = False,    # use subspace
    decorr_dim_subspace = 16,
    decorr_num_subspaces = 4,
    decorr_layer_outputs_across_depth = False
)

# optim

from torch.optim import Adam

optim = Adam(vit.parameters(), lr = LEARNING_RATE)

# prepare

# accelerate is not installed: its Accelerator on one CPU process, as far as this script uses it
class Accelerator:
    def prepare(self, *args):
        return args

    def backward(self, loss):
        loss.backward()

    def print(self, *args, **kwargs):
        print(*args, **kwargs)

accelerator = Accelerator()

vit, optim, dataloader = accelerator.prepare(vit, optim, dataloader)

# experiment

# wandb is not installed: a stand-in that logs nothing (as wandb's mode 'disabled' does)
class wandb:
    run = type('Run', (), {})()

    @staticmethod
    def init(**kwargs):
        pass

    @staticmethod
    def log(data):
        pass

wandb.init(
    project = 'vit-decorr',
    mode = 'disabled' if not TRACK_EXPERIMENT_ONLINE else 'online'
)

wandb.run.name = 'baseline'

# loop

for _ in range(EPOCHS):
    for images, labels in dataloader:

        logits, decorr_aux_loss = vit(images)
        loss = F.cross_entropy(logits, labels)


        total_loss = (
            loss +
            decorr_aux_loss * DECORR_LOSS_WEIGHT
        )

        wandb.log(dict(loss = loss, decorr_loss = decorr_aux_loss))

        accelerator.print(f'loss: {loss.item():.3f} | decorr aux loss: {decorr_aux_loss.item():.3f}')

        accelerator.backward(total_loss)
        optim.step()
        optim.zero_grad()
