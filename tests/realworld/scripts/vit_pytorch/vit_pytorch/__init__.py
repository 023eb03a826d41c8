# Source: https://github.com/lucidrains/vit-pytorch vit_pytorch/__init__.py (commit 69d24fe9e3024c0d4b02761123b8583a24ebed1e)
# Licence: MIT. Copyright (c) 2020 Phil Wang (the LICENSE file's line).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: the package's __init__ imports ViT, SimpleViT, MAE and Dino for the user; Dino
#   imports torchvision (not installed), and train_vit_decorr.py imports none of them (it
#   imports vit_pytorch.vit_with_decorr), so this copy of the package holds that module only
#   and an __init__ without those imports.
