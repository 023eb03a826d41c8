# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/image_segmentation/semantic_segmentation_unet/utils.py (commit 65b8c8049560b19ace11ef754cb4dbe5aa415296)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (data and file output only; the code is otherwise as written):
#   - CarvanaDataset (dataset.py: Carvana JPEG images and GIF masks read with PIL, then the
#     albumentations transforms) -> _SyntheticCarvana: random 3x32x48 images in [0, 1] (what
#     Normalize(mean 0, std 1, max_pixel_value 255) and ToTensorV2 give) and 32x48 float
#     masks of 0s and 1s (dataset.py's mask[mask == 255.0] = 1.0), 16 train / 8 val pairs;
#     it takes and ignores the directories and transform
#   - removed `import torchvision`; save_predictions_as_imgs' torchvision.utils.save_image
#     calls (PNG files) -> removed: the predictions are made and not written
import torch
from torch.utils.data import DataLoader


# synthetic stand-in for dataset.py's CarvanaDataset after the transforms (see the header)
class _SyntheticCarvana(torch.utils.data.Dataset):
    def __init__(self, image_dir, mask_dir, transform=None):
        n = 16 if "train" in image_dir else 8
        self.images = torch.rand(n, 3, 32, 48)
        self.masks = (torch.rand(n, 32, 48) > 0.5).float()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.images[index], self.masks[index]


CarvanaDataset = _SyntheticCarvana

def save_checkpoint(state, filename="my_checkpoint.pth.tar"):
    print("=> Saving checkpoint")
    torch.save(state, filename)

def load_checkpoint(checkpoint, model):
    print("=> Loading checkpoint")
    model.load_state_dict(checkpoint["state_dict"])

def get_loaders(
    train_dir,
    train_maskdir,
    val_dir,
    val_maskdir,
    batch_size,
    train_transform,
    val_transform,
    num_workers=4,
    pin_memory=True,
):
    train_ds = CarvanaDataset(
        image_dir=train_dir,
        mask_dir=train_maskdir,
        transform=train_transform,
    )

    train_loader = DataLoader(
        train_ds,
        batch_size=batch_size,
        num_workers=num_workers,
        pin_memory=pin_memory,
        shuffle=True,
    )

    val_ds = CarvanaDataset(
        image_dir=val_dir,
        mask_dir=val_maskdir,
        transform=val_transform,
    )

    val_loader = DataLoader(
        val_ds,
        batch_size=batch_size,
        num_workers=num_workers,
        pin_memory=pin_memory,
        shuffle=False,
    )

    return train_loader, val_loader

def check_accuracy(loader, model, device="cuda"):
    num_correct = 0
    num_pixels = 0
    dice_score = 0
    model.eval()

    with torch.no_grad():
        for x, y in loader:
            x = x.to(device)
            y = y.to(device).unsqueeze(1)
            preds = torch.sigmoid(model(x))
            preds = (preds > 0.5).float()
            num_correct += (preds == y).sum()
            num_pixels += torch.numel(preds)
            dice_score += (2 * (preds * y).sum()) / (
                (preds + y).sum() + 1e-8
            )

    print(
        f"Got {num_correct}/{num_pixels} with acc {num_correct/num_pixels*100:.2f}"
    )
    print(f"Dice score: {dice_score/len(loader)}")
    model.train()

def save_predictions_as_imgs(
    loader, model, folder="saved_images/", device="cuda"
):
    model.eval()
    for idx, (x, y) in enumerate(loader):
        x = x.to(device=device)
        with torch.no_grad():
            preds = torch.sigmoid(model(x))
            preds = (preds > 0.5).float()

    model.train()
