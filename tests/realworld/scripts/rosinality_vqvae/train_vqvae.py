# Source: https://github.com/rosinality/vq-vae-2-pytorch train_vqvae.py (commit ef5f67c46f93624163776caec9e0d95063910eca)
# Licence: MIT. Copyright (c) 2019 Kim Seonghyeon (the LICENSE file's line).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, data, device and file output only; the code is otherwise as written):
#   - torchvision's ImageFolder of the `path` folder (Resize, CenterCrop, ToTensor,
#     Normalize to [-1, 1]) -> _synthetic_images: a TensorDataset of 256 random 3 x size x
#     size images in [-1, 1] with int64 labels; `path` is still required and is unused
#   - torchvision.utils.save_image (an image file) -> a stand-in that writes nothing; the
#     torchvision import removed; tqdm -> a stand-in that yields the items (not installed)
#   - main(): device "cuda" -> "cpu" (the script has no CPU path)
#   - os.makedirs("checkpoint"): the repository's empty checkpoint/ folder, made in the
#     scratch folder the corpus runs the script in
#   - sizes and epochs through the script's own arguments (see corpus.py)
import argparse
import sys
import os

import torch
from torch import nn, optim
from torch.utils.data import DataLoader



# tqdm is not installed here: a stand-in that yields the items and takes set_description
class tqdm:
    def __init__(self, iterable, **kwargs):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_description(self, desc=None):
        pass


# torchvision.utils.save_image writes an image file: a stand-in that writes nothing
class utils:
    @staticmethod
    def save_image(tensor, fp, **kwargs):
        pass


# the repository ships an empty checkpoint/ folder (kept by a .gitignore) that torch.save
# writes into; the corpus runs the script in a scratch folder, so make it there
os.makedirs("checkpoint", exist_ok=True)


# synthetic stand-in for torchvision's ImageFolder after Resize(size), CenterCrop(size),
# ToTensor and Normalize([0.5] * 3, [0.5] * 3): n float images of 3 x size x size in
# [-1, 1] with int64 labels
def _synthetic_images(n, size):
    imgs = torch.rand(n, 3, size, size) * 2 - 1
    return torch.utils.data.TensorDataset(imgs, torch.randint(0, 10, (n,)))

from vqvae import VQVAE
from scheduler import CycleScheduler
import distributed as dist


def train(epoch, loader, model, optimizer, scheduler, device):
    if dist.is_primary():
        loader = tqdm(loader)

    criterion = nn.MSELoss()

    latent_loss_weight = 0.25
    sample_size = 25

    mse_sum = 0
    mse_n = 0

    for i, (img, label) in enumerate(loader):
        model.zero_grad()

        img = img.to(device)

        out, latent_loss = model(img)
        recon_loss = criterion(out, img)
        latent_loss = latent_loss.mean()
        loss = recon_loss + latent_loss_weight * latent_loss
        loss.backward()

        if scheduler is not None:
            scheduler.step()
        optimizer.step()

        part_mse_sum = recon_loss.item() * img.shape[0]
        part_mse_n = img.shape[0]
        comm = {"mse_sum": part_mse_sum, "mse_n": part_mse_n}
        comm = dist.all_gather(comm)

        for part in comm:
            mse_sum += part["mse_sum"]
            mse_n += part["mse_n"]

        if dist.is_primary():
            lr = optimizer.param_groups[0]["lr"]

            loader.set_description(
                (
                    f"epoch: {epoch + 1}; mse: {recon_loss.item():.5f}; "
                    f"latent: {latent_loss.item():.3f}; avg mse: {mse_sum / mse_n:.5f}; "
                    f"lr: {lr:.5f}"
                )
            )

            if i % 100 == 0:
                model.eval()

                sample = img[:sample_size]

                with torch.no_grad():
                    out, _ = model(sample)

                utils.save_image(
                    torch.cat([sample, out], 0),
                    f"sample/{str(epoch + 1).zfill(5)}_{str(i).zfill(5)}.png",
                    nrow=sample_size,
                    normalize=True,
                    range=(-1, 1),
                )

                model.train()


def main(args):
    device = "cpu"

    args.distributed = dist.get_world_size() > 1

    dataset = _synthetic_images(256, args.size)
    sampler = dist.data_sampler(dataset, shuffle=True, distributed=args.distributed)
    loader = DataLoader(
        dataset, batch_size=128 // args.n_gpu, sampler=sampler, num_workers=2
    )

    model = VQVAE().to(device)

    if args.distributed:
        model = nn.parallel.DistributedDataParallel(
            model,
            device_ids=[dist.get_local_rank()],
            output_device=dist.get_local_rank(),
        )

    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    scheduler = None
    if args.sched == "cycle":
        scheduler = CycleScheduler(
            optimizer,
            args.lr,
            n_iter=len(loader) * args.epoch,
            momentum=None,
            warmup_proportion=0.05,
        )

    for i in range(args.epoch):
        train(i, loader, model, optimizer, scheduler, device)

        if dist.is_primary():
            torch.save(model.state_dict(), f"checkpoint/vqvae_{str(i + 1).zfill(3)}.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_gpu", type=int, default=1)

    port = (
        2 ** 15
        + 2 ** 14
        + hash(os.getuid() if sys.platform != "win32" else 1) % 2 ** 14
    )
    parser.add_argument("--dist_url", default=f"tcp://127.0.0.1:{port}")

    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--epoch", type=int, default=560)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--sched", type=str)
    parser.add_argument("path", type=str)

    args = parser.parse_args()

    print(args)

    dist.launch(main, args.n_gpu, 1, 0, args.dist_url, args=(args,))
