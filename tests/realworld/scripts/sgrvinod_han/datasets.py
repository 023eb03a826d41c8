# Source: https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Text-Classification datasets.py (commit ec11e234bbbae2adcd7d665489999410911a9fb4)
# Licence: MIT. Copyright (c) 2019 Sagar Vinodababu
#   The licence's full text is in LICENSE (this folder) and tests/realworld/README.md (Licences).
# Changes (data only; the code is otherwise as written):
#   - the torch.load of the preprocessed TRAIN/TEST data -> _synthetic_han_data, random documents
#     of the same structure built in place
from torch.utils.data import Dataset
import torch
import os


# synthetic stand-in for the TRAIN_data.pth.tar that create_input_files writes (same
# structure: documents padded to sentence_limit x word_limit word ids, 0 the padding, with
# their sentence and word counts and a label in 0..9): 48 documents (TRAIN) or 16 (TEST) of up
# to 4 sentences of up to 7 words over a vocabulary of 60 words, drawn with NumPy
def _synthetic_han_data(split, sentence_limit=4, word_limit=7, vocab_size=60, n_classes=10):
    import numpy as np
    n = 48 if split == 'TRAIN' else 16
    docs, spd, wps, labels = [], [], [], []
    for _ in range(n):
        n_sent = int(np.random.randint(1, sentence_limit + 1))
        words = [int(np.random.randint(1, word_limit + 1)) for _ in range(n_sent)] + [0] * (sentence_limit - n_sent)
        docs.append([[int(np.random.randint(1, vocab_size)) for _ in range(k)] + [0] * (word_limit - k) for k in words])
        spd.append(n_sent)
        wps.append(words)
        labels.append(int(np.random.randint(0, n_classes)))
    return {'docs': docs, 'sentences_per_document': spd, 'words_per_sentence': wps, 'labels': labels}


class HANDataset(Dataset):
    """
    A PyTorch Dataset class to be used in a PyTorch DataLoader to create batches.
    """
    def __init__(self, data_folder, split):
        """
        :param data_folder: folder where data files are stored
        :param split: split, one of 'TRAIN' or 'TEST'
        """
        split = split.upper()
        assert split in {'TRAIN', 'TEST'}
        self.split = split

        # Load data
        self.data = _synthetic_han_data(split)

    def __getitem__(self, i):
        return torch.LongTensor(self.data['docs'][i]), \
               torch.LongTensor([self.data['sentences_per_document'][i]]), \
               torch.LongTensor(self.data['words_per_sentence'][i]), \
               torch.LongTensor([self.data['labels'][i]])

    def __len__(self):
        return len(self.data['labels'])
