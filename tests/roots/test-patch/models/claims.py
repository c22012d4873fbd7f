"""Claims kept in a file of their own (``:checks: models/claims.py:function``), as a lesson keeps the
claims over a trained model beside the file the training hashes."""


def last_residual_restores_all(effects):
    """The residual stream after the last layer at the last position is all the last logits read."""
    return {"passed": abs(float(effects[-1, -1]) - 1) < 1e-4, "value": float(effects[-1, -1])}
