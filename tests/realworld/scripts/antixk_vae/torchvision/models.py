# See __init__.py: only the name models/dfcvae.py imports.


def vgg19_bn(*args, **kwargs):
    raise RuntimeError("torchvision's pretrained vgg19_bn is not available here")
