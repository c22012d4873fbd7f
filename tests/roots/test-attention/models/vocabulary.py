"""The small vocabulary of the hand-set model (no tokenizer: the lesson names its tokens)."""

WORDS = ["<pad>", "the", "cat", "sat", "on", "mat"]


def words(ids):
    return [WORDS[n] for n in ids]
