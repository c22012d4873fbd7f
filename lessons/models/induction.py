"""A two-layer, attention-only transformer that learns to copy: the induction-heads lesson.

Each training sequence is a random prefix of ``PREFIX`` tokens written twice. The first half cannot
be predicted; the second half can, by a two-step circuit: a head in layer 0 copies each token's
*previous* token into its position, and a head in layer 1 finds the earlier position whose previous
token is the current one (the token after the previous occurrence of itself) and copies it. That
second head is an induction head. The checks below measure both patterns in the recorded weights.
"""

import torch
from torch import nn

VOCABULARY, WIDTH, HEADS, LAYERS = 16, 32, 2, 2
#: The prefix's length varies from batch to batch, so that no fixed offset finds the earlier copy.
SHORTEST, LONGEST = 4, 10
LENGTH = 2 * LONGEST
LEARNING_RATE = 1e-3
LETTERS = "ABCDEFGHIJKLMNOP"

#: The attention figures show a prefix of eight tokens, then the same eight again: query ``i`` of the
#: second copy finds its induction target, the token after its earlier occurrence, at ``i - 7``.
EXAMPLE_PREFIX = 8


class Attention(nn.Module):
    """Causal multi-head self-attention: ``qkv`` makes the queries, keys and values of every head at
    once; ``out`` mixes the heads' outputs, side by side in its input, back into the residual stream."""

    def __init__(self):
        super().__init__()
        self.heads = HEADS
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.out = nn.Linear(WIDTH, WIDTH, bias=False)

    def forward(self, x):
        batch, length, _ = x.shape
        future = torch.ones(length, length, dtype=torch.bool).triu(1)
        q, k, v = (t.view(batch, length, HEADS, -1).transpose(1, 2) for t in self.qkv(x).chunk(3, dim=-1))
        scores = (q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5).masked_fill(future, float("-inf"))
        heads = torch.softmax(scores, dim=-1) @ v
        return self.out(heads.transpose(1, 2).reshape(batch, length, WIDTH))


class Block(nn.Module):
    """One layer: attention added to the residual stream (no MLP, no normalisation)."""

    def __init__(self):
        super().__init__()
        self.attn = Attention()

    def forward(self, x):
        return x + self.attn(x)


class AttentionOnly(nn.Module):
    """Token and position embeddings, ``LAYERS`` blocks of causal multi-head attention, and a linear
    read-out to the vocabulary. Each block's output is the residual stream after it."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCABULARY, WIDTH)
        self.position = nn.Embedding(LENGTH, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.unembed = nn.Linear(WIDTH, VOCABULARY)

    def forward(self, ids):
        x = self.embed(ids) + self.position(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.unembed(x)


def make_model(seed=0):
    torch.manual_seed(seed)
    return AttentionOnly()


def repeated_batch(generator, size=64):
    """``size`` sequences of ``LENGTH`` random tokens in which the first ``n`` tokens come again right
    after them (``n`` from ``SHORTEST`` to ``LONGEST``, per row), and the mask of the positions whose
    token a copy can predict: the second copy, after its first token."""
    tokens = torch.randint(VOCABULARY, (size, LENGTH), generator=generator)
    n = torch.randint(SHORTEST, LONGEST + 1, (size, 1), generator=generator)
    position = torch.arange(LENGTH)
    second = (position >= n) & (position < 2 * n)
    ids = tokens.gather(1, torch.where(second, position - n, position))
    return ids, second & (position > n)


def train(model, *, steps, seed, log):
    """Adam on a fresh batch each step; the loss is the cross-entropy where copying can help."""
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    for step in range(1, steps + 1):
        ids, predictable = repeated_batch(generator)
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits[predictable[:, 1:]], ids[:, 1:][predictable[:, 1:]])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        log.step(step, loss=loss.item())


def letters(ids):
    """The label of each token id: a letter (the vocabulary has no meaning, only identity)."""
    return [LETTERS[n] for n in ids]


def _mean_weight_on(weights, target):
    """The mean weight each map puts on ``target(query)``, over the queries that have one."""
    queries = [q for q in range(weights.shape[-1]) if target(q) is not None]
    return [float(sum(m[q, target(q)] for q in queries) / len(queries)) for m in weights]


def _previous_token(query):
    return query - 1 if query > 0 else None


def _induction_target(query):
    return query - EXAMPLE_PREFIX + 1 if query >= EXAMPLE_PREFIX else None


def _best_of_layer(weights, layer, target, threshold, description):
    """A check: the best head of ``layer`` (maps are layer by layer, ``HEADS`` each) puts more than
    ``threshold`` of its weight, on average over the queries, on ``target``."""
    scores = _mean_weight_on(weights, target)[layer * HEADS:(layer + 1) * HEADS]
    best = max(range(HEADS), key=lambda h: scores[h])
    per_head = ", ".join(f"head {layer}.{h}: {s:.2f}" for h, s in enumerate(scores))
    return {"passed": scores[best] > threshold, "value": scores[best], "tolerance": threshold,
            "description": f"{description} (head {layer}.{best}; {per_head})"}


def previous_token_head_in_layer_0(weights):
    """Some head of layer 0 puts more than 0.4 of each query's weight on the token just before it."""
    return _best_of_layer(weights, 0, _previous_token, 0.4,
                          "A head in layer 0 puts more than 0.4 of its weight on the previous token")


def induction_head_in_layer_1(weights):
    """Some head of layer 1 puts more than half of each second-copy query's weight on its induction
    target, the token after the earlier occurrence of the query's own token."""
    return _best_of_layer(weights, 1, _induction_target, 0.5,
                          "A head in layer 1 puts more than half its weight on the induction target")


def loss_starts_at_chance(curves):
    """At step 1 the loss is near ln 16 = 2.77, a uniform guess over the vocabulary."""
    first = curves["loss"][0][1]
    return {"passed": first > 2.5, "value": first, "tolerance": 2.5,
            "description": "The loss at step 1 is above 2.5 (chance is ln 16 = 2.77)"}


def loss_below_half_from_step_500(curves):
    """From step 500 on, every recorded loss is below 0.5: the model copies."""
    late = max(value for step, value in curves["loss"] if step >= 500)
    return {"passed": late < 0.5, "value": late, "tolerance": 0.5,
            "description": "The loss is below 0.5 at every recorded step from step 500 on"}


def query_h_reads_the_token_after_the_earlier_h(weights):
    """The prediction's answer: for the query ``H`` of the second copy (position 10), some head of
    layer 1 puts its largest weight on position 3, the ``A`` after the earlier ``H`` (position 2)."""
    query, target = EXAMPLE_PREFIX + 2, 3
    rows = weights[HEADS:2 * HEADS, query]
    best = max(range(HEADS), key=lambda h: float(rows[h, target]))
    return {"passed": int(rows[best].argmax()) == target, "value": float(rows[best, target]),
            "description": f"Head 1.{best}'s largest weight for the query H at position 10 is on position 3"}


def second_copy_is_top_1_only_after_layer_1(probabilities):
    """In the second copy (positions 8 to 14), the next token is the top-1 prediction after layer 1 at
    every position, with a probability above 0.9, and after layer 0 at none: the copy needs both layers."""
    second = [n for n, position in enumerate(probabilities.positions) if position >= EXAMPLE_PREFIX]
    top1, targets = probabilities.top1, probabilities.targets
    early = sum(int(top1[0, n]) == targets[n] for n in second)
    late = sum(int(top1[1, n]) == targets[n] for n in second)
    lowest = min(float(probabilities[1, n]) for n in second)
    return {"passed": early == 0 and late == len(second) and lowest > 0.9, "value": lowest, "tolerance": 0.9,
            "description": f"In the second copy the next token is top-1 after layer 1 at {late} of {len(second)} "
                           f"positions (lowest probability {lowest:.2f}) and after layer 0 at {early}"}
