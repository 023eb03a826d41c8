# Stand-in for ikostrikov/pytorch-flows' datasets package (MIT, Copyright (c) 2018 Ilya
# Kostrikov), which reads the UCI data sets from files under data/. Only POWER is kept, with
# its shapes and dtype: `trn`, `val`, `tst` each hold `x`, a float32 array of N x 6 values
# normalised to zero mean and unit variance (as load_data_normalised leaves them), and `N`;
# `n_dims` is 6. N is 500 / 100 / 100 instead of about 1.66M / 185k / 205k.
import numpy as np


class POWER:
    class Data:
        def __init__(self, data):

            self.x = data.astype(np.float32)
            self.N = self.x.shape[0]

    def __init__(self):

        rng = np.random.RandomState(42)
        trn, val, tst = (rng.randn(n, 6) for n in (500, 100, 100))

        self.trn = self.Data(trn)
        self.val = self.Data(val)
        self.tst = self.Data(tst)

        self.n_dims = self.trn.x.shape[1]
