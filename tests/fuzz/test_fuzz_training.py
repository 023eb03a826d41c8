"""Random small training steps against torch: the fixed-seed slice of tests/fuzz/training.

Each example draws a model (conv/BatchNorm/pool/residual, Linear+LayerNorm MLP, attention,
embedding), an optimizer (SGD with momentum/Nesterov/weight decay, Adam, AdamW, amsgrad)
and 1-3 steps; torch and lazytorch start from the same NumPy weights and see the same
batches, and every parameter and buffer must match after each fused step.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fuzz.training import TrainingCase, assert_training, training_cases

SLICE = settings(
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@settings(SLICE, max_examples=14)
@given(training_cases(dtype="float64"))
def test_random_float64_training_steps_match_torch(case):
    assert_training(case)


@settings(SLICE, max_examples=4)
@given(training_cases(dtype="float32"))
def test_random_float32_training_steps_match_torch(case):
    assert_training(case)


def test_conv_bn_relu_residual_sgd_momentum_step():
    """Issue 18: this model family diverged from torch after one fused SGD(momentum) step
    (the buffer reuse fixed in 2bcfe5f)."""
    arch = dict(
        channels=3,
        filters=4,
        kernel=3,
        stride=1,
        same=True,
        bias=False,
        bn=True,
        residual=True,
        pool="max",
        pool_stride=2,
        pooled=2,
        size=5,
        classes=3,
        batch=4,
    )
    kw = dict(lr=0.1, momentum=0.9, weight_decay=1e-2, nesterov=False)
    assert_training(TrainingCase("convnet", arch, "SGD", kw, steps=2))
