# Source: https://github.com/aladdinpersson/Machine-Learning-Collection ML/Pytorch/GANs/ProGAN/config.py (commit 74597aa8fdaf5646cbf0c8d31f23045fd4cc4efd)
# Licence: MIT. Copyright (c) 2020 Aladdin Persson.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, epochs and missing libraries only):
#   - removed `import cv2` (not installed, and nothing here uses it)
#   - START_TRAIN_AT_IMG_SIZE 128 -> 4, BATCH_SIZES [32, 32, 32, 16, 16, 16, 16, 8, 4] -> [4, 4] (two sizes trained: 4x4, then 8x8 with the fade-in), PROGRESSIVE_EPOCHS [30] -> [1] per size
#   - Z_DIM 256 -> 32, IN_CHANNELS 256 -> 32
#   - NUM_WORKERS 4 -> 0 (the loader reads in this process)
import torch
from math import log2

START_TRAIN_AT_IMG_SIZE = 4
DATASET = 'celeb_dataset'
CHECKPOINT_GEN = "generator.pth"
CHECKPOINT_CRITIC = "critic.pth"
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
SAVE_MODEL = True
LOAD_MODEL = False
LEARNING_RATE = 1e-3
BATCH_SIZES = [4, 4]
CHANNELS_IMG = 3
Z_DIM = 32  # should be 512 in original paper
IN_CHANNELS = 32  # should be 512 in original paper
CRITIC_ITERATIONS = 1
LAMBDA_GP = 10
PROGRESSIVE_EPOCHS = [1] * len(BATCH_SIZES)
FIXED_NOISE = torch.randn(8, Z_DIM, 1, 1).to(DEVICE)
NUM_WORKERS = 0
