# Source: https://github.com/johnma2006/mamba-minimal model.py + demo.ipynb (commit 03de542a36d873f6e6c4057ad687278cc6ae944d)
# Licence: Apache-2.0. Copyright 2023 Tri Dao, Albert Gu (the appendix line of the repository's
#   LICENSE, copied to LICENSE in this folder; the repository is johnma2006's).
# model.py is the repository's file, unchanged (a pure-PyTorch Mamba: einops rearrange /
# repeat / einsum, a depthwise causal Conv1d, softplus step sizes, a sequential selective
# scan over torch.stack, RMSNorm with rsqrt, tied embedding and output weights).
# This driver is ours: demo.ipynb loads pretrained weights from HuggingFace (not available
# here) and generates text; instead a tiny model is trained for a few steps on synthetic
# bytes, then demo.ipynb's generate() (copied below as written) samples from it. Changes:
#   - Mamba.from_pretrained('state-spaces/mamba-370m') -> Mamba(ModelArgs(d_model=32,
#     n_layer=2, vocab_size=256, d_state=8)) trained by the loop below (AdamW, next-byte
#     cross entropy, 8 steps of 4 x 24 bytes from numpy's RandomState(0))
#   - transformers' AutoTokenizer (not installed) -> a byte-level stand-in with the same
#     call and decode interface; n_tokens_to_gen 50 -> 8 in the calls
import numpy as np
import torch
import torch.nn.functional as F

from model import Mamba, ModelArgs


# transformers is not installed: a byte-level tokenizer with the interface generate() uses
class ByteTokenizer:
    class _Encoded:
        def __init__(self, input_ids):
            self.input_ids = input_ids

    def __call__(self, prompt, return_tensors="pt"):
        return self._Encoded(torch.tensor([list(prompt.encode("utf-8"))]))

    def decode(self, ids):
        return bytes(i % 256 for i in ids).decode("utf-8", errors="replace")


model = Mamba(ModelArgs(d_model=32, n_layer=2, vocab_size=256, d_state=8))
tokenizer = ByteTokenizer()

# training on synthetic bytes: a skewed distribution, so the model has something to learn
data = torch.from_numpy(
    np.random.RandomState(0).choice(256, size=4000, p=np.arange(1, 257) / np.arange(1, 257).sum())
)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
model.train()
for step in range(8):
    starts = torch.randint(0, len(data) - 25, (4,))
    batch = torch.stack([data[s : s + 25] for s in starts])
    logits = model(batch[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")


def generate(model,
             tokenizer,
             prompt: str,
             n_tokens_to_gen: int = 50,
             sample: bool = True,
             top_k: int = 40):
    model.eval()
    
    input_ids = tokenizer(prompt, return_tensors='pt').input_ids
    
    for token_n in range(n_tokens_to_gen):
        with torch.no_grad():
            indices_to_input = input_ids
            next_token_logits = model(indices_to_input)[:, -1]
        
        probs = F.softmax(next_token_logits, dim=-1)
        (batch, vocab_size) = probs.shape
        
        if top_k is not None:
            (values, indices) = torch.topk(probs, k=top_k)
            probs[probs < values[:, -1, None]] = 0
            probs = probs / probs.sum(axis=1, keepdims=True)
        
        if sample:
            next_indices = torch.multinomial(probs, num_samples=1)
        else:
            next_indices = torch.argmax(probs, dim=-1)[:, None]
        
        input_ids = torch.cat([input_ids, next_indices], dim=1)

    output_completions = [tokenizer.decode(output.tolist()) for output in input_ids][0]
    
    return output_completions


print(generate(model, tokenizer, 'Mamba is the', n_tokens_to_gen=8))
print(generate(model, tokenizer, 'John: Hi!\nSally:', n_tokens_to_gen=8, sample=False))
