# Source: https://github.com/pytorch/tutorials recipes_source/recipes/changing_default_device.py (commit 0a659232c0d83868b55cdd02c4d9363f8a4b862e)
# Licence: BSD 3-Clause. Copyright (c) 2017-2022, Pytorch contributors. All rights reserved.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (device only; the code is otherwise as written):
#   - torch.device('cuda') and set_default_device('cuda') -> 'cpu' (the corpus runs on CPU)
#   - the recipe's prose (module docstring, explanatory comments) shortened
"""
Changing default device
=======================
"""
import torch

USE_CUDA = False

mod = torch.nn.Linear(20, 30)
if USE_CUDA:
    mod.cuda()

device = 'cpu'
if USE_CUDA:
    device = 'cuda'
inp = torch.randn(128, 20, device=device)
print(mod(inp).device)

###################################################################
# PyTorch now also has a context manager which can take care of the
# device transfer automatically. Here is an example:

with torch.device('cpu'):
    mod = torch.nn.Linear(20, 30)
    print(mod.weight.device)
    print(mod(torch.randn(128, 20)).device)

#########################################
# You can also set it globally like this: 

torch.set_default_device('cpu')

mod = torch.nn.Linear(20, 30)
print(mod.weight.device)
print(mod(torch.randn(128, 20)).device)
