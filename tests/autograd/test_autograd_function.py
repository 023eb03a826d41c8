"""Custom autograd functions (``autograd.Function``) against torch: values and gradients,
lazy and sync, every backend, first and second order."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any

import pytest
import torch

import lazytorch as lt
from helpers import arr, check, check_raises, randn
from lazytorch.autograd.function import FunctionCtx, once_differentiable


@functools.cache
def fns(lib: Any) -> SimpleNamespace:
    """The same custom Functions written against torch or lazytorch."""
    Function = lib.autograd.Function

    class LegendrePolynomial3(Function):  # "Learning PyTorch with Examples"
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input**3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input**2 - 1)

    class MyReLU(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            g = g.clone()
            g[x < 0] = 0
            return g

    class MulAdd(Function):  # two inputs, two outputs, a non-tensor argument
        @staticmethod
        def forward(ctx, a, b, alpha):
            ctx.save_for_backward(a, b)
            ctx.alpha = alpha
            return a * b * alpha, a + b

        @staticmethod
        def backward(ctx, g_prod, g_sum):
            a, b = ctx.saved_tensors
            ga = gb = None
            if ctx.needs_input_grad[0]:
                ga = g_prod * b * ctx.alpha + g_sum
            if ctx.needs_input_grad[1]:
                gb = g_prod * a * ctx.alpha + g_sum
            return ga, gb, None

    class ScaleNewStyle(Function):  # forward without ctx, plus setup_context
        @staticmethod
        def forward(x, alpha):
            return x * alpha

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.alpha = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.alpha, None

    class SortWithIndex(Function):  # an integer output and a marked non-differentiable one
        @staticmethod
        def forward(ctx, x):
            values, idx = x.sort(dim=-1)
            mask = (values > 0).to(x.dtype)
            ctx.mark_non_differentiable(idx, mask)
            ctx.save_for_backward(idx)
            return values, idx, mask

        @staticmethod
        def backward(ctx, g, g_idx, g_mask):
            (idx,) = ctx.saved_tensors
            return lib.zeros_like(g).scatter(-1, idx, g)

    class Square(Function):  # backward of differentiable ops: second order works
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    class SumToBroadcast(Function):  # backward returns a gradient of the output's shape
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, g

    class NoMaterialize(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            out = lib.zeros_like(g1 if g1 is not None else g2)
            if g1 is not None:
                out = out + 2 * g1
            if g2 is not None:
                out = out + 3 * g2
            return out

    class AddOneInPlace(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    class Identity(Function):  # returns its input object unchanged
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return SimpleNamespace(**{k: v for k, v in locals().items() if isinstance(v, type)})


def _grads(lib: Any, outs: Any, xs: list[Any], **kw: Any) -> tuple[Any, ...]:
    outs = outs if isinstance(outs, tuple) else (outs,)
    loss = sum((o * (k + 1)).sum() for k, o in enumerate(outs))
    return lib.autograd.grad(loss, xs, **kw)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_legendre_polynomial3_values_and_grads(dtype: str) -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        y = fns(lib).LegendrePolynomial3.apply(x)
        return y, *_grads(lib, y, [x])

    check(fn, randn(3, 4, dtype=dtype))
    check(fn, randn(dtype=dtype))  # 0-d


def test_legendre_tutorial_training_steps() -> None:
    # The tutorial's loop: fit sin(x) with a + b * P3(c + d * x), plain SGD under no_grad.
    def fn(lib: Any, xs: Any) -> Any:
        x = xs
        y = lib.sin(x)
        params = [lib.full((), v, dtype=lib.float64, requires_grad=True) for v in (0, -1, 0, 0.3)]
        a, b, c, d = params
        for _ in range(3):
            y_pred = a + b * fns(lib).LegendrePolynomial3.apply(c + d * x)
            loss = (y_pred - y).pow(2).sum()
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= 5e-6 * p.grad
                    p.grad = None
        return tuple(params)

    check(fn, arr(200, dtype="float64", low=-3.14, high=3.14))


def test_custom_relu() -> None:
    def fn(lib: Any, x: Any, w: Any) -> Any:
        w.requires_grad_()
        y = fns(lib).MyReLU.apply(x @ w)
        return y, *_grads(lib, y, [w])

    check(fn, randn(4, 3), randn(3, 5))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_two_inputs_two_outputs_and_a_non_tensor_arg(dtype: str) -> None:
    def fn(lib: Any, a: Any, b: Any) -> Any:
        a.requires_grad_()
        b.requires_grad_()
        outs = fns(lib).MulAdd.apply(a, b, 2.5)
        return outs, *_grads(lib, outs, [a, b])

    check(fn, randn(2, 3, dtype=dtype), randn(2, 3, dtype=dtype))


def test_only_one_output_used_gets_zeros_for_the_other() -> None:
    def fn(lib: Any, a: Any, b: Any) -> Any:
        a.requires_grad_()
        b.requires_grad_()
        prod, _ = fns(lib).MulAdd.apply(a, b, -1.0)
        return lib.autograd.grad(prod.sum(), [a, b])

    check(fn, randn(3), randn(3))


def test_needs_input_grad() -> None:
    seen = {}

    def fn(lib: Any, a: Any, b: Any) -> Any:
        a.requires_grad_()

        class Spy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, k):
                seen[lib.__name__] = ctx.needs_input_grad
                return a * b

            @staticmethod
            def backward(ctx, g):
                assert ctx.needs_input_grad == (True, False, False)
                return g * 2, None, None

        y = Spy.apply(a, b, 3)
        return (y, *_grads(lib, y, [a]))

    check(fn, randn(3), randn(3))
    assert seen == {"torch": (True, False, False), "lazytorch": (True, False, False)}


def test_new_style_forward_with_setup_context() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        y = fns(lib).ScaleNewStyle.apply(x, -1.5)
        return y, *_grads(lib, y, [x])

    check(fn, randn(5))


def test_mark_non_differentiable_and_integer_outputs() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        values, idx, mask = fns(lib).SortWithIndex.apply(x)
        flags = (values.requires_grad, idx.requires_grad, mask.requires_grad)
        (g,) = lib.autograd.grad((values * values).sum() + mask.sum(), x)
        return values, idx, mask, g, flags

    check(fn, randn(3, 4))


def test_second_order_through_backward() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        y = fns(lib).Square.apply(x)
        (g,) = lib.autograd.grad((y * x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    check(fn, randn(4))


def test_backward_gradient_summed_to_a_broadcast_input() -> None:
    def fn(lib: Any, x: Any, y: Any) -> Any:
        x.requires_grad_()
        y.requires_grad_()
        out = fns(lib).SumToBroadcast.apply(x, y)
        return out, *_grads(lib, out, [x, y])

    check(fn, randn(2, 3), randn(1, 3))
    check(fn, randn(2, 3), randn(3))


def test_set_materialize_grads_false_passes_none() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        a, _ = fns(lib).NoMaterialize.apply(x)
        return lib.autograd.grad(a.sum(), x)

    check(fn, randn(3))


def test_mark_dirty_in_place_input() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        h = x * 2
        out = fns(lib).AddOneInPlace.apply(h)
        return out, out is h, *_grads(lib, out, [x])

    check(fn, randn(3))


def test_mark_dirty_on_a_leaf_raises() -> None:
    def fn(lib: Any, x: Any) -> Any:
        return fns(lib).AddOneInPlace.apply(x.requires_grad_())

    check_raises(fn, randn(3))


def test_input_returned_unchanged() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        y = fns(lib).Identity.apply(x)
        return y, y is x, y.is_leaf, *_grads(lib, y, [x])

    check(fn, randn(3))


def test_backward_accumulates_into_grad_and_second_backward_needs_retain_graph() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        y = fns(lib).LegendrePolynomial3.apply(x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad

    check(fn, randn(3))

    def twice(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        y = fns(lib).LegendrePolynomial3.apply(x).sum()
        y.backward()
        y.backward()

    check_raises(twice, randn(3))


def test_no_input_requires_grad_returns_plain_outputs() -> None:
    def fn(lib: Any, x: Any) -> Any:
        y = fns(lib).LegendrePolynomial3.apply(x)
        with lib.no_grad():
            z = fns(lib).LegendrePolynomial3.apply(x.clone().requires_grad_())
        return y, y.requires_grad, z.requires_grad, z.grad_fn is None

    check(fn, randn(3))


def test_wrong_number_of_gradients_raises() -> None:
    def fn(lib: Any, x: Any) -> Any:
        class TooMany(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g, g

        x.requires_grad_()
        return lib.autograd.grad(TooMany.apply(x).sum(), x)

    check_raises(fn, randn(3))


def test_gradient_for_a_non_tensor_input_raises() -> None:
    def fn(lib: Any, x: Any) -> Any:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g

        x.requires_grad_()
        return lib.autograd.grad(Bad.apply(x, 2.0).sum(), x)

    check_raises(fn, randn(3))


def test_gradient_of_a_wrong_shape_raises() -> None:
    def fn(lib: Any, x: Any) -> Any:
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g.sum(0)

        x.requires_grad_()
        return lib.autograd.grad(Bad.apply(x).sum(), x)

    check_raises(fn, randn(3, 2))


def test_once_differentiable_gradients_carry_no_history() -> None:
    class Double(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            assert not lt.is_grad_enabled()
            return g * 2

    x = lt.ones(2, requires_grad=True)
    (g,) = lt.autograd.grad(Double.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    assert g.tolist() == [2.0, 2.0]


def test_ctx_is_a_function_ctx_and_grad_fn_names_the_class() -> None:
    kinds = []

    class Probe(lt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            kinds.append(isinstance(ctx, FunctionCtx))
            return x + 1

        @staticmethod
        def backward(ctx, g):
            return g

    y = Probe.apply(lt.ones(2, requires_grad=True))
    assert kinds == [True]
    assert y.grad_fn is not None and not y.is_leaf
    assert y.grad_fn.name() == "ProbeBackward"  # torch's name for a Function's node
    with pytest.raises(RuntimeError, match="non-static forward"):
        Probe()(lt.ones(2))


def test_nn_module_parameter_through_a_custom_function_trains_like_torch() -> None:
    def fn(lib: Any, x: Any, target: Any) -> Any:
        lib.manual_seed(0)
        lin = lib.nn.Linear(4, 3).double()
        with lib.no_grad():
            lin.weight.copy_(lib.arange(12, dtype=lib.float64).reshape(3, 4) / 20 - 0.3)
            lin.bias.fill_(0.1)
        opt = lib.optim.SGD(lin.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            out = fns(lib).MyReLU.apply(lin(x))
            loss = ((out - target) ** 2).mean()
            loss.backward()
            opt.step()
        return lin.weight, lin.bias

    check(fn, randn(5, 4, dtype="float64"), randn(5, 3, dtype="float64"))


def test_torch_oracle_agrees_on_the_helper_classes() -> None:
    # the shared class factory builds real torch Functions (the oracle side is not a stub)
    assert issubclass(fns(torch).Square, torch.autograd.Function)
    assert issubclass(fns(lt).Square, lt.autograd.Function)


def test_outputs_computed_before_backward_still_backpropagate() -> None:
    def fn(lib: Any, x: Any) -> Any:
        x.requires_grad_()
        a, b = fns(lib).MulAdd.apply(x, x * 2, 0.5)
        loss = (a * b).sum()
        value = loss.item()  # a cut: the outputs become computed values, history kept
        loss.backward()
        return value, x.grad

    check(fn, randn(4, dtype="float64"))


def test_function_inside_a_function_backward() -> None:
    # a backward made of another custom Function: second order goes through both
    def fn(lib: Any, x: Any) -> Any:
        F = fns(lib)

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x**3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * F.Square.apply(x) * g

        x.requires_grad_()
        (g,) = lib.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return g, gg

    check(fn, randn(3, dtype="float64"))
