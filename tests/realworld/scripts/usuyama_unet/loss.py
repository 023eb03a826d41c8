# Source: https://github.com/usuyama/pytorch-unet loss.py (commit a0ec1374e06ca9161c21781302328b074f19391b)
# Licence: MIT. Copyright (c) 2018 Naoto Usuyama (LICENSE, this folder)
# Changes: none.
import torch
import torch.nn as nn

def dice_loss(pred, target, smooth = 1.):
    pred = pred.contiguous()
    target = target.contiguous()    

    intersection = (pred * target).sum(dim=2).sum(dim=2)
    
    loss = (1 - ((2. * intersection + smooth) / (pred.sum(dim=2).sum(dim=2) + target.sum(dim=2).sum(dim=2) + smooth)))
    
    return loss.mean()
