# A stand-in for the parts of torchvision (not available here) that siamese_network/main.py
# uses: models.resnet18, datasets.MNIST and the transforms module (imported, unused). See
# each module's header for its source and what differs.
from torchvision import datasets, models, transforms
