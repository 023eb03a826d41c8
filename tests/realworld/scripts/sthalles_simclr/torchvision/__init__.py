# A stand-in for the parts of torchvision (not installed here) that sthalles/SimCLR uses:
# models.resnet18 / resnet50, datasets.CIFAR10 / STL10 and the transforms of its augmentation
# pipeline. Ours, not torchvision's code, except models.py (see each module's header).
from . import datasets, models, transforms
