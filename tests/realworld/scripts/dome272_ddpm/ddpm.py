# Source: https://github.com/dome272/Diffusion-Models-pytorch ddpm.py (commit be352208d0576039fec061238c0e4385a562a2d4)
# Licence: Apache License 2.0 (the repository's LICENSE is the licence's text with its
#   appendix's "Copyright [yyyy] [name of copyright owner]" left unfilled: no holder named;
#   the repository is dome272's). The licence's full text is in
#   tests/realworld/scripts/llms_from_scratch/LICENSE.txt.
# Changes (sizes, steps, data, device and file output only; the code is otherwise as
#   written; CRLF line endings -> LF):
#   - utils' get_data (torchvision ImageFolder of a local folder, Resize, RandomResizedCrop,
#     ToTensor, Normalize) -> a get_data here: a DataLoader over a TensorDataset of 8 random
#     3 x image_size x image_size images in [-1, 1] with int64 labels, shuffled, batch_size;
#     utils' setup_logging copied here as written (utils imports torchvision and PIL)
#   - utils' save_images (torchvision make_grid + a PIL image file) and torch.utils.tensorboard's
#     SummaryWriter -> stand-ins that write nothing; matplotlib, utils and tqdm imports
#     removed, tqdm -> a stand-in that yields the items (not installed)
#   - launch(): epochs 500 -> 1, batch_size 12 -> 2, image_size 64 -> 16, device "cuda" -> "cpu"
#   - train(): UNet() -> UNet(device=device): UNet's device defaults to "cuda" (its
#     pos_encoding builds an arange there), which a CPU-only torch refuses
#   - train(): Diffusion(..., noise_steps=10) instead of its default 1000 (the sampling after
#     each epoch runs the UNet once per noise step)
import os
import torch
import torch.nn as nn
from torch import optim
from modules import UNet
import logging


# tqdm is not installed here: a stand-in that yields the items and takes set_postfix
class tqdm:
    def __init__(self, iterable, **kwargs):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_postfix(self, **kwargs):
        pass


# tensorboard logs and image files: stand-ins that write nothing
class SummaryWriter:
    def __init__(self, *args, **kwargs):
        pass

    def add_scalar(self, *args, **kwargs):
        pass


def save_images(images, path, **kwargs):
    pass


# utils.setup_logging, as written
def setup_logging(run_name):
    os.makedirs("models", exist_ok=True)
    os.makedirs("results", exist_ok=True)
    os.makedirs(os.path.join("models", run_name), exist_ok=True)
    os.makedirs(os.path.join("results", run_name), exist_ok=True)


# synthetic stand-in for utils.get_data (an ImageFolder of landscape photos after
# RandomResizedCrop(image_size), ToTensor and Normalize to [-1, 1]): 8 random images with
# int64 labels, shuffled in batches of args.batch_size
def get_data(args):
    images = torch.rand(8, 3, args.image_size, args.image_size) * 2 - 1
    dataset = torch.utils.data.TensorDataset(images, torch.randint(0, 10, (8,)))
    return torch.utils.data.DataLoader(dataset, batch_size=args.batch_size, shuffle=True)

logging.basicConfig(format="%(asctime)s - %(levelname)s: %(message)s", level=logging.INFO, datefmt="%I:%M:%S")


class Diffusion:
    def __init__(self, noise_steps=1000, beta_start=1e-4, beta_end=0.02, img_size=256, device="cuda"):
        self.noise_steps = noise_steps
        self.beta_start = beta_start
        self.beta_end = beta_end
        self.img_size = img_size
        self.device = device

        self.beta = self.prepare_noise_schedule().to(device)
        self.alpha = 1. - self.beta
        self.alpha_hat = torch.cumprod(self.alpha, dim=0)

    def prepare_noise_schedule(self):
        return torch.linspace(self.beta_start, self.beta_end, self.noise_steps)

    def noise_images(self, x, t):
        sqrt_alpha_hat = torch.sqrt(self.alpha_hat[t])[:, None, None, None]
        sqrt_one_minus_alpha_hat = torch.sqrt(1 - self.alpha_hat[t])[:, None, None, None]
        Ɛ = torch.randn_like(x)
        return sqrt_alpha_hat * x + sqrt_one_minus_alpha_hat * Ɛ, Ɛ

    def sample_timesteps(self, n):
        return torch.randint(low=1, high=self.noise_steps, size=(n,))

    def sample(self, model, n):
        logging.info(f"Sampling {n} new images....")
        model.eval()
        with torch.no_grad():
            x = torch.randn((n, 3, self.img_size, self.img_size)).to(self.device)
            for i in tqdm(reversed(range(1, self.noise_steps)), position=0):
                t = (torch.ones(n) * i).long().to(self.device)
                predicted_noise = model(x, t)
                alpha = self.alpha[t][:, None, None, None]
                alpha_hat = self.alpha_hat[t][:, None, None, None]
                beta = self.beta[t][:, None, None, None]
                if i > 1:
                    noise = torch.randn_like(x)
                else:
                    noise = torch.zeros_like(x)
                x = 1 / torch.sqrt(alpha) * (x - ((1 - alpha) / (torch.sqrt(1 - alpha_hat))) * predicted_noise) + torch.sqrt(beta) * noise
        model.train()
        x = (x.clamp(-1, 1) + 1) / 2
        x = (x * 255).type(torch.uint8)
        return x


def train(args):
    setup_logging(args.run_name)
    device = args.device
    dataloader = get_data(args)
    model = UNet(device=device).to(device)
    optimizer = optim.AdamW(model.parameters(), lr=args.lr)
    mse = nn.MSELoss()
    diffusion = Diffusion(noise_steps=10, img_size=args.image_size, device=device)
    logger = SummaryWriter(os.path.join("runs", args.run_name))
    l = len(dataloader)

    for epoch in range(args.epochs):
        logging.info(f"Starting epoch {epoch}:")
        pbar = tqdm(dataloader)
        for i, (images, _) in enumerate(pbar):
            images = images.to(device)
            t = diffusion.sample_timesteps(images.shape[0]).to(device)
            x_t, noise = diffusion.noise_images(images, t)
            predicted_noise = model(x_t, t)
            loss = mse(noise, predicted_noise)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

            pbar.set_postfix(MSE=loss.item())
            logger.add_scalar("MSE", loss.item(), global_step=epoch * l + i)

        sampled_images = diffusion.sample(model, n=images.shape[0])
        save_images(sampled_images, os.path.join("results", args.run_name, f"{epoch}.jpg"))
        torch.save(model.state_dict(), os.path.join("models", args.run_name, f"ckpt.pt"))


def launch():
    import argparse
    parser = argparse.ArgumentParser()
    args = parser.parse_args()
    args.run_name = "DDPM_Uncondtional"
    args.epochs = 1
    args.batch_size = 2
    args.image_size = 16
    args.dataset_path = r"C:\Users\dome\datasets\landscape_img_folder"
    args.device = "cpu"
    args.lr = 3e-4
    train(args)


if __name__ == '__main__':
    launch()
    # device = "cuda"
    # model = UNet().to(device)
    # ckpt = torch.load("./working/orig/ckpt.pt")
    # model.load_state_dict(ckpt)
    # diffusion = Diffusion(img_size=64, device=device)
    # x = diffusion.sample(model, 8)
    # print(x.shape)
    # plt.figure(figsize=(32, 32))
    # plt.imshow(torch.cat([
    #     torch.cat([i for i in x.cpu()], dim=-1),
    # ], dim=-2).permute(1, 2, 0).cpu())
    # plt.show()
