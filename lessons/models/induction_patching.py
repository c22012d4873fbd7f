"""Claims over the induction-heads lesson's patching figures, checked at every execution.

Kept beside ``induction.py`` rather than in it: the training's content hash is that file's text, so
a claim added there would train the model again and re-record every figure of the page.

The clean input is the page's prefix ``D O H A L F J M`` and its first three tokens again (``D O H``:
the copy says ``A`` next); the corrupted one has a ``B`` in place of the earlier ``A``, so the copy
says ``B``. The metric is the logit of ``A`` minus the logit of ``B`` at the last position.
"""

#: where the two inputs differ: the earlier ``A``, the token after the earlier ``H``
CHANGED = 3


def layer_1_heads_make_the_copy(effects):
    """Patching the two heads of layer 1 one at a time restores more than 80% of the logit difference
    between them; no head of layer 0 restores more than 10%."""
    pair = float(effects[1].sum())
    layer_0 = float(abs(effects[0]).max())
    return {"passed": pair > 0.8 and layer_0 < 0.1, "value": pair, "tolerance": 0.8,
            "description": f"Heads 1.0 and 1.1 together restore {pair:.0%} of the logit difference (more than 80%); "
                           f"no head of layer 0 more than 10% (largest {layer_0:.0%})"}


def neither_layer_1_head_alone(effects):
    """Each head of layer 1 restores more than 20% and less than 80%: the copy is shared, neither
    head makes it alone."""
    heads = [float(value) for value in effects[1]]
    return {"passed": all(0.2 < value < 0.8 for value in heads), "value": min(heads), "tolerance": 0.2,
            "description": "Each head of layer 1 restores between 20% and 80% "
                           f"({', '.join(f'head 1.{h}: {v:.0%}' for h, v in enumerate(heads))})"}


def the_answer_moves_to_the_last_position(effects):
    """In the residual stream, the answer sits at the changed position after layer 0 (patching it there
    restores more than 80%) and at the last position after layer 1 (all of it); no other place
    restores more than 10%."""
    after_0, after_1 = float(effects[0, CHANGED]), float(effects[1, -1])
    others = [abs(float(value)) for (layer, position), value in _cells(effects)
              if (layer, position) not in ((0, CHANGED), (1, effects.shape[1] - 1))]
    return {"passed": after_0 > 0.8 and after_1 > 0.99 and max(others) < 0.1, "value": after_0, "tolerance": 0.8,
            "description": f"After layer 0 the answer sits at position {CHANGED} ({after_0:.0%}), after layer 1 at the "
                           f"last position ({after_1:.0%}); no other place more than 10% (largest {max(others):.0%})"}


def _cells(effects):
    return [((layer, position), effects[layer, position])
            for layer in range(effects.shape[0]) for position in range(effects.shape[1])]
