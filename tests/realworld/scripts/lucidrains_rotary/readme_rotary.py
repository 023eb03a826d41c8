# Source: https://github.com/lucidrains/rotary-embedding-torch (commit 8bb4643d1c29f944c47d2e807452ac437689af18)
# Licence: MIT, Copyright (c) 2021 Phil Wang (LICENSE copied to this folder).
# rotary_embedding_torch/ is copied unchanged.
# This driver runs the README's snippets (sizes shrunk: seq 1024 -> 16) and then trains a
# one-layer attention with learned rotary frequencies and with xpos; the driver is ours.
import torch
from torch import nn
import torch.nn.functional as F
from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb

rotary_emb = RotaryEmbedding(dim = 32)
q = torch.randn(1, 8, 16, 64)
k = torch.randn(1, 8, 16, 64)
q1 = rotary_emb.rotate_queries_or_keys(q)
k1 = rotary_emb.rotate_queries_or_keys(k)
print(q1.sum(), k1[0, 0, :2])

# kv cache
q2 = torch.randn(1, 8, 1, 64)
q2r, k2r = rotary_emb.rotate_queries_with_cached_keys(q2, k)
print(q2r[0, :2, 0, :8], k2r.abs().mean())
print(rotary_emb.rotate_queries_or_keys(q2, offset = k.shape[-2] - q2.shape[-2])[0, :2, 0, :8])

# axial
pos_emb = RotaryEmbedding(dim = 16, freqs_for = 'pixel', max_freq = 256)
qa = torch.randn(1, 4, 8, 6, 64)
ka = torch.randn(1, 4, 8, 6, 64)
freqs = pos_emb.get_axial_freqs(4, 8, 6)
print(freqs.shape, freqs[1, 2, 3])
qa = apply_rotary_emb(freqs, qa)
ka = apply_rotary_emb(freqs, ka)
print(qa.mean(), ka[0, 1, 2, 3, :8])

# xpos
xrot = RotaryEmbedding(dim = 32, use_xpos = True)
qx, kx = xrot.rotate_queries_and_keys(q, k)
print(qx[0, 0, :3, :6], kx.std())

# interpolation
irot = RotaryEmbedding(dim = 32, interpolate_factor = 2.)
print(irot.rotate_queries_or_keys(q)[0, 1, 5, :8])

# a small training: attention with learned frequencies (seq_before_head_dim) and xpos
class Attn(nn.Module):
    def __init__(self, dim, heads, rot):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.rot = rot
    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        if self.rot.use_xpos:
            q, k = self.rot.rotate_queries_and_keys(q, k)
        else:
            q = self.rot.rotate_queries_or_keys(q)
            k = self.rot.rotate_queries_or_keys(k)
        att = (q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5).softmax(-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, n, d))

for rot in (RotaryEmbedding(dim=8, learned_freq=True), RotaryEmbedding(dim=8, use_xpos=True),
            RotaryEmbedding(dim=8, freqs_for='constant', num_freqs=4, learned_freq=True)):
    torch.manual_seed(0)
    net = Attn(32, 4, rot)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    x = torch.randn(4, 12, 32)
    y = torch.randn(4, 12, 32)
    for step in range(6):
        loss = F.mse_loss(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item(), rot.freqs.detach()[:4])
