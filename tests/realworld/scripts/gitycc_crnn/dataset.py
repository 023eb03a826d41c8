# Source: https://github.com/GitYCC/crnn-pytorch src/dataset.py (commit f145a61e20e57a36b8f2d642f93c9ba2890cd042)
# Licence: MIT. Copyright (c) 2017 Jieru Mei <meijieru@gmail.com> (the line of the repository's
#   LICENSE.md). The licence's full text is in LICENSE.md (this folder).
# Changes (data only): _load_from_raw_files returns _synthetic_raw_files (the original body kept as
#   _load_from_raw_files_as_written, not called); the unused cv2 import removed (not installed).
import os
import glob

import torch
from torch.utils.data import Dataset
from scipy import signal
from scipy.io import wavfile
from PIL import Image
import numpy as np


# synthetic stand-in for the Synth90k files _load_from_raw_files reads (annotation lists of
# image paths with lexicon words): 16 (train) or 8 (dev) random grey 60x20 images, PNG-encoded
# in memory (Image.open reads them as files), each with a random word of 2 to 6 characters
# from CHARS. Drawn with NumPy.
def _synthetic_raw_files(mode):
    import io
    n = 16 if mode == 'train' else 8
    paths, texts = [], []
    for _ in range(n):
        buf = io.BytesIO()
        Image.fromarray(np.random.randint(0, 256, (20, 60), dtype=np.uint8), mode='L').save(buf, format='PNG')
        buf.seek(0)
        paths.append(buf)
        texts.append(''.join(np.random.choice(list(Synth90kDataset.CHARS), np.random.randint(2, 7))))
    return paths, texts


class Synth90kDataset(Dataset):
    CHARS = '0123456789abcdefghijklmnopqrstuvwxyz'
    CHAR2LABEL = {char: i + 1 for i, char in enumerate(CHARS)}
    LABEL2CHAR = {label: char for char, label in CHAR2LABEL.items()}

    def __init__(self, root_dir=None, mode=None, paths=None, img_height=32, img_width=100):
        if root_dir and mode and not paths:
            paths, texts = self._load_from_raw_files(root_dir, mode)
        elif not root_dir and not mode and paths:
            texts = None

        self.paths = paths
        self.texts = texts
        self.img_height = img_height
        self.img_width = img_width

    def _load_from_raw_files(self, root_dir, mode):
        return _synthetic_raw_files(mode)

    def _load_from_raw_files_as_written(self, root_dir, mode):
        mapping = {}
        with open(os.path.join(root_dir, 'lexicon.txt'), 'r') as fr:
            for i, line in enumerate(fr.readlines()):
                mapping[i] = line.strip()

        paths_file = None
        if mode == 'train':
            paths_file = 'annotation_train.txt'
        elif mode == 'dev':
            paths_file = 'annotation_val.txt'
        elif mode == 'test':
            paths_file = 'annotation_test.txt'

        paths = []
        texts = []
        with open(os.path.join(root_dir, paths_file), 'r') as fr:
            for line in fr.readlines():
                path, index_str = line.strip().split(' ')
                path = os.path.join(root_dir, path)
                index = int(index_str)
                text = mapping[index]
                paths.append(path)
                texts.append(text)
        return paths, texts

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        path = self.paths[index]

        try:
            image = Image.open(path).convert('L')  # grey-scale
        except IOError:
            print('Corrupted image for %d' % index)
            return self[index + 1]

        image = image.resize((self.img_width, self.img_height), resample=Image.BILINEAR)
        image = np.array(image)
        image = image.reshape((1, self.img_height, self.img_width))
        image = (image / 127.5) - 1.0

        image = torch.FloatTensor(image)
        if self.texts:
            text = self.texts[index]
            target = [self.CHAR2LABEL[c] for c in text]
            target_length = [len(target)]

            target = torch.LongTensor(target)
            target_length = torch.LongTensor(target_length)
            return image, target, target_length
        else:
            return image


def synth90k_collate_fn(batch):
    images, targets, target_lengths = zip(*batch)
    images = torch.stack(images, 0)
    targets = torch.cat(targets, 0)
    target_lengths = torch.cat(target_lengths, 0)
    return images, targets, target_lengths
