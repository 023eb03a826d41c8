# A stand-in for torchvision (not available here), so that models/__init__.py's import of
# models/dfcvae.py (`from torchvision.models import vgg19_bn`) succeeds. DFCVAE, the only
# model that uses it, needs ImageNet-pretrained VGG19 weights and is not run by the corpus.
