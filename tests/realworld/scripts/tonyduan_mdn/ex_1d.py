# Source: https://github.com/tonyduan/mixture-density-network examples/ex_1d.py (commit 5bfeae42de2adf42d680bdfee24bb8c2ce52f259)
# Licence: MIT. Copyright (c) 2019 Tony Duan
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (plots and layout only; the code is otherwise as written):
#   - moved from examples/ to beside src/ (the repository runs it from its root, where
#     `from src.blocks import ...` resolves)
#   - matplotlib is not installed: its import, plot_data and the closing figure removed; one
#     line added in the figure's place (a probe: the script logs no value beyond its
#     losses): the sum of the drawn samples, read with item()
#   - the number of iterations is given on its command line (corpus.py)
from argparse import ArgumentParser
import logging

import numpy as np
import torch
import torch.optim as optim

from src.blocks import MixtureDensityNetwork, NoiseType


def gen_data(n=512):
    y = np.linspace(-1, 1, n)
    x = 7 * np.sin(5 * y) + 0.5 * y + 0.5 * np.random.randn(*y.shape)
    return x[:,np.newaxis], y[:,np.newaxis]

if __name__ == "__main__":

    argparser = ArgumentParser()
    argparser.add_argument("--n-iterations", type=int, default=2000)
    args = argparser.parse_args()

    logging.basicConfig(level=logging.INFO)
    logger = logging.getLogger(__name__)

    x, y = gen_data()
    x = torch.Tensor(x)
    y = torch.Tensor(y)

    model = MixtureDensityNetwork(1, 1, n_components=3, hidden_dim=50, noise_type=NoiseType.DIAGONAL)
    optimizer = optim.Adam(model.parameters(), lr=0.005)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, args.n_iterations)

    for i in range(args.n_iterations):
        optimizer.zero_grad()
        loss = model.loss(x, y).mean()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if i % 100 == 0:
            logger.info(f"Iter: {i}\t" + f"Loss: {loss.data:.2f}")

    with torch.no_grad():
        y_hat = model.sample(x)

    print(y_hat.sum().item())  # probe
