# main.py imports `from torchvision import transforms as T` and uses none of it.
