"""A stand-in for tiktoken (not installed here), used by llm.c's train_gpt2.py.

``get_encoding(name)`` returns a character-level encoding over ``string.printable`` (100
symbols, ids 0 to 99) in place of GPT-2's byte-pair encoding, with what the script reads:
``decode``, ``decode_bytes``, ``max_token_value`` and ``eot_token`` (the last symbol).
"""

import string

_CHARS = string.printable
_IDS = {c: i for i, c in enumerate(_CHARS)}


class _CharEncoding:
    n_vocab = len(_CHARS)
    max_token_value = len(_CHARS) - 1
    eot_token = len(_CHARS) - 1

    def encode(self, text, allowed_special=frozenset()):
        return [_IDS[c] for c in text]

    def decode(self, tokens):
        return "".join(_CHARS[t] if t < len(_CHARS) else "\ufffd" for t in tokens)

    def decode_bytes(self, tokens):
        return self.decode(tokens).encode("utf-8")


def get_encoding(name):
    return _CharEncoding()
