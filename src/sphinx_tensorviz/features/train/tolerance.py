"""How close a re-trained run must come to the recorded one: the rule ``run.py`` and ``tensorviz
verify`` share.

A training run is where float32 differences grow: another CPU's vector width or another BLAS
changes the last bits of a sum, and each step feeds them back. So neither the weights nor every
point are compared. What is compared is the final recorded loss (the last point of the first
curve), within a relative tolerance that grows with the number of steps,
``1e-4 * (1 + steps / 100)`` (2.5e-4 at 150 steps, 1.6e-3 at 1,500), capped at 5 %, plus an
absolute ``1e-6``; the curves' metrics, their steps and the snapshot steps must match exactly, and
the claims must give the same verdicts. Measured with the CPU emulation of the course's tests
(``ATEN_CPU_CAPABILITY=default``): the 60-step regression of ``tests/roots/test-train`` ends
2.2e-5 (relative) away from the AVX2 run, inside its 1.6e-4. Standard library only: ``run.py``
copies this source.
"""

TRAIN_RTOL_PER_STEP = 1e-6
TRAIN_RTOL_BASE = 1e-4
TRAIN_RTOL_CAP = 0.05
TRAIN_ATOL = 1e-6


def final_loss_rtol(steps: int) -> float:
    """The relative tolerance on the final loss of a run of ``steps`` steps."""
    return min(TRAIN_RTOL_CAP, TRAIN_RTOL_BASE + TRAIN_RTOL_PER_STEP * steps)


def final_loss_tolerance(steps: int, recorded: float) -> float:
    """The largest difference allowed between a recorded final loss and a re-trained one."""
    return TRAIN_ATOL + final_loss_rtol(steps) * abs(recorded)
