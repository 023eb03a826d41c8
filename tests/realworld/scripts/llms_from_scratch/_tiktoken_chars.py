"""A stand-in for tiktoken (not installed here), used by the LLMs-from-scratch scripts.

``get_encoding(name)`` returns a character-level encoding over ``string.printable`` (100
symbols, ids 0 to 99) in place of GPT-2's byte-pair encoding: the same ``encode`` /
``decode`` calls, a much smaller vocabulary (most scripts' ``vocab_size`` is set to 100; a
model left with GPT-2's 50,257 can emit ids above 99, which decode to U+FFFD).
"""

import string

_CHARS = string.printable
_IDS = {c: i for i, c in enumerate(_CHARS)}


class _CharEncoding:
    n_vocab = len(_CHARS)

    def encode(self, text, allowed_special=frozenset()):
        return [_IDS[c] for c in text]

    def decode(self, tokens):
        return "".join(_CHARS[t] if t < len(_CHARS) else "\ufffd" for t in tokens)


def get_encoding(name):
    return _CharEncoding()
