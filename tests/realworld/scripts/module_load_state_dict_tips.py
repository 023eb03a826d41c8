# Source: https://github.com/pytorch/tutorials recipes_source/recipes/module_load_state_dict_tips.py (commit 06059c5ed41b731d4d3392d18d417fd267246e05)
# Licence: BSD 3-Clause. Copyright (c) 2017-2022, Pytorch contributors. All rights reserved.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none to the code; the recipe's prose (module docstring, explanatory comments)
#   shortened
"""
Tips for Loading an `nn.Module` from a Checkpoint
=================================================
"""

import torch
from torch import nn

class SomeModule(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(1, 1) for i in range(10)])

    def forward(self, x):
        return self.linears(x)


m = SomeModule()
torch.save(m.state_dict(), 'checkpoint.pth')
state_dict = torch.load('checkpoint.pth', mmap=True)
with torch.device('meta'):
  meta_m = SomeModule()
meta_m.load_state_dict(state_dict, assign=True)

###############################################################################
# A more vanilla code snippet that does not use any of the features listed above

state_dict = torch.load('checkpoint.pth')
m = SomeModule()
m.load_state_dict(state_dict)

###############################################################################
# At `torch.load` time, tensor storages are loaded to the device they were
# tagged with.

state_dict = torch.load('checkpoint.pth')

###############################################################################
# The `mmap` keyword argument to `torch.load` memory-maps the storages.

state_dict = torch.load('checkpoint.pth', mmap=True)


################################################################################
# For example

# def my_special_routine(t):
#     # for example, post training quantization and move t to device
#     pass

# def my_processing_function(key, device):
#     t = state_dict[key]
#     processed_t = my_special_routine(t)
#     del t
#     return processed_t

# for key in state_dict.keys():
#     device = 'cuda' + str(int(key[0]) % 8)
#     state_dict[key] = my_processing_function(key, device)


# Next, we consider the creation of the module.

m = SomeModule()

###############################################################################
# The `torch.device()` context manager with `device='meta'`.

with torch.device('meta'):
  meta_m = SomeModule()

###############################################################################
# Next, we consider the loading of the state dictionary.

m.load_state_dict(state_dict)

###############################################################################
# An in-place copy into a tensor on the ``meta``` device is a no-op: pass
# ``assign=True``.

meta_m.load_state_dict(state_dict, assign=True)
