"""The claim under the hf-llama lesson's logit lens (kept apart from the model and the graph's
claims, whose files the other figures hash)."""

#: the tiny Llama's vocabulary: a uniform guess gives each token 1/64
VOCABULARY = 64


def no_layer_predicts_the_next_token(probabilities):
    """Random weights predict nothing: at every layer and position the next token's probability is
    within a factor of two of a uniform guess (1/64), from 1/128 to 1/32."""
    low, high = float(probabilities.min()), float(probabilities.max())
    uniform = 1 / VOCABULARY
    return {"passed": uniform / 2 < low and high < 2 * uniform, "value": high, "tolerance": 2 * uniform,
            "description": f"Every target probability is between {low:.3f} and {high:.3f}, within a factor of "
                           f"two of the uniform 1/64 = {uniform:.3f}"}
