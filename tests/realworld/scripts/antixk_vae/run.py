# Source: https://github.com/AntixK/PyTorch-VAE run.py + experiment.py + dataset.py (commit a6896b944c918dd7030e7d795a8c13e5c6345ec7)
# Licence: Apache-2.0. Copyright Anand Krishnamoorthy Subramanian 2020 (the line of the
#   repository's LICENSE.md, copied to LICENSE.md in this folder).
# models/ is the repository's models/ folder, unchanged; configs/ its configs/ folder with
#   data_params' train/val batch sizes 64 -> 8, num_workers 4 -> 0 and trainer_params'
#   max_epochs -> 2 (sizes only).
# This file is the driver that run.py implies, without PyTorch Lightning, torchvision or
# CelebA (none is available here). Changes:
#   - run.py's argument parsing, config loading and model construction are as written; the
#     config path is read relative to this folder when it is not found (the corpus runs
#     scripts in a scratch folder); seed_everything -> random / numpy / torch seeded with
#     the config's manual_seed (what Lightning's seed_everything does)
#   - VAEXperiment's training_step, validation_step, sample_images and configure_optimizers
#     are experiment.py's code; the class is a plain object instead of a LightningModule,
#     self.log_dict prints the dict (Lightning logs it to tensorboard), and sample_images'
#     vutils.save_image calls (image files) are dropped, with 144 samples -> 8
#   - Trainer.fit -> the loop Lightning runs for it: per epoch, a training pass (for each
#     batch and each optimizer: training_step, zero_grad, backward, step), a validation pass
#     under no_grad in eval mode, on_validation_end, then each scheduler's step
#   - VAEDataset (CelebA, 64x64 crops in [0, 1] from ToTensor, 40 binary attributes as
#     int64 labels) -> 24 train / 8 validation random images of the same shapes and dtypes
#     (TensorDatasets), shuffled for training as VAEDataset's loaders are
import argparse
import os
import random

import numpy as np
import torch
import yaml
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

from models import *

parser = argparse.ArgumentParser(description="Generic runner for VAE models")
parser.add_argument(
    "--config",
    "-c",
    dest="filename",
    metavar="FILE",
    help="path to the config file",
    default="configs/vae.yaml",
)

args = parser.parse_args()
if not os.path.exists(args.filename):
    args.filename = os.path.join(os.path.dirname(os.path.abspath(__file__)), args.filename)
with open(args.filename, "r") as file:
    try:
        config = yaml.safe_load(file)
    except yaml.YAMLError as exc:
        print(exc)


def seed_everything(seed, workers=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


# For reproducibility
seed_everything(config["exp_params"]["manual_seed"], True)


class VAEXperiment:
    def __init__(self, vae_model: BaseVAE, params: dict) -> None:
        self.model = vae_model
        self.params = params
        self.curr_device = None
        self.hold_graph = False
        try:
            self.hold_graph = self.params["retain_first_backpass"]
        except:
            pass

    def log_dict(self, values, sync_dist=False):
        print(values)

    def forward(self, input: Tensor, **kwargs) -> Tensor:
        return self.model(input, **kwargs)

    def training_step(self, batch, batch_idx, optimizer_idx=0):
        real_img, labels = batch
        self.curr_device = real_img.device

        results = self.forward(real_img, labels=labels)
        train_loss = self.model.loss_function(
            *results,
            M_N=self.params["kld_weight"],  # al_img.shape[0]/ self.num_train_imgs,
            optimizer_idx=optimizer_idx,
            batch_idx=batch_idx,
        )

        self.log_dict({key: val.item() for key, val in train_loss.items()}, sync_dist=True)

        return train_loss["loss"]

    def validation_step(self, batch, batch_idx, optimizer_idx=0):
        real_img, labels = batch
        self.curr_device = real_img.device

        results = self.forward(real_img, labels=labels)
        val_loss = self.model.loss_function(
            *results,
            M_N=1.0,  # real_img.shape[0]/ self.num_val_imgs,
            optimizer_idx=optimizer_idx,
            batch_idx=batch_idx,
        )

        self.log_dict({f"val_{key}": val.item() for key, val in val_loss.items()}, sync_dist=True)

    def on_validation_end(self) -> None:
        self.sample_images()

    def sample_images(self):
        # Get sample reconstruction image
        test_input, test_label = next(iter(test_dataloader))
        test_input = test_input.to(self.curr_device)
        test_label = test_label.to(self.curr_device)

        recons = self.model.generate(test_input, labels=test_label)

        try:
            samples = self.model.sample(8, self.curr_device, labels=test_label)
        except Warning:
            pass

    def configure_optimizers(self):

        optims = []
        scheds = []

        optimizer = optim.Adam(
            self.model.parameters(), lr=self.params["LR"], weight_decay=self.params["weight_decay"]
        )
        optims.append(optimizer)
        # Check if more than 1 optimizer is required (Used for adversarial training)
        try:
            if self.params["LR_2"] is not None:
                optimizer2 = optim.Adam(
                    getattr(self.model, self.params["submodel"]).parameters(), lr=self.params["LR_2"]
                )
                optims.append(optimizer2)
        except:
            pass

        try:
            if self.params["scheduler_gamma"] is not None:
                scheduler = optim.lr_scheduler.ExponentialLR(
                    optims[0], gamma=self.params["scheduler_gamma"]
                )
                scheds.append(scheduler)

                # Check if another scheduler is required for the second optimizer
                try:
                    if self.params["scheduler_gamma_2"] is not None:
                        scheduler2 = optim.lr_scheduler.ExponentialLR(
                            optims[1], gamma=self.params["scheduler_gamma_2"]
                        )
                        scheds.append(scheduler2)
                except:
                    pass
                return optims, scheds
        except:
            return optims


model = vae_models[config["model_params"]["name"]](**config["model_params"])
experiment = VAEXperiment(model, config["exp_params"])

# synthetic stand-in for CelebA: 64x64 RGB crops in [0, 1], 40 binary attributes (int64)
data_params = config["data_params"]
size = data_params["patch_size"]
train_dataset = TensorDataset(torch.rand(24, 3, size, size), torch.randint(0, 2, (24, 40)))
val_dataset = TensorDataset(torch.rand(8, 3, size, size), torch.randint(0, 2, (8, 40)))
train_dataloader = DataLoader(
    train_dataset,
    batch_size=data_params["train_batch_size"],
    num_workers=data_params["num_workers"],
    shuffle=True,
)
val_dataloader = DataLoader(
    val_dataset,
    batch_size=data_params["val_batch_size"],
    num_workers=data_params["num_workers"],
    shuffle=False,
)
test_dataloader = DataLoader(
    val_dataset, batch_size=data_params["val_batch_size"], num_workers=0, shuffle=True
)

print(f"======= Training {config['model_params']['name']} =======")
configured = experiment.configure_optimizers()
optims, scheds = configured if isinstance(configured, tuple) else (configured, [])
for epoch in range(config["trainer_params"]["max_epochs"]):
    model.train()
    for batch_idx, batch in enumerate(train_dataloader):
        for optimizer_idx, optimizer in enumerate(optims):
            loss = experiment.training_step(batch, batch_idx, optimizer_idx)
            optimizer.zero_grad()
            loss.backward(retain_graph=experiment.hold_graph)
            optimizer.step()
    model.eval()
    with torch.no_grad():
        for batch_idx, batch in enumerate(val_dataloader):
            experiment.validation_step(batch, batch_idx)
        experiment.on_validation_end()
    for scheduler in scheds:
        scheduler.step()
