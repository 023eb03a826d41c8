"""Data-parallel training: the MLP example (examples/train_mlp.py) on N processes.

    python examples/train_ddp.py                                 # one process
    lazytorch run --nproc-per-node 2 examples/train_ddp.py       # two ranks on this machine
    mpiexec -n 2 python examples/train_ddp.py                    # the same, started by MPI

Each rank trains on its shard of every epoch (DistributedSampler) with a per-rank batch of
64 / N, so the global batch, and the training, are those of one process with batch 64;
DistributedDataParallel averages the gradients after each backward. Rank 0 evaluates and
prints. Multi-rank runs need ``pip install -e ".[distributed]"`` (docs/distributed.md).
"""

from __future__ import annotations

import argparse
import time

from train_mlp import load_data

import lazytorch as torch
import lazytorch.distributed as dist
from lazytorch.nn.parallel import DistributedDataParallel
from lazytorch.utils.data.distributed import DistributedSampler


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)

    x, y, source = load_data(args.seed)
    n_test = len(x) // 5
    train = torch.utils.data.TensorDataset(torch.tensor(x[n_test:]), torch.tensor(y[n_test:]))
    x_test, y_test = torch.tensor(x[:n_test]), torch.tensor(y[:n_test])
    sampler = DistributedSampler(train, shuffle=True, seed=args.seed, drop_last=True)
    loader = torch.utils.data.DataLoader(
        train, batch_size=64 // world, sampler=sampler, drop_last=True
    )

    model = DistributedDataParallel(
        torch.nn.Sequential(
            torch.nn.Linear(64, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, 128),
            torch.nn.ReLU(),
            torch.nn.Linear(128, 10),
        )
    )
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()

    t0 = time.perf_counter()
    acc = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        model.train()
        total = torch.zeros(())
        for xb, yb in loader:
            loss = loss_fn(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()
        dist.all_reduce(total, op=dist.ReduceOp.AVG)  # the mean loss over the ranks
        if epoch % 5 == 4 or epoch == args.epochs - 1:
            model.eval()
            with torch.no_grad():
                acc = (model.module(x_test).argmax(1) == y_test).float().mean().item()
            if rank == 0:
                print(
                    f"epoch {epoch + 1:3d}  loss {total.item() / len(loader):.4f}  "
                    f"test accuracy {acc:.3f}"
                )
    if rank == 0:
        print(
            f"lazytorch on {world} rank(s), {source}: {time.perf_counter() - t0:.1f} s, "
            f"final test accuracy {acc:.3f}"
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
