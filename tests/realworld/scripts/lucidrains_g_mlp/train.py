# Source: https://github.com/lucidrains/g-mlp-pytorch train.py (commit 970966c10c10770b2098b8f88c7d1f86efbf611b)
# Licence: MIT. Copyright (c) 2021 Phil Wang (the LICENSE file's line; the file is also copied
#   to LICENSE in this folder). g_mlp_pytorch/ is the repository's package, unchanged.
# Changes (sizes, steps, data, device and a stand-in for a library not installed here; the
#   model, the wrapper and the training loop are as written):
#   - ./data/enwik8.gz (the first 95e6 bytes of enwik8 as uint8, split at 90e6) -> 4,000
#     random bytes in [0, 256) from numpy's RandomState(0), split at 3,000; the gzip import
#     is kept
#   - NUM_BATCHES 1e5 -> 3, BATCH_SIZE 4 -> 2, GRADIENT_ACCUMULATE_EVERY 4 -> 2,
#     GENERATE_LENGTH 768 -> 8, SEQ_LEN 768 -> 32; gMLP's dim 512 -> 32, depth 8 -> 2
#   - model.cuda() and full_seq.cuda() removed: the script has no CPU path, and neither torch
#     nor lazytorch has a GPU here
#   - tqdm (not installed) -> a stand-in that yields the items
from g_mlp_pytorch import gMLP
from g_mlp_pytorch.autoregressive_wrapper import AutoregressiveWrapper

import random
import gzip
import numpy as np
import torch
import torch.optim as optim
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset


# tqdm is not installed here: a stand-in that yields the items
class tqdm:
    @staticmethod
    def tqdm(iterable, **kwargs):
        return iterable

# constants

NUM_BATCHES = 3
BATCH_SIZE = 2
GRADIENT_ACCUMULATE_EVERY = 2
LEARNING_RATE = 2e-4
VALIDATE_EVERY  = 100
GENERATE_EVERY  = 500
GENERATE_LENGTH = 8
SEQ_LEN = 32

# helpers

def cycle(loader):
    while True:
        for data in loader:
            yield data

def decode_token(token):
    return str(chr(max(32, token)))

def decode_tokens(tokens):
    return ''.join(list(map(decode_token, tokens)))

# instantiate GPT-like decoder model

model = gMLP(
    num_tokens = 256,
    dim = 32,
    seq_len = SEQ_LEN,
    depth = 2,
    causal = True
)

model = AutoregressiveWrapper(model)

# prepare enwik8 data

# synthetic stand-in for enwik8's bytes
X = np.random.RandomState(0).randint(0, 256, size=4000).astype(np.uint8)
trX, vaX = np.split(X, [3000])
data_train, data_val = torch.from_numpy(trX), torch.from_numpy(vaX)

class TextSamplerDataset(Dataset):
    def __init__(self, data, seq_len):
        super().__init__()
        self.data = data
        self.seq_len = seq_len

    def __getitem__(self, index):
        rand_start = torch.randint(0, self.data.size(0) - self.seq_len - 1, (1,))
        full_seq = self.data[rand_start: rand_start + self.seq_len + 1].long()
        return full_seq

    def __len__(self):
        return self.data.size(0) // self.seq_len

train_dataset = TextSamplerDataset(data_train, SEQ_LEN)
val_dataset   = TextSamplerDataset(data_val, SEQ_LEN)
train_loader  = cycle(DataLoader(train_dataset, batch_size = BATCH_SIZE))
val_loader    = cycle(DataLoader(val_dataset, batch_size = BATCH_SIZE))

# optimizer

optim = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)

# training

for i in tqdm.tqdm(range(NUM_BATCHES), mininterval=10., desc='training'):
    model.train()

    for __ in range(GRADIENT_ACCUMULATE_EVERY):
        loss = model(next(train_loader))
        loss.backward()

    print(f'training loss: {loss.item()}')
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    optim.step()
    optim.zero_grad()

    if i % VALIDATE_EVERY == 0:
        model.eval()
        with torch.no_grad():
            loss = model(next(val_loader))
            print(f'validation loss: {loss.item()}')

    if i % GENERATE_EVERY == 0:
        model.eval()
        inp = random.choice(val_dataset)[:-1]
        prime = decode_tokens(inp)
        print(f'%s \n\n %s', (prime, '*' * 100))

        sample = model.generate(inp, GENERATE_LENGTH)
        output_str = decode_tokens(sample)
        print(output_str)
