# Source: https://github.com/karpathy/pytorch-made run.py (commit 81886ccc8270cdf3a2b32cbbca5c7feab422f907)
# Licence: MIT (the README's "License" section reads "MIT"; there is no LICENSE file and no
#   copyright line; the author is Andrej Karpathy).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes (sizes, epochs, data and device placement only; the code is otherwise as written):
#   - np.load of binarized_mnist.npz (a download) -> _synthetic_binarized_mnist: float32
#     arrays of 0/1 values, 300 x 784 'train_data' and 200 x 784 'valid_data' instead of
#     50,000 / 10,000 rows; the -d argument is still required and is only printed
#   - the three .cuda() calls (data and model) removed: the script has no CPU path, and
#     neither torch nor lazytorch has a GPU here
#   - range(100) epochs -> range(2) (the script takes no epoch count)
#   - sizes through the script's own arguments (see corpus.py)
"""
Trains MADE on Binarized MNIST, which can be downloaded here:
https://github.com/mgermain/MADE/releases/download/ICML2015/binarized_mnist.npz
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable

from made import MADE

# synthetic stand-in for binarized_mnist.npz: float32 rows of 784 values in {0, 1}, 300
# train and 200 validation rows instead of 50,000 / 10,000
def _synthetic_binarized_mnist():
    rng = np.random.RandomState(0)
    return {'train_data': (rng.rand(300, 784) < 0.3).astype(np.float32),
            'valid_data': (rng.rand(200, 784) < 0.3).astype(np.float32)}

# ------------------------------------------------------------------------------
def run_epoch(split, upto=None):
    torch.set_grad_enabled(split=='train') # enable/disable grad for efficiency of forwarding test batches
    model.train() if split == 'train' else model.eval()
    nsamples = 1 if split == 'train' else args.samples
    x = xtr if split == 'train' else xte
    N,D = x.size()
    B = 100 # batch size
    nsteps = N//B if upto is None else min(N//B, upto)
    lossfs = []
    for step in range(nsteps):
        
        # fetch the next batch of data
        xb = Variable(x[step*B:step*B+B])
        
        # get the logits, potentially run the same batch a number of times, resampling each time
        xbhat = torch.zeros_like(xb)
        for s in range(nsamples):
            # perform order/connectivity-agnostic training by resampling the masks
            if step % args.resample_every == 0 or split == 'test': # if in test, cycle masks every time
                model.update_masks()
            # forward the model
            xbhat += model(xb)
        xbhat /= nsamples
        
        # evaluate the binary cross entropy loss
        loss = F.binary_cross_entropy_with_logits(xbhat, xb, size_average=False) / B
        lossf = loss.data.item()
        lossfs.append(lossf)
        
        # backward/update
        if split == 'train':
            opt.zero_grad()
            loss.backward()
            opt.step()
        
    print("%s epoch average loss: %f" % (split, np.mean(lossfs)))
# ------------------------------------------------------------------------------

if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-d', '--data-path', required=True, type=str, help="Path to binarized_mnist.npz")
    parser.add_argument('-q', '--hiddens', type=str, default='500', help="Comma separated sizes for hidden layers, e.g. 500, or 500,500")
    parser.add_argument('-n', '--num-masks', type=int, default=1, help="Number of orderings for order/connection-agnostic training")
    parser.add_argument('-r', '--resample-every', type=int, default=20, help="For efficiency we can choose to resample orders/masks only once every this many steps")
    parser.add_argument('-s', '--samples', type=int, default=1, help="How many samples of connectivity/masks to average logits over during inference")
    args = parser.parse_args()
    # --------------------------------------------------------------------------
    
    # reproducibility is good
    np.random.seed(42)
    torch.manual_seed(42)
    torch.cuda.manual_seed_all(42)
    
    # load the dataset
    print("loading binarized mnist from", args.data_path)
    mnist = _synthetic_binarized_mnist()
    xtr, xte = mnist['train_data'], mnist['valid_data']
    xtr = torch.from_numpy(xtr)
    xte = torch.from_numpy(xte)

    # construct model and ship to GPU
    hidden_list = list(map(int, args.hiddens.split(',')))
    model = MADE(xtr.size(1), hidden_list, xtr.size(1), num_masks=args.num_masks)
    print("number of model parameters:",sum([np.prod(p.size()) for p in model.parameters()]))

    # set up the optimizer
    opt = torch.optim.Adam(model.parameters(), 1e-3, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=45, gamma=0.1)
    
    # start the training
    for epoch in range(2):
        print("epoch %d" % (epoch, ))
        scheduler.step(epoch)
        run_epoch('test', upto=5) # run only a few batches for approximate test accuracy
        run_epoch('train')
    
    print("optimization done. full test set eval:")
    run_epoch('test')

