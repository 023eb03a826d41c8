# Source: https://github.com/pytorch/tutorials recipes_source/recipes/tensorboard_with_pytorch.py (commit e93912ba5df54e3ccecdde4c63d58f6cffd00c41)
# Licence: BSD 3-Clause. Copyright (c) 2017-2022, Pytorch contributors. All rights reserved.
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none to the code; the recipe's prose (module docstring, comments on installing
#   and starting TensorBoard) shortened. It logs to ./runs (the harness's scratch folder).
"""
How to use TensorBoard with PyTorch
===================================
"""

######################################################################
# Using TensorBoard in PyTorch
# -----------------------------
#
# Let’s now try using TensorBoard with PyTorch! Before logging anything,
# we need to create a ``SummaryWriter`` instance.
#

import torch
from torch.utils.tensorboard import SummaryWriter
writer = SummaryWriter()

######################################################################
# Writer will output to ``./runs/`` directory by default.
#


######################################################################
# Log scalars
# -----------
#
# For example, lets create a simple linear regression training, and
# log loss value using ``add_scalar``
#

x = torch.arange(-5, 5, 0.1).view(-1, 1)
y = -5 * x + 0.1 * torch.randn(x.size())

model = torch.nn.Linear(1, 1)
criterion = torch.nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr = 0.1)

def train_model(iter):
    for epoch in range(iter):
        y1 = model(x)
        loss = criterion(y1, y)
        writer.add_scalar("Loss/train", loss, epoch)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        
train_model(10)
writer.flush()


######################################################################
# Call ``flush()`` method to make sure that all pending events
# have been written to disk.
#
# If you do not need the summary writer anymore, call ``close()`` method.
#

writer.close()
