"""A claim about a lens, kept outside the model's file (its file is hashed with the figure)."""


def last_row_sums_below_one(probabilities):
    """Each target probability of the last layer is a probability."""
    last = probabilities[-1]
    return bool(((last >= 0) & (last <= 1)).all())
