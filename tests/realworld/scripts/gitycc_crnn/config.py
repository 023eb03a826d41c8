# Source: https://github.com/GitYCC/crnn-pytorch src/config.py (commit f145a61e20e57a36b8f2d642f93c9ba2890cd042)
# Licence: MIT. Copyright (c) 2017 Jieru Mei <meijieru@gmail.com> (the line of the repository's
#   LICENSE.md). The licence's full text is in LICENSE.md (this folder).
# Changes (sizes only): train_config's img_width 100 -> 32, map_to_seq_hidden 64 -> 16,
#   rnn_hidden 256 -> 32, epochs 10000 -> 2, batch sizes 32 / 512 -> 8 / 8, show_interval 10 -> 1,
#   valid_interval 500 -> 2, save_interval 2000 -> 1000 (after the last step: no checkpoint file),
#   cpu_workers 4 -> 0

common_config = {
    'data_dir': 'data/mnt/ramdisk/max/90kDICT32px/',
    'img_width': 32,
    'img_height': 32,
    'map_to_seq_hidden': 16,
    'rnn_hidden': 32,
    'leaky_relu': False,
}

train_config = {
    'epochs': 2,
    'train_batch_size': 8,
    'eval_batch_size': 8,
    'lr': 0.0005,
    'show_interval': 1,
    'valid_interval': 2,
    'save_interval': 1000,
    'cpu_workers': 0,
    'reload_checkpoint': None,
    'valid_max_iter': 100,
    'decode_method': 'greedy',
    'beam_size': 10,
    'checkpoints_dir': 'checkpoints/'
}
train_config.update(common_config)

evaluate_config = {
    'eval_batch_size': 512,
    'cpu_workers': 0,
    'reload_checkpoint': 'checkpoints/crnn_synth90k.pt',
    'decode_method': 'beam_search',
    'beam_size': 10,
}
evaluate_config.update(common_config)
