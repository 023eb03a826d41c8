# Source: https://github.com/cloneofsimo/minRF rf.py (commit 4fc10e0cc8ba976152c7936a1af9717209f03e18)
# Licence: Apache License 2.0 (the repository's LICENSE is the licence's text with its
#   appendix's "Copyright [yyyy] [name of copyright owner]" left unfilled: no holder named;
#   the repository is cloneofsimo's). The licence's full text is in
#   tests/realworld/scripts/llms_from_scratch/LICENSE.txt.
# Changes (sizes, epochs, data, device and file output only; the code is otherwise as
#   written):
#   - torchvision's MNIST (download, ToTensor, Pad(2), Normalize((0.5,), (0.5,))) ->
#     _synthetic_mnist: a TensorDataset of 64 random 1x32x32 images in [-1, 1] with int64
#     labels; DataLoader batch_size 256 -> 32 (2 steps, drop_last as written)
#   - range(100) epochs -> range(1) (the script takes no epoch count); the sampling after
#     the epoch takes 5 steps instead of RF.sample's default 50 (sample_steps=5)
#   - the five .cuda() calls (model, x and c, cond, init_noise) removed: the script has no
#     CPU path, and neither torch nor lazytorch has a GPU here
#   - wandb (not installed, logs online), tqdm (not installed), torchvision's make_grid and
#     PIL's GIF/PNG files -> stand-ins that log and write nothing (make_grid's stand-in
#     lays the images side by side, 3 channels, without padding; only file output reads it)
# implementation of Rectified Flow for simple minded people like me.
import argparse

import torch


class RF:
    def __init__(self, model, ln=True):
        self.model = model
        self.ln = ln

    def forward(self, x, cond):
        b = x.size(0)
        if self.ln:
            nt = torch.randn((b,)).to(x.device)
            t = torch.sigmoid(nt)
        else:
            t = torch.rand((b,)).to(x.device)
        texp = t.view([b, *([1] * len(x.shape[1:]))])
        z1 = torch.randn_like(x)
        zt = (1 - texp) * x + texp * z1
        vtheta = self.model(zt, t, cond)
        batchwise_mse = ((z1 - x - vtheta) ** 2).mean(dim=list(range(1, len(x.shape))))
        tlist = batchwise_mse.detach().cpu().reshape(-1).tolist()
        ttloss = [(tv, tloss) for tv, tloss in zip(t, tlist)]
        return batchwise_mse.mean(), ttloss

    @torch.no_grad()
    def sample(self, z, cond, null_cond=None, sample_steps=50, cfg=2.0):
        b = z.size(0)
        dt = 1.0 / sample_steps
        dt = torch.tensor([dt] * b).to(z.device).view([b, *([1] * len(z.shape[1:]))])
        images = [z]
        for i in range(sample_steps, 0, -1):
            t = i / sample_steps
            t = torch.tensor([t] * b).to(z.device)

            vc = self.model(z, t, cond)
            if null_cond is not None:
                vu = self.model(z, t, null_cond)
                vc = vu + cfg * (vc - vu)

            z = z - dt * vc
            images.append(z)
        return images


if __name__ == "__main__":
    # train class conditional RF on mnist.
    import numpy as np
    import torch.optim as optim
    from torch.utils.data import DataLoader

    from dit import DiT_Llama

    # wandb, tqdm, torchvision and PIL's image files: stand-ins that log and write nothing
    class wandb:
        @staticmethod
        def init(**kwargs):
            pass

        @staticmethod
        def log(values):
            pass

    def tqdm(iterable, **kwargs):
        return iterable

    def make_grid(images, nrow=8):
        return torch.cat(list(images), dim=2).expand(3, -1, -1)

    class Image:
        @staticmethod
        def fromarray(array):
            return Image()

        def save(self, *args, **kwargs):
            pass

    # synthetic stand-in for torchvision's MNIST after ToTensor, Pad(2) and Normalize:
    # n float images of 1x32x32 in [-1, 1] with int64 labels
    class datasets:
        @staticmethod
        def MNIST(root, train, download, transform):
            imgs = torch.rand(64, 1, 32, 32) * 2 - 1
            return torch.utils.data.TensorDataset(imgs, torch.randint(0, 10, (64,)))

        CIFAR10 = None

    # the transforms are applied by the stand-in's data already: each builds nothing
    class _NoTransforms:
        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    transforms = _NoTransforms()

    parser = argparse.ArgumentParser(description="use cifar?")
    parser.add_argument("--cifar", action="store_true")
    args = parser.parse_args()
    CIFAR = args.cifar

    if CIFAR:
        dataset_name = "cifar"
        fdatasets = datasets.CIFAR10
        transform = transforms.Compose(
            [
                transforms.ToTensor(),
                transforms.RandomCrop(32),
                transforms.RandomHorizontalFlip(),
                transforms.Normalize((0.5,), (0.5,)),
            ]
        )
        channels = 3
        model = DiT_Llama(
            channels, 32, dim=256, n_layers=10, n_heads=8, num_classes=10
        ).cuda()

    else:
        dataset_name = "mnist"
        fdatasets = datasets.MNIST
        transform = transforms.Compose(
            [
                transforms.ToTensor(),
                transforms.Pad(2),
                transforms.Normalize((0.5,), (0.5,)),
            ]
        )
        channels = 1
        model = DiT_Llama(
            channels, 32, dim=64, n_layers=6, n_heads=4, num_classes=10
        )

    model_size = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"Number of parameters: {model_size}, {model_size / 1e6}M")

    rf = RF(model)
    optimizer = optim.Adam(model.parameters(), lr=5e-4)
    criterion = torch.nn.MSELoss()

    mnist = fdatasets(root="./data", train=True, download=True, transform=transform)
    dataloader = DataLoader(mnist, batch_size=32, shuffle=True, drop_last=True)

    wandb.init(project=f"rf_{dataset_name}")

    for epoch in range(1):
        lossbin = {i: 0 for i in range(10)}
        losscnt = {i: 1e-6 for i in range(10)}
        for i, (x, c) in tqdm(enumerate(dataloader)):
            x, c = x, c
            optimizer.zero_grad()
            loss, blsct = rf.forward(x, c)
            loss.backward()
            optimizer.step()

            wandb.log({"loss": loss.item()})

            # count based on t
            for t, l in blsct:
                lossbin[int(t * 10)] += l
                losscnt[int(t * 10)] += 1

        # log
        for i in range(10):
            print(f"Epoch: {epoch}, {i} range loss: {lossbin[i] / losscnt[i]}")

        wandb.log({f"lossbin_{i}": lossbin[i] / losscnt[i] for i in range(10)})

        rf.model.eval()
        with torch.no_grad():
            cond = torch.arange(0, 16) % 10
            uncond = torch.ones_like(cond) * 10

            init_noise = torch.randn(16, channels, 32, 32)
            images = rf.sample(init_noise, cond, uncond, sample_steps=5)
            # image sequences to gif
            gif = []
            for image in images:
                # unnormalize
                image = image * 0.5 + 0.5
                image = image.clamp(0, 1)
                x_as_image = make_grid(image.float(), nrow=4)
                img = x_as_image.permute(1, 2, 0).cpu().numpy()
                img = (img * 255).astype(np.uint8)
                gif.append(Image.fromarray(img))

            gif[0].save(
                f"contents/sample_{epoch}.gif",
                save_all=True,
                append_images=gif[1:],
                duration=100,
                loop=0,
            )

            last_img = gif[-1]
            last_img.save(f"contents/sample_{epoch}_last.png")

        rf.model.train()
