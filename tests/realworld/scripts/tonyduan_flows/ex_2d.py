# Source: https://github.com/tonyduan/normalizing-flows examples/ex_2d.py (commit 3ee9127e3753be3878a0a4fd3ea435ff2d31d143)
# Licence: MIT. Copyright (c) 2019 Tony Duan
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (plots and layout only; the code is otherwise as written):
#   - moved from examples/ to beside src/ (the repository runs it from its root, where
#     `from src.flows import *` resolves)
#   - matplotlib is not installed: its import and plot_data removed; each of the four plots
#     -> a print of the plotted points' absolute sum read with item() (a probe: the script
#     logs no value beyond its losses): the training data's latent codes z and 500 samples
#     (model.sample kept where it was), then the data after each flow; plt.title, savefig
#     and show removed
#   - the flow and the number of iterations are given on its command line (corpus.py)
import numpy as np
import itertools
import logging

import torch
import torch.optim as optim
import torch.nn.functional as F
from argparse import ArgumentParser

from src.flows import *
from src.models import NormalizingFlowModel


def gen_data(n=512):
    return np.r_[np.random.randn(n // 3, 2) + np.array([0, 6]),
                 np.random.randn(n // 3, 2) + np.array([2.5, 3]),
                 np.random.randn(n // 3, 2) + np.array([-2.5, 3])]


def gen_mixture_data(n=512):
    return np.r_[np.random.randn(n // 2, 2) + np.array([5, 3]),
                 np.random.randn(n // 2, 2) + np.array([-5, 3])]



if __name__ == "__main__":

    argparser = ArgumentParser()
    argparser.add_argument("--n", default=512, type=int)
    argparser.add_argument("--flows", default=2, type=int)
    argparser.add_argument("--flow", default="NSF_CL", type=str)
    argparser.add_argument("--iterations", default=500, type=int)
    argparser.add_argument("--use-mixture", action="store_true")
    argparser.add_argument("--convolve", action="store_true")
    argparser.add_argument("--actnorm", action="store_true")
    args = argparser.parse_args()

    logging.basicConfig(level=logging.INFO)
    logger = logging.getLogger(__name__)

    flow = eval(args.flow)
    flows = [flow(dim=2) for _ in range(args.flows)]
    if args.convolve:
        convs = [OneByOneConv(dim=2) for _ in range(args.flows)]
        flows = list(itertools.chain(*zip(convs, flows)))
    if args.actnorm:
        actnorms = [ActNorm(dim=2) for _ in range(args.flows)]
        flows = list(itertools.chain(*zip(actnorms, flows)))

    model = NormalizingFlowModel(dim=2, flows=flows)

    optimizer = optim.Adam(model.parameters(), lr=0.005)
    if args.use_mixture:
        x = torch.Tensor(gen_mixture_data(args.n))
    else:
        x = torch.Tensor(gen_data(args.n))

    for i in range(x.shape[1]):
        x[:,i] = (x[:,i] - torch.mean(x[:,i])) / torch.std(x[:,i])

    for i in range(args.iterations):
        optimizer.zero_grad()
        z, prior_logprob, log_det = model(x)
        logprob = prior_logprob + log_det
        loss = -torch.mean(prior_logprob + log_det)
        loss.backward()
        optimizer.step()
        if i % 100 == 0:
            logger.info(f"Iter: {i}\t" +
                        f"Logprob: {logprob.mean().data:.2f}\t" +
                        f"Prior: {prior_logprob.mean().data:.2f}\t" +
                        f"LogDet: {log_det.mean().data:.2f}")

    samples = model.sample(500).data
    print(samples.abs().sum().item(), z.data.abs().sum().item())  # probe

    for f in flows:
        x = f(x)[0].data
        print(x.abs().sum().item())  # probe
