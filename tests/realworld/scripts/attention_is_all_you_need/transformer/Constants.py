# Source: https://github.com/jadore801120/attention-is-all-you-need-pytorch transformer/Constants.py (commit 132907dd272e2cc92e3c10e6c4e783a87ff8893d)
# Licence: MIT. Copyright (c) 2017 Victor Huang (the LICENSE file's line).
#   The licence's full text is in tests/realworld/README.md (Licences).
# Changes: none.
PAD_WORD = '<blank>'
UNK_WORD = '<unk>'
BOS_WORD = '<s>'
EOS_WORD = '</s>'
