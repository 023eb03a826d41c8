# Source: https://github.com/bot66/MNISTDiffusion utils.py (commit c7ba8e09174cbb88b9cc314db3bf2e514668681c)
# Licence: MIT. Copyright (c) 2022 Guocheng Tan (the LICENSE.md file's line).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none.
import torch

#torchvision ema implementation
#https://github.com/pytorch/vision/blob/main/references/classification/utils.py#L159
class ExponentialMovingAverage(torch.optim.swa_utils.AveragedModel):
    """Maintains moving averages of model parameters using an exponential decay.
    ``ema_avg = decay * avg_model_param + (1 - decay) * model_param``
    `torch.optim.swa_utils.AveragedModel <https://pytorch.org/docs/stable/optim.html#custom-averaging-strategies>`_
    is used to compute the EMA.
    """

    def __init__(self, model, decay, device="cpu"):
        def ema_avg(avg_model_param, model_param, num_averaged):
            return decay * avg_model_param + (1 - decay) * model_param

        super().__init__(model, device, ema_avg, use_buffers=True)