# Source: https://github.com/openai/CLIP clip/model.py + README.md's usage (commit d05afc436d78f1c48dc0dbf8e5980a9d471f35f6)
# Licence: MIT. Copyright (c) 2021 OpenAI (the line of the repository's LICENSE, copied to
#   LICENSE in this folder).
# clip/model.py is the repository's file, unchanged. This driver is ours: the repository has
# no training script (clip.load downloads pretrained weights), so a tiny CLIP is trained for
# a few steps with the paper's symmetric contrastive loss on synthetic image/text pairs, then
# rebuilt the way clip.load builds a model on the CPU (build_model(state_dict), which converts
# the weights to float16, then .float()) and run as the README's usage runs it. Sizes:
#   --vision vit: VisionTransformer(32x32 images, patch 8, width 64, 2 layers)
#   --vision resnet: ModifiedResNet(layers (1, 1, 1, 1), width 16, 64x64 images), whose
#     AttentionPool2d calls F.multi_head_attention_forward with separate q/k/v weights
#   the text Transformer: context 16, vocabulary 100, width 64, 2 heads, 2 layers;
#   embed_dim 32; batch 8; AdamW(lr 5e-4, betas (0.9, 0.98), eps 1e-6, weight decay 0.2), the
#   paper's settings; 6 steps
# The text is synthetic token ids (clip.tokenize needs its BPE vocabulary and ftfy): random
# ids in [1, 98], an end-of-text token 99 (the largest id, as encode_text's argmax expects)
# at a random length, zeros after it.
import argparse

import numpy as np
import torch
import torch.nn.functional as F

from clip.model import CLIP, build_model

parser = argparse.ArgumentParser()
parser.add_argument("--vision", choices=["vit", "resnet"], default="vit")
parser.add_argument("--steps", type=int, default=6)
args = parser.parse_args()

device = "cpu"
if args.vision == "vit":
    vision = dict(image_resolution=32, vision_layers=2, vision_width=64, vision_patch_size=8)
else:
    vision = dict(
        image_resolution=64, vision_layers=(1, 1, 1, 1), vision_width=16, vision_patch_size=None
    )
model = CLIP(
    embed_dim=32,
    **vision,
    context_length=16,
    vocab_size=100,
    transformer_width=64,
    transformer_heads=2,
    transformer_layers=2,
).to(device)


def batch(n):
    size = model.visual.input_resolution
    images = torch.randn(n, 3, size, size)
    text = torch.randint(1, 99, (n, model.context_length))
    lengths = torch.randint(2, model.context_length, (n,))
    positions = torch.arange(model.context_length)[None, :]
    text[positions > lengths[:, None]] = 0
    text[torch.arange(n), lengths] = 99
    return images, text


optimizer = torch.optim.AdamW(
    model.parameters(), lr=5e-4, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.2
)
model.train()
for step in range(args.steps):
    images, text = batch(8)
    logits_per_image, logits_per_text = model(images, text)
    labels = torch.arange(len(images), device=device)
    loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    # the paper clips the learned temperature so that logits are scaled by at most 100
    with torch.no_grad():
        model.logit_scale.clamp_(0, np.log(100))
    acc = (logits_per_image.argmax(dim=-1) == labels).float().mean()
    print(f"step {step}: loss {loss.item():.4f} acc {acc.item():.3f}")

# clip.load on the CPU: build_model(state_dict) (float16 weights, eval mode), then .float()
model = build_model(model.state_dict()).to(device)
if str(device) == "cpu":
    model.float()

image, text = batch(3)
with torch.no_grad():
    image_features = model.encode_image(image[:1])
    text_features = model.encode_text(text)

    logits_per_image, logits_per_text = model(image[:1], text)
    probs = logits_per_image.softmax(dim=-1).cpu().numpy()

print("Label probs:", probs)
print("features:", image_features.norm(dim=-1).item(), text_features.norm(dim=-1).tolist())
