# Source: https://github.com/sthalles/SimCLR data_aug/view_generator.py (commit 1848fc934ad844ae630e6c452300433fe99acfd9)
# Licence: MIT. Copyright (c) 2020 Thalles Silva
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none below this header.
import numpy as np

np.random.seed(0)


class ContrastiveLearningViewGenerator(object):
    """Take two random crops of one image as the query and key."""

    def __init__(self, base_transform, n_views=2):
        self.base_transform = base_transform
        self.n_views = n_views

    def __call__(self, x):
        return [self.base_transform(x) for i in range(self.n_views)]
