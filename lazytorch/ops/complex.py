"""Complex tensors as pairs of real ones: ``polar``, ``complex``, ``view_as_complex``.

lazytorch's IR, scheduler and backends know real dtypes only. A complex tensor is a
`ComplexTensor`: a real float tensor (its *pair*) whose last dimension, of size 2, holds
the real and the imaginary part side by side. That is exactly complex64's (complex128's)
memory layout, which is why `view_as_real` and `view_as_complex` cost nothing, and every
complex op is a few real ops on the pair: recorded, fused, compiled and differentiated like
any other. Rotary position embeddings (``torch.polar``, ``view_as_complex``, a product,
``view_as_real``), the pattern of Meta's llama code and its descendants, run this way.

Contract:

1. *Shape.* ``shape``, ``size()``, ``ndim`` and every dim argument are the complex ones:
   the pair dimension is hidden (``z.flatten(3)`` flattens complex dims 3..-1).
2. *Views.* ``view_as_real(z)`` is z's pair itself and ``view_as_complex(x)`` wraps x, so
   writes through either are seen by the other, as torch's views are. ``z.real`` and
   ``z.imag`` are views into the pair.
3. *Values.* A product, quotient, ``abs`` and ``exp`` follow c10::complex's formulas
   (Smith's division, ``hypot``), each part rounded as torch rounds it on the CPU where
   no fused multiply-add is involved; tests compare with torch within float32 rounding.
4. *Gradients.* A real result of real inputs through complex intermediates gets the
   gradients of the real function it is, which are torch's. The ``grad`` of a complex
   tensor that requires grad is ``dL/dre + i dL/dim``, torch's convention for a real loss.
5. *Scope.* What the class does not define raises NotImplementedError naming the op; no
   real op silently takes a complex tensor for its pair.

>>> import lazytorch as torch
>>> z = torch.polar(torch.tensor([2.0]), torch.tensor([0.0]))
>>> (z * torch.complex(torch.tensor([0.0]), torch.tensor([1.0]))).imag
tensor([2.])
"""

from __future__ import annotations

import itertools
import math
import numbers
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from lazytorch import _as_torch, _config
from lazytorch._errors import op_error
from lazytorch._public import public
from lazytorch.ir import dtypes as dt
from lazytorch.ops import creation as C
from lazytorch.ops import elementwise as E
from lazytorch.ops import linalg as L
from lazytorch.ops import shape as S
from lazytorch.ops._core import ComplexBase, tensor_arg
from lazytorch.ops.composite import copysign
from lazytorch.tensor import Size, Tensor, _check_numpy_grad

__all__ = [
    "ComplexDType",
    "ComplexTensor",
    "complex",
    "complex64",
    "complex128",
    "polar",
    "view_as_complex",
    "view_as_real",
]

_complex = complex  # the builtin (this module defines a function of that name)


class ComplexDType:
    """A complex element type, printed as ``lazytorch.complex64``; `real` is the dtype of
    each part. Not an IR dtype: no node holds it (module docstring).

    >>> import lazytorch
    >>> lazytorch.complex64.is_complex, lazytorch.complex64.itemsize
    (True, 8)
    """

    __slots__ = ("itemsize", "legacy_name", "name", "real")
    is_complex = True
    is_floating_point = False
    is_signed = True

    def __init__(self, name: str, legacy: str, real: dt.DType) -> None:
        self.name = name
        self.legacy_name = legacy
        self.real = real
        self.itemsize = 2 * real.itemsize

    @property
    def np(self) -> Any:
        import numpy  # (NumPy loads on first use, as for every dtype)

        return numpy.dtype(self.name)

    def to_real(self) -> dt.DType:
        return self.real

    def __repr__(self) -> str:
        return f"{_as_torch.NAME}.{self.name}"

    def __reduce__(self) -> str:
        return self.name  # the module-level singleton


complex64 = ComplexDType("complex64", "ComplexFloat", dt.float32)
complex128 = ComplexDType("complex128", "ComplexDouble", dt.float64)
_OF_REAL = {dt.float32: complex64, dt.float64: complex128}


def complex_dtype_of(real: dt.DType, op: str) -> ComplexDType:
    """The complex dtype whose parts are `real` (float32 or float64)."""
    c = _OF_REAL.get(real)
    if c is None:
        raise op_error(
            NotImplementedError,
            op,
            f"complex tensors of {real.name} parts are not supported by lazytorch "
            "(complex64 and complex128 are: float32 and float64 parts)",
        )
    return c


def _pair(re: Any, im: Any) -> ComplexTensor:
    """The complex tensor re + i*im (numbers or tensors, broadcast, promoted as torch)."""
    if not isinstance(re, Tensor):
        re = E.add(E.mul(im, 0), re) if isinstance(im, Tensor) else re
    if not isinstance(im, Tensor):
        im = E.add(E.mul(re, 0), im) if im else E.mul(re, 0)
    if re.dtype is not im.dtype:
        d = dt.promote_types(re.dtype, im.dtype)
        re, im = re.to(d), im.to(d)
    if not re.dtype.is_floating_point:
        re, im = re.float(), im.float()
    if re.shape != im.shape:
        re, im = S.broadcast_tensors(re, im)
    complex_dtype_of(re.dtype, "complex")
    return ComplexTensor(S.stack([re, im], -1))


def _parts(x: Any, op: str) -> tuple[Any, Any]:
    """(real part, imaginary part or None) of an operand of a complex op."""
    if type(x) is ComplexTensor:
        return x.real, x.imag
    if isinstance(x, Tensor):
        return x, None
    if isinstance(x, numbers.Complex) and not isinstance(x, numbers.Real):
        c = _complex(x)
        return c.real, c.imag
    if isinstance(x, numbers.Number):
        return x, None
    raise op_error(TypeError, op, f"unsupported operand type {type(x).__name__} for a complex op")


def _mul(a: Any, b: Any) -> ComplexTensor:
    ar, ai = _parts(a, "mul")
    br, bi = _parts(b, "mul")
    if ai is None:
        return _pair(E.mul(ar, br), E.mul(ar, bi))
    if bi is None:
        return _pair(E.mul(ar, br), E.mul(ai, br))
    return _pair(E.sub(E.mul(ar, br), E.mul(ai, bi)), E.add(E.mul(ar, bi), E.mul(ai, br)))


def _div(a: Any, b: Any) -> ComplexTensor:
    ar, ai = _parts(a, "div")
    br, bi = _parts(b, "div")
    if bi is None:
        return _pair(E.div(ar, br), 0.0 if ai is None else E.div(ai, br))
    if not isinstance(br, Tensor):  # a Python complex divisor: as a 0-d pair of the dividend's
        like = ar if isinstance(ar, Tensor) else ai
        br, bi = _t(br, like.new_zeros(())), _t(bi, like.new_zeros(()))
    if ai is None:
        ai = _t(0.0, ar) if isinstance(ar, Tensor) else 0.0
    # c10::complex's operator/ (Smith's algorithm, as numpy's): scale by the larger part.
    # The ratio divides by the selected part only: dividing both ways and selecting after
    # gives bi/br = inf where br is 0, and its gradient (0 * inf) is NaN through the where.
    big_re = E.ge(E.abs(br), E.abs(bi))
    rat = E.div(E.where(big_re, bi, br), E.where(big_re, br, bi))
    scl = E.div(1.0, E.where(big_re, E.add(br, E.mul(bi, rat)), E.add(bi, E.mul(br, rat))))
    re = E.where(big_re, E.add(ar, E.mul(ai, rat)), E.add(E.mul(ar, rat), ai))
    im = E.where(big_re, E.sub(ai, E.mul(ar, rat)), E.sub(E.mul(ai, rat), ar))
    return _pair(E.mul(re, scl), E.mul(im, scl))


def _t(x: Any, like: Any) -> Tensor:
    """`x` as a tensor (a number takes `like`'s dtype and device)."""
    if isinstance(x, Tensor):
        return x
    return E.add(E.mul(like, 0), x)


def _scaled(x: Any, alpha: Any) -> Any:
    """`x` times a number (`alpha` of torch's add and `value` of addcmul/addcdiv)."""
    return x if alpha == 1 else _mul(x, alpha)


def _add(a: Any, b: Any, sign: int) -> ComplexTensor:
    ar, ai = _parts(a, "add")
    br, bi = _parts(b, "add")
    op = E.add if sign > 0 else E.sub
    re = op(_t(ar, br) if not isinstance(ar, Tensor) else ar, br)
    if ai is None and bi is None:
        im = 0.0
    elif bi is None:
        im = ai
    elif ai is None:
        im = E.neg(bi) if sign < 0 else bi
    else:
        im = op(ai, bi)
    return _pair(re, im)


def _acc(total: Any, term: Tensor, plus: bool) -> Tensor:
    """total + term (or - term), total None meaning 0."""
    if total is None:
        return term if plus else E.neg(term)
    return E.add(total, term) if plus else E.sub(total, term)


def _mixed_matmul(a: Any, b: Any) -> Exception:
    """torch's error for a product of a complex and a real matrix (no promotion there)."""
    names: dict[Any, str] = {complex64: "c10::complex<float>", complex128: "c10::complex<double>"}
    names.update({dt.float32: "float", dt.float64: "double", dt.float16: "c10::Half"})
    return op_error(
        RuntimeError,
        "matmul",
        "expected m1 and m2 to have the same dtype, but got: "
        f"{names.get(a, a.name)} != {names.get(b, b.name)}",
    )


class ComplexTensor(ComplexBase):
    """A complex tensor: a real tensor of (real, imaginary) pairs in its last dimension.

    Made by `polar`, `complex`, `view_as_complex`, ``x.to(torch.complex64)`` or an
    operator with a Python complex number; the module docstring says what it supports.

    >>> import lazytorch as torch
    >>> z = torch.view_as_complex(torch.tensor([[1.0, 2.0], [3.0, -1.0]]))
    >>> z.shape, z.dtype
    (lazytorch.Size([2]), lazytorch.complex64)
    >>> z.abs()
    tensor([2.2361, 3.1623])
    """

    __slots__ = ("__weakref__", "_ri")
    __array_priority__ = 1000  # NumPy defers its operators to ours

    def __init__(self, pair: Tensor) -> None:
        self._ri = pair

    # -- what it is ---------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._ri.shape[:-1])

    def size(self, dim: int | None = None) -> Any:
        return self.shape if dim is None else self.shape[self._dim(dim)]

    @property
    def ndim(self) -> int:
        return self._ri.ndim - 1

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self._ri.numel() // 2

    nelement = numel

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return int(self._ri.shape[0])

    @property
    def dtype(self) -> ComplexDType:
        return complex_dtype_of(self._ri.dtype, "dtype")

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def device(self) -> Any:
        return self._ri.device

    @property
    def is_cuda(self) -> bool:
        return self._ri.is_cuda

    @property
    def is_meta(self) -> bool:
        return self._ri.is_meta

    def is_complex(self) -> bool:
        return True

    @property
    def is_sparse(self) -> bool:
        return False  # (an optimizer's step checks its gradient's layout)

    @property
    def layout(self) -> Any:
        return self._ri.layout

    def is_floating_point(self) -> bool:
        return False

    def is_conj(self) -> bool:
        return False

    def resolve_conj(self) -> ComplexTensor:
        return self

    resolve_neg = resolve_conj

    # -- autograd ------------------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._ri.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self._ri.requires_grad = value

    def requires_grad_(self, requires_grad: bool = True) -> ComplexTensor:
        self._ri.requires_grad_(requires_grad)
        return self

    @property
    def grad(self) -> ComplexTensor | None:
        g = self._ri.grad
        return None if g is None else ComplexTensor(g)

    @grad.setter
    def grad(self, value: ComplexTensor | None) -> None:
        # (``zero_grad`` sets None; a complex gradient is stored as its pair of parts)
        self._ri.grad = None if value is None else value._ri

    @property
    def is_leaf(self) -> bool:
        return self._ri.is_leaf

    @property
    def grad_fn(self) -> Any:
        return self._ri.grad_fn

    @property
    def data(self) -> ComplexTensor:
        """The values without autograd, sharing the memory: writes through it reach this
        tensor (``p.data.copy_(w)`` in an initializer), as torch's ``.data`` does."""
        return ComplexTensor(self._ri.data)

    @data.setter
    def data(self, value: Any) -> None:
        if type(value) is not ComplexTensor:
            raise op_error(
                TypeError,
                "data",
                f"a complex tensor's data must be a complex tensor, not {type(value).__name__}",
            )
        self._ri.data = value._ri

    def detach(self) -> ComplexTensor:
        return ComplexTensor(self._ri.detach())

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise op_error(
            RuntimeError, "backward", "grad can be implicitly created only for real scalar outputs"
        )

    # -- parts ---------------------------------------------------------------------------
    @property
    def real(self) -> Tensor:
        return S.select(self._ri, -1, 0)

    @property
    def imag(self) -> Tensor:
        return S.select(self._ri, -1, 1)

    def conj(self) -> ComplexTensor:
        return ComplexTensor(S.stack([self.real, E.neg(self.imag)], -1))

    conj_physical = conj

    def abs(self) -> Tensor:
        # std::abs of a c10::complex is a hypot. Its gradient at 0 is torch's sgn(0) = 0: a
        # hypot of (0, 0) would differentiate as 0/0, NaN, so zeros take (1, 0) in a branch
        # the where does not select.
        re, im = self.real, self.imag
        zero = E.logical_and(E.eq(re, 0), E.eq(im, 0))
        return E.where(zero, 0.0, E.hypot(E.where(zero, 1.0, re), im))

    __abs__ = absolute = abs

    def angle(self) -> Tensor:
        return self.imag.atan2(self.real)

    def exp(self) -> ComplexTensor:
        r, i = self.real, self.imag
        m = r.exp()
        return _pair(E.mul(m, i.cos()), E.mul(m, i.sin()))

    def reciprocal(self) -> ComplexTensor:
        return _div(1.0, self)

    # -- arithmetic ----------------------------------------------------------------------
    def __add__(self, other: Any) -> ComplexTensor:
        return _add(self, other, 1)

    def __radd__(self, other: Any) -> ComplexTensor:
        return _add(other, self, 1)

    def __sub__(self, other: Any) -> ComplexTensor:
        return _add(self, other, -1)

    def __rsub__(self, other: Any) -> ComplexTensor:
        return _add(other, self, -1)

    def __mul__(self, other: Any) -> ComplexTensor:
        return _mul(self, other)

    def __rmul__(self, other: Any) -> ComplexTensor:
        return _mul(other, self)

    def __truediv__(self, other: Any) -> ComplexTensor:
        return _div(self, other)

    def __rtruediv__(self, other: Any) -> ComplexTensor:
        return _div(other, self)

    def add(self, other: Any, *, alpha: Any = 1) -> ComplexTensor:
        """``self + alpha * other`` (torch's ``add``; `alpha` a real or complex number)."""
        return _add(self, _scaled(other, alpha), 1)

    def sub(self, other: Any, *, alpha: Any = 1) -> ComplexTensor:
        return _add(self, _scaled(other, alpha), -1)

    def addcmul(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> ComplexTensor:
        """``self + value * tensor1 * tensor2``."""
        return _add(self, _scaled(_mul(tensor1, tensor2), value), 1)

    def addcdiv(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> ComplexTensor:
        """``self + value * tensor1 / tensor2``."""
        return _add(self, _scaled(_div(tensor1, tensor2), value), 1)

    def sqrt(self) -> ComplexTensor:
        """The principal square root (a cut along the negative reals; ``sqrt(-4 - 0j)`` is
        ``-2j``), by Kahan's form: no cancellation for either sign of the real part.

        >>> import lazytorch
        >>> z = lazytorch.tensor([4 + 0j, -4 + 0j, 3 + 4j, -3 - 4j, 0j])
        >>> z.sqrt().tolist()
        [(2+0j), 2j, (2+1j), (1-2j), 0j]
        """
        x, y = self.real, self.imag
        t = E.sqrt(E.mul(E.add(E.abs(x), E.hypot(x, y)), 0.5))
        zero = E.eq(t, 0.0)
        safe = E.where(zero, 1.0, t)
        other = E.where(zero, 0.0, E.div(E.abs(y), E.mul(safe, 2.0)))
        pos = E.ge(x, 0.0)
        re = E.where(pos, t, other)
        # (for x >= 0 the imaginary part is y / 2t, which keeps y's sign, zero included)
        im = E.where(pos, E.where(zero, y, E.div(y, E.mul(safe, 2.0))), copysign(t, y))
        return _pair(re, im)

    mul, div = __mul__, __truediv__
    multiply, divide, subtract = mul, div, sub

    # In place: the result is written into the pair, so views of it (``view_as_real``, the
    # tensor viewed as complex) see it, as torch's. Without these, Python would rebind
    # ``z *= w`` to a new tensor and a view would silently keep the old values.
    def _assign(self, result: ComplexTensor, op: str) -> ComplexTensor:
        if result.shape != self.shape:
            raise op_error(
                RuntimeError,
                op,
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(result.shape)}",
            )
        self._ri.copy_(result._ri)
        return self

    def __iadd__(self, other: Any) -> ComplexTensor:
        return self._assign(_add(self, other, 1), "add_")

    def __isub__(self, other: Any) -> ComplexTensor:
        return self._assign(_add(self, other, -1), "sub_")

    def __imul__(self, other: Any) -> ComplexTensor:
        return self._assign(_mul(self, other), "mul_")

    def __itruediv__(self, other: Any) -> ComplexTensor:
        return self._assign(_div(self, other), "div_")

    mul_, div_ = __imul__, __itruediv__

    def add_(self, other: Any, *, alpha: Any = 1) -> ComplexTensor:
        return self._assign(self.add(other, alpha=alpha), "add_")

    def sub_(self, other: Any, *, alpha: Any = 1) -> ComplexTensor:
        return self._assign(self.sub(other, alpha=alpha), "sub_")

    def addcmul_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> ComplexTensor:
        return self._assign(self.addcmul(tensor1, tensor2, value=value), "addcmul_")

    def addcdiv_(self, tensor1: Any, tensor2: Any, *, value: Any = 1) -> ComplexTensor:
        return self._assign(self.addcdiv(tensor1, tensor2, value=value), "addcdiv_")

    def sqrt_(self) -> ComplexTensor:
        return self._assign(self.sqrt(), "sqrt_")

    def copy_(self, src: Any, non_blocking: bool = False) -> ComplexTensor:
        if type(src) is ComplexTensor:
            return self._assign(src.expand(self.shape), "copy_")
        re, im = _parts(src, "copy_")
        return self._assign(_pair(re, 0.0 if im is None else im).expand(self.shape), "copy_")

    def zero_(self) -> ComplexTensor:
        self._ri.zero_()
        return self

    # -- new tensors: this one's dtype and device unless given (torch's Tensor.new_*) -----
    def _new(self, factory: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        kwargs.pop("pin_memory", None)
        dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
        return factory(
            *args,
            dtype=self.dtype if dtype is None else dtype,
            device=self.device if device is None else device,
            **kwargs,
        )

    def new_zeros(self, *size: Any, **kwargs: Any) -> Any:
        """Zeros of `size` (varargs or a sequence), complex like self unless `dtype=`.

        >>> import lazytorch
        >>> lazytorch.zeros(2, dtype=lazytorch.complex64).new_zeros(1, 2).tolist()
        [[0j, 0j]]
        """
        return self._new(C.zeros, size, kwargs)

    def new_ones(self, *size: Any, **kwargs: Any) -> Any:
        return self._new(C.ones, size, kwargs)

    def new_empty(self, *size: Any, **kwargs: Any) -> Any:
        return self._new(C.empty, size, kwargs)

    def new_full(self, size: Any, fill_value: Any, **kwargs: Any) -> Any:
        """`size` filled with `fill_value` (a complex or a real number).

        >>> import lazytorch
        >>> lazytorch.zeros(1, dtype=lazytorch.complex64).new_full((2,), 1 - 2j).tolist()
        [(1-2j), (1-2j)]
        """
        return self._new(C.full, (size, fill_value), kwargs)

    def new_tensor(self, data: Any, **kwargs: Any) -> Any:
        """A copy of `data` as self's dtype (a real list becomes complex) unless `dtype=`."""
        return self._new(C.tensor, (data,), kwargs)

    def __neg__(self) -> ComplexTensor:
        return ComplexTensor(E.neg(self._ri))

    neg = negative = __neg__

    def __pos__(self) -> ComplexTensor:
        return self

    def __matmul__(self, other: Any) -> ComplexTensor:
        ar, ai = _parts(self, "matmul")
        br, bi = _parts(other, "matmul")
        if not isinstance(br, Tensor):
            raise op_error(TypeError, "matmul", "argument 'other' must be a tensor")
        if bi is None:
            raise _mixed_matmul(self.dtype, other.dtype)
        return _pair(
            E.sub(L.matmul(ar, br), L.matmul(ai, bi)), E.add(L.matmul(ar, bi), L.matmul(ai, br))
        )

    def __rmatmul__(self, other: Any) -> ComplexTensor:
        if not isinstance(other, Tensor):
            raise op_error(TypeError, "matmul", "argument 'input' must be a tensor")
        raise _mixed_matmul(other.dtype, self.dtype)

    matmul = __matmul__

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        ar, ai = _parts(self, "eq")
        br, bi = _parts(other, "eq")
        return E.logical_and(E.eq(ar, br), E.eq(ai, 0.0 if bi is None else bi))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return E.logical_not(self == other)

    __hash__ = object.__hash__

    def sum(self, dim: Any = None, keepdim: bool = False) -> ComplexTensor:
        if dim is None:
            return ComplexTensor(self._ri.flatten(0, -2).sum(0)) if self.ndim else self
        return ComplexTensor(self._ri.sum(self._dims(dim), keepdim=keepdim))

    def mean(self, dim: Any = None, keepdim: bool = False) -> ComplexTensor:
        if dim is None:
            return ComplexTensor(self._ri.flatten(0, -2).mean(0)) if self.ndim else self
        return ComplexTensor(self._ri.mean(self._dims(dim), keepdim=keepdim))

    # -- shape ---------------------------------------------------------------------------
    def _dim(self, d: int, extra: int = 0) -> int:
        """Complex dim `d` as a non-negative dim of the pair (`extra`: new dims allowed)."""
        n = self.ndim + extra
        if not -max(n, 1) <= d < max(n, 1):
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                f"{max(n, 1) - 1}], but got {d})"
            )
        return d + n if d < 0 else d

    def _dims(self, dims: Any) -> Any:
        if isinstance(dims, (tuple, list)):
            return tuple(self._dim(d) for d in dims)
        return self._dim(dims)

    def view(self, *shape: Any) -> ComplexTensor:
        if len(shape) == 1 and not isinstance(shape[0], int):
            if isinstance(shape[0], (ComplexDType, dt.DType)):
                raise op_error(NotImplementedError, "view", "a dtype view of a complex tensor")
            shape = tuple(shape[0])
        return ComplexTensor(self._ri.view(*shape, 2))

    def reshape(self, *shape: Any) -> ComplexTensor:
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return ComplexTensor(self._ri.reshape(*shape, 2))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> ComplexTensor:
        if not self.ndim:
            return ComplexTensor(self._ri.reshape(1, 2))
        return ComplexTensor(self._ri.flatten(self._dim(start_dim), self._dim(end_dim)))

    def unflatten(self, dim: int, sizes: Sequence[int]) -> ComplexTensor:
        return ComplexTensor(self._ri.unflatten(self._dim(dim), sizes))

    def unsqueeze(self, dim: int) -> ComplexTensor:
        return ComplexTensor(self._ri.unsqueeze(self._dim(dim, 1)))

    def squeeze(self, dim: Any = None) -> ComplexTensor:
        if dim is None:
            dims = tuple(i for i, s in enumerate(self.shape) if s == 1)
            return ComplexTensor(self._ri.squeeze(dims)) if dims else self
        return ComplexTensor(self._ri.squeeze(self._dims(dim)))

    def permute(self, *dims: Any) -> ComplexTensor:
        if len(dims) == 1 and not isinstance(dims[0], int):
            dims = tuple(dims[0])
        return ComplexTensor(self._ri.permute(*(self._dim(d) for d in dims), self.ndim))

    def transpose(self, dim0: int, dim1: int) -> ComplexTensor:
        return ComplexTensor(self._ri.transpose(self._dim(dim0), self._dim(dim1)))

    swapaxes = swapdims = transpose

    def t(self) -> ComplexTensor:
        if self.ndim > 2:
            raise op_error(
                RuntimeError,
                "t",
                f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D",
            )
        return self.transpose(0, 1) if self.ndim == 2 else self

    @property
    def T(self) -> ComplexTensor:
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> ComplexTensor:
        if self.ndim < 2:
            raise op_error(
                RuntimeError,
                "mT",
                "tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self.ndim}-D tensor.",
            )
        return self.transpose(-2, -1)

    def adjoint(self) -> ComplexTensor:
        """The conjugate transpose of the last two dims."""
        if self.ndim < 2:
            raise op_error(
                RuntimeError,
                "adjoint",
                "tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                f"{self.ndim}-D tensor.",
            )
        return self.conj().transpose(-2, -1)

    @property
    def mH(self) -> ComplexTensor:
        return self.adjoint()

    @property
    def H(self) -> ComplexTensor:
        if self.ndim != 2:
            raise op_error(
                RuntimeError,
                "H",
                f"tensor.H is only supported on matrices (2-D tensors). Got {self.ndim}-D tensor.",
            )
        return self.conj().t()

    def expand(self, *sizes: Any) -> ComplexTensor:
        if len(sizes) == 1 and not isinstance(sizes[0], int):
            sizes = tuple(sizes[0])
        return ComplexTensor(self._ri.expand(*sizes, 2))

    def expand_as(self, other: Any) -> ComplexTensor:
        return self.expand(other.shape)

    def repeat(self, *repeats: Any) -> ComplexTensor:
        if len(repeats) == 1 and not isinstance(repeats[0], int):
            repeats = tuple(repeats[0])
        return ComplexTensor(self._ri.repeat(*repeats, 1))  # the pair dim is not repeated

    def repeat_interleave(
        self, repeats: Any, dim: int | None = None, *, output_size: int | None = None
    ) -> ComplexTensor:
        z = self.flatten() if dim is None or not self.ndim else self  # torch's 0-d as 1-d
        d = 0 if dim is None else z._dim(dim)
        return ComplexTensor(z._ri.repeat_interleave(repeats, d, output_size=output_size))

    def narrow(self, dim: int, start: Any, length: Any) -> ComplexTensor:
        return ComplexTensor(self._ri.narrow(self._dim(dim), start, length))

    def select(self, dim: int, index: Any) -> ComplexTensor:
        return ComplexTensor(self._ri.select(self._dim(dim), index))

    def index_select(self, dim: int, index: Any) -> ComplexTensor:
        return ComplexTensor(self._ri.index_select(self._dim(dim), index))

    def split(self, split_size: Any, dim: int = 0) -> tuple[ComplexTensor, ...]:
        return tuple(ComplexTensor(p) for p in S.split(self._ri, split_size, self._dim(dim)))

    def chunk(self, chunks: int, dim: int = 0) -> tuple[ComplexTensor, ...]:
        return tuple(ComplexTensor(p) for p in S.chunk(self._ri, chunks, self._dim(dim)))

    def unbind(self, dim: int = 0) -> tuple[ComplexTensor, ...]:
        return tuple(ComplexTensor(p) for p in S.unbind(self._ri, self._dim(dim)))

    def contiguous(self, *args: Any, **kwargs: Any) -> ComplexTensor:
        return ComplexTensor(self._ri.contiguous())

    def clone(self, *args: Any, **kwargs: Any) -> ComplexTensor:
        return ComplexTensor(self._ri.clone())

    def __getitem__(self, index: Any) -> ComplexTensor:
        idx = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in idx):
            idx = (*idx, slice(None))  # the pair dim after the ellipsis's dims
        return ComplexTensor(self._ri[idx])

    def __setitem__(self, index: Any, value: Any) -> None:
        idx = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in idx):
            idx = (*idx, slice(None))
        re, im = _parts(value, "setitem")
        if type(value) is ComplexTensor:
            self._ri[idx] = value._ri
            return
        part = self._ri[idx]
        self._ri[idx] = S.stack(
            [_t(re, part.select(-1, 0)).expand_as(part.select(-1, 0)),
             _t(0.0 if im is None else im, part.select(-1, 1)).expand_as(part.select(-1, 1))],
            -1,
        )  # fmt: skip

    def __iter__(self) -> Any:
        for i in range(len(self)):
            yield self[i]

    # -- devices and dtypes ----------------------------------------------------------------
    def to(self, *args: Any, **kwargs: Any) -> Any:
        dtype = kwargs.pop("dtype", None)
        rest = []
        for a in args:
            if isinstance(a, (ComplexDType, dt.DType)):
                dtype = a
            elif isinstance(a, (Tensor, ComplexTensor)):
                dtype = a.dtype
                rest.append(a.device)
            else:
                rest.append(a)
        ri = self._ri.to(*rest, **kwargs) if rest or kwargs else self._ri
        if dtype is None:
            return ComplexTensor(ri)
        if isinstance(dtype, ComplexDType):
            return ComplexTensor(ri.to(dtype.real))
        warnings.warn(
            "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2
        )
        return S.select(ri, -1, 0).to(dtype)

    def cpu(self) -> ComplexTensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, **kwargs: Any) -> ComplexTensor:
        return self.to("cuda" if device is None else device)

    def type_as(self, other: Any) -> Any:
        return self.to(other.dtype)

    # -- values on the host ----------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> Any:
        import numpy  # (loaded by the pair's numpy() already)

        pair = numpy.ascontiguousarray(self._ri.numpy(force=force) if force else self._ri.numpy())
        return pair.view(self.dtype.np)[..., 0]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        _check_numpy_grad(self._ri)  # torch's __array__ is numpy(): it refuses requires-grad
        a = self.detach().numpy()
        return a if dtype is None else a.astype(dtype)

    def tolist(self) -> Any:
        return self.detach().numpy().tolist()

    def item(self) -> _complex:
        if self.numel() != 1:
            raise op_error(
                RuntimeError,
                "item",
                f"a Tensor with {self.numel()} elements cannot be converted to Scalar",
            )
        return _complex(self.detach().numpy().reshape(()))

    def __complex__(self) -> _complex:
        return self.item()

    def __bool__(self) -> bool:
        # (not __len__'s truth: a one-element tensor is true when its value is nonzero)
        if self.numel() != 1:
            raise op_error(
                RuntimeError,
                "bool",
                f"Boolean value of Tensor with {'no' if not self.numel() else 'more than one'} "
                "value is ambiguous",
            )
        return self.item() != 0

    def __repr__(self) -> str:
        import numpy

        a = self.detach().numpy()
        body = numpy.array2string(
            a,
            separator=", ",
            prefix="tensor(",
            formatter={"complex_kind": lambda v: f"{v.real:.4f}{v.imag:+.4f}j"},
        )
        extra = ""
        if self.device.type != "cpu":
            extra += f", device='{self.device}'"
        if a.dtype != numpy.complex64:
            extra += f", dtype={self.dtype!r}"
        if self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    # -- anything else -------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__") and hasattr(Tensor, name):
            raise NotImplementedError(
                f"{name}: lazytorch's complex tensors (pairs of real parts) do not support "
                f"{name} yet; view_as_real(z) gives the pair of real tensors to compute on"
            )
        raise AttributeError(f"'ComplexTensor' object has no attribute {name!r}")

    # -- joined ----------------------------------------------------------------------------
    @staticmethod
    def _cat(tensors: Sequence[Any], dim: int) -> ComplexTensor:
        cs = [t if type(t) is ComplexTensor else _pair(t, 0.0) for t in tensors]
        return ComplexTensor(S.cat([c._ri for c in cs], cs[0]._dim(dim)))

    @staticmethod
    def _stack(tensors: Sequence[Any], dim: int) -> ComplexTensor:
        cs = [t if type(t) is ComplexTensor else _pair(t, 0.0) for t in tensors]
        return ComplexTensor(S.stack([c._ri for c in cs], cs[0]._dim(dim, 1)))

    @staticmethod
    def _einsum(equation: str, operands: Sequence[Any]) -> ComplexTensor:
        """A complex einsum as real einsums of the parts: each choice of real or imaginary
        part per operand contributes i**(number of imaginary parts) times its einsum."""
        dtypes = [o.dtype for o in operands]
        for o in operands:
            if o.dtype is not dtypes[0]:
                raise op_error(
                    RuntimeError,
                    "einsum",
                    f"expected scalar type {dtypes[0].legacy_name} but found {o.dtype.legacy_name}",
                )
        parts = [(o.real, o.imag) for o in operands]
        re: Any = None
        im: Any = None
        for choice in itertools.product((0, 1), repeat=len(parts)):
            term = L.einsum(equation, *[p[c] for p, c in zip(parts, choice, strict=True)])
            k = sum(choice) % 4
            if k % 2 == 0:
                re = _acc(re, term, k == 0)
            else:
                im = _acc(im, term, k == 1)
        return _pair(re, im)


# -- functions ------------------------------------------------------------------------------------
def _float_parts(op: str, **parts: Any) -> list[Tensor]:
    """The two real tensors a complex tensor is made of: one float dtype, as torch asks."""
    ts = [tensor_arg(v, op, k) for k, v in parts.items()]
    a, b = ts
    if not a.dtype.is_floating_point or not b.dtype.is_floating_point:
        raise op_error(
            RuntimeError,
            op,
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{a.dtype.legacy_name} and {b.dtype.legacy_name}",
        )
    if a.dtype is not b.dtype:
        raise op_error(
            RuntimeError,
            op,
            f"Expected object of scalar type {a.dtype.legacy_name} but got scalar type "
            f"{b.dtype.legacy_name} for second argument",
        )
    complex_dtype_of(a.dtype, op)
    return ts


@public()
def polar(abs: Tensor, angle: Tensor, *, out: Any = None) -> ComplexTensor:
    """The complex tensor ``abs * (cos(angle) + i sin(angle))`` (float32 parts make
    complex64, float64 ones complex128).

    >>> import lazytorch as torch
    >>> torch.polar(torch.tensor([1.0]), torch.tensor([0.0])).real
    tensor([1.])
    """
    if out is not None:
        raise op_error(NotImplementedError, "polar", "out= is not supported for complex results")
    r, theta = _float_parts("polar", abs=abs, angle=angle)
    return _pair(E.mul(r, theta.cos()), E.mul(r, theta.sin()))


@public()
def complex(real: Tensor, imag: Tensor, *, out: Any = None) -> ComplexTensor:
    """The complex tensor ``real + i imag`` (broadcast; parts of one float dtype).

    >>> import lazytorch as torch
    >>> torch.complex(torch.tensor([1.0]), torch.tensor([2.0])).imag
    tensor([2.])
    """
    if out is not None:
        raise op_error(NotImplementedError, "complex", "out= is not supported for complex results")
    re, im = _float_parts("complex", real=real, imag=imag)
    return _pair(re, im)


@public()
def view_as_complex(input: Tensor) -> ComplexTensor:
    """`input`'s last dimension (of size 2) as the real and imaginary parts: a view.

    >>> import lazytorch as torch
    >>> torch.view_as_complex(torch.zeros(3, 2)).shape
    lazytorch.Size([3])
    """
    x = tensor_arg(input, "view_as_complex")
    if x.dtype not in _OF_REAL:
        raise op_error(
            RuntimeError,
            "view_as_complex",
            "view_as_complex is only supported for float and double tensors, but got a "
            f"tensor of scalar type: {x.dtype.legacy_name}",
        )
    if x.ndim == 0:
        raise op_error(
            RuntimeError, "view_as_complex", "Input tensor must have one or more dimensions"
        )
    if x.shape[-1] != 2:
        raise op_error(
            RuntimeError, "view_as_complex", "Tensor must have a last dimension of size 2"
        )
    return ComplexTensor(x)


@public()
def view_as_real(input: Any) -> Tensor:
    """A complex tensor's pairs: a real tensor with a last dimension of size 2 (a view).

    >>> import lazytorch as torch
    >>> torch.view_as_real(torch.view_as_complex(torch.ones(2, 2))).shape
    lazytorch.Size([2, 2])
    """
    if type(input) is not ComplexTensor:
        tensor_arg(input, "view_as_real")
        raise op_error(
            RuntimeError, "view_as_real", "view_as_real is only supported for complex tensors"
        )
    return input._ri


def to_complex(x: Tensor, dtype: ComplexDType) -> ComplexTensor:
    """A real tensor converted to a complex dtype (imaginary part 0): ``x.to(complex64)``."""
    re = x.to(dtype.real)
    # (+0.0 for every value, as torch's: re * 0 would give -0.0 for a negative re, NaN for NaN)
    return ComplexTensor(S.stack([re, C.zeros_like(re)], -1))


def from_operator(name: str, x: Tensor, other: Any) -> Any:
    """``x <op> other`` for a real tensor `x` and a Python complex `other` (``x * 1j``)."""
    z = to_complex(x, complex_dtype_of(x.dtype if x.dtype.is_floating_point else dt.float32, name))
    if name.startswith("__r"):
        reflected = {"__radd__": "__radd__", "__rsub__": "__rsub__", "__rmul__": "__rmul__"}
        if name in reflected:
            return getattr(z, name)(other)
        raise op_error(TypeError, name, "unsupported operand for a complex number")
    op = getattr(z, name, None)
    if op is None or name not in (
        "__add__",
        "__sub__",
        "__mul__",
        "__truediv__",
        "__eq__",
        "__ne__",
    ):
        raise op_error(TypeError, name.strip("_"), "unsupported operand for a complex number")
    return op(other)


# -- factories: `lazytorch.ops.creation` hands complex dtypes, values and data here -------------
_C_NAMES = {"complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def default_dtype(op: str) -> ComplexDType:
    """The complex dtype of the default float dtype's parts (torch's default complex
    dtype: complex64, or complex128 under ``set_default_dtype(float64)``)."""
    return complex_dtype_of(_config.get_default_dtype(), op)


def of_numpy(np_dtype: Any, op: str) -> ComplexDType:
    """The complex dtype of a NumPy complex dtype (complex64 or complex128)."""
    for c in (complex64, complex128):
        if np_dtype == c.np:
            return c
    raise op_error(
        TypeError,
        op,
        f"can't convert NumPy array of dtype {np_dtype}; the complex dtypes supported are "
        "complex64 and complex128",
    )


def promote_types(a: Any, b: Any) -> Any:
    """torch.promote_types over real and complex dtypes: a complex result's parts are the
    promotion of the complex parts with any float operand (complex64 with float64 is
    complex128); integers and bools do not widen them."""
    if not (a.is_complex or b.is_complex):
        return dt.promote_types(a, b)
    parts = [d.real if d.is_complex else d for d in (a, b) if d.is_complex or d.is_floating_point]
    real = parts[0] if len(parts) == 1 else dt.promote_types(*parts)
    return complex_dtype_of(real, "promote_types")


def c_name(dtype: ComplexDType) -> str:
    """The dtype as torch's messages name it (``c10::complex<float>``)."""
    return _C_NAMES[dtype.name]


def checked_part(value: float, dtype: ComplexDType, op: str) -> float:
    """One part of a fill value, with torch's overflow check of a complex64 fill."""
    if math.isfinite(value) and dtype is complex64 and abs(value) > 3.4028234663852886e38:
        raise op_error(
            RuntimeError,
            op,
            f"value cannot be converted to type {_C_NAMES[dtype.name]} without overflow",
        )
    return value


def fill(
    shape: tuple[Any, ...],
    value: Any,
    dtype: ComplexDType,
    device: Any,
    op: str,
    *,
    literal: bool = False,
) -> ComplexTensor:
    """A complex tensor of `shape` filled with the number `value` (``zeros``, ``full`` ...).

    `literal`: the value is a constant of the program (zeros, ones), not a program input.
    """
    C.check_python_int(value)
    c = _complex(value)
    re, im = checked_part(c.real, dtype, op), checked_part(c.imag, dtype, op)
    C.check_new_tensor((*shape, 2), dtype.real, op)
    if literal and re in (0, 1) and im == 0:  # constants: the scheduler folds them
        ones = C.ones if re == 1 else C.zeros
        parts = [ones(shape, dtype=dtype.real, device=device)]
        parts.append(C.zeros(shape, dtype=dtype.real, device=device))
    else:
        parts = [C.full(shape, v, dtype=dtype.real, device=device) for v in (re, im)]
    return ComplexTensor(S.stack(parts, -1))


def with_zero_imag(real: Tensor) -> ComplexTensor:
    """The complex tensor ``real + 0i`` (``eye`` of a complex dtype)."""
    return ComplexTensor(S.stack([real, C.zeros_like(real)], -1))


def from_array(arr: Any, dtype: Any, device: Any) -> Any:
    """A tensor of (complex or real) NumPy data `arr` as `dtype`, as ``tensor()`` makes it:
    each part converted as NumPy converts (a double to a float), the imaginary part dropped
    for a real dtype, as torch drops it."""
    import numpy as np

    if not dtype.is_complex:
        return C.tensor(np.asarray(arr).real, dtype=dtype, device=device)
    with np.errstate(over="ignore"):  # too large for complex64 is inf, as in torch
        z = np.asarray(arr).astype(dtype.np)
    pair = np.stack([z.real, z.imag], -1)
    return ComplexTensor(C.tensor(pair, dtype=dtype.real, device=device))


def from_numpy(arr: Any) -> ComplexTensor:
    """``from_numpy`` of a complex array: the pair shares the array's memory (the array
    viewed as its real parts) when it can, as torch's tensor does."""
    dtype = of_numpy(arr.dtype, "from_numpy")
    if arr.flags.c_contiguous:
        return ComplexTensor(C.from_numpy(arr.view(dtype.real.np).reshape(*arr.shape, 2)))
    return from_array(arr, dtype, None)


def copy_of(data: Any, dtype: Any, device: Any) -> Any:
    """``tensor(t)`` of a tensor with a complex side: a detached copy, `dtype` if given."""
    if type(data) is not ComplexTensor:  # a real tensor as a complex dtype
        return to_complex(C.tensor(data, dtype=dtype.real, device=device), dtype)
    if dtype is not None and not dtype.is_complex:
        warnings.warn(
            "Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3
        )
        return C.tensor(data.real, dtype=dtype, device=device)
    real = None if dtype is None else dtype.real
    return ComplexTensor(C.tensor(data._ri, dtype=real, device=device))


C._complex = sys.modules[__name__]
