"""lazytorch: a PyTorch-looking library in which every op records a lazy IR node.

Write ``import lazytorch as torch`` and ordinary scripts run: ops build a graph with
symbolic-capable shapes, and values are computed at materialization points — an explicit
``lazytorch.materialize(...)``, or reading a value (``.item()``, ``print``, ``.numpy()``).
``sync_mode()`` runs every op immediately for eager-style debugging; ``strict_mode()``
turns implicit materializations into errors; ``lazytorch.metrics`` counts what happened.

>>> import lazytorch as torch
>>> x = torch.arange(6.0).reshape(2, 3)
>>> y = (x * 2 + 1).sum(dim=1)       # recorded, nothing computed yet
>>> y                                # printing materializes
tensor([ 9., 27.])

This module is a deliberate facade: a curated ``__all__``, and heavy submodules (``nn``,
``linalg``, ``debug``) loaded on first use, so ``import lazytorch`` stays well under 0.1 s
(NumPy and sympy are imported only when first needed).
"""

from __future__ import annotations

import builtins as _builtins
import importlib
import time as _time
from types import ModuleType as _ModuleType
from typing import Any

_t0 = _time.perf_counter()

from lazytorch import _as_torch, _devices, cpu, cuda, metrics
from lazytorch._as_torch import attribute_error as _attribute_error
from lazytorch._config import (
    are_deterministic_algorithms_enabled,
    backend,
    default_dtype,
    deterministic_algorithms,
    get_backend,
    get_default_device,
    get_default_dtype,
    get_float32_matmul_precision,
    get_max_pending_nodes,
    is_deterministic_algorithms_warn_only_enabled,
    is_sync_mode,
    is_warn_always_enabled,
    set_backend,
    set_default_device,
    set_default_dtype,
    set_float32_matmul_precision,
    set_flush_denormal,
    set_max_pending_nodes,
    set_strict_mode,
    set_sync_mode,
    set_warn_always,
    strict_mode,
    sync_mode,
    use_deterministic_algorithms,
)
from lazytorch._devices import _register_device_module, get_device_module
from lazytorch._errors import ImplicitMaterializationError
from lazytorch._public import REGISTRY as _REGISTRY
from lazytorch._version import __version__
from lazytorch.autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from lazytorch.ir import dtypes as _dt
from lazytorch.ir.device import Device as device
from lazytorch.ir.dtypes import DType as dtype
from lazytorch.ir.dtypes import promote_types
from lazytorch.ir.symbolic import (
    SymBool,
    SymFloat,
    SymInt,
    sym_float,
    sym_int,
    sym_ite,
    sym_max,
    sym_min,
    sym_not,
    sym_sum,
)
from lazytorch.ops import activation as _activation
from lazytorch.ops import autocast as _autocast
from lazytorch.ops import methods as _methods  # importing lazytorch.ops binds the methods
from lazytorch.ops._core import ComplexBase as _ComplexBase
from lazytorch.ops._core import result_type as _result_type
from lazytorch.runtime import materialize
from lazytorch.tensor import Size, Tensor

# -- dtypes (torch's names, including the short aliases) ------------------------------------------
bool = _dt.bool_
uint8 = _dt.uint8
int8 = _dt.int8
int16 = _dt.int16
int32 = _dt.int32
int64 = _dt.int64
float16 = _dt.float16
float32 = _dt.float32
float64 = _dt.float64
bfloat16 = _dt.bfloat16  # named, not yet usable: making a tensor of it raises
half, float, double = float16, float32, float64
# complex tensors are pairs of real ones (lazytorch.ops.complex); these are not IR dtypes
from lazytorch.ops.complex import complex64, complex128

cfloat, cdouble = complex64, complex128
short, int, long = int16, int32, int64

_DTYPE_NAMES = [
    "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "bfloat16",
    "half", "float", "double", "short", "int", "long",
]  # fmt: skip

newaxis = None  # torch.newaxis, as NumPy's: indexing with it adds a dim

# torch's numeric constants (``float`` here is the dtype: the builtin is _builtins.float)
inf = _builtins.float("inf")
nan = _builtins.float("nan")
pi = 3.141592653589793
e = 2.718281828459045


def is_tensor(obj: Any) -> _builtins.bool:
    """Whether `obj` is a lazytorch tensor, complex ones included (as ``torch.is_tensor``).

    >>> import lazytorch
    >>> lazytorch.is_tensor(lazytorch.ones(2)), lazytorch.is_tensor([1.0])
    (True, False)
    >>> lazytorch.is_tensor(lazytorch.ones(2, dtype=lazytorch.complex64))
    True
    """
    # (a complex tensor is a pair of real ones here, not a Tensor subclass: see ops/complex)
    return isinstance(obj, (Tensor, _ComplexBase))


def typename(obj: Any) -> str:
    """torch.typename: ``torch.FloatTensor`` for a tensor (``lazytorch.`` unless installed as
    torch), else the qualified name of its type (of a class: its own)."""
    if isinstance(obj, Tensor):
        return f"{_as_torch.NAME}.{obj.dtype.legacy_name}Tensor"
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if qualname is None:
        module = type(obj).__module__
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def is_floating_point(input: Tensor) -> _builtins.bool:
    return input.dtype.is_floating_point


def numel(input: Tensor) -> Any:
    return input.numel()


def result_type(tensor1: Any, tensor2: Any) -> dtype:
    """The dtype torch's promotion gives an operation on the two operands."""
    return _result_type(tensor1, tensor2)


def can_cast(from_: dtype, to: dtype) -> _builtins.bool:
    return _methods._can_cast(from_, to)


def softmax(input: Tensor, dim: Any, dtype: Any = None) -> Tensor:
    return _activation.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: Any, dtype: Any = None) -> Tensor:
    return _activation.log_softmax(input, dim, dtype=dtype)


_autocast.install("torch", globals())  # softmax, log_softmax: the registry's are wrapped already


# -- lazily loaded submodules ------------------------------------------------------------------------
_LAZY_SUBMODULES = (
    "nn",
    "linalg",
    "debug",
    "ir",
    "runtime",
    "autograd",
    "ops",
    "optim",
    "distributions",
    "func",
    "utils",
    "amp",
    "backends",
    "accelerator",
    "serialization",
    "jit",
    "onnx",
    "hub",
    "sparse",
    "testing",
    "random",
    "special",
    "fft",
    "profiler",
    "version",
    "distributed",
    "multiprocessing",
    "compiler",
    "xpu",
)
# Functions whose module is loaded on first use: name -> submodule defining it.
_LAZY_FUNCTIONS = {
    "set_default_tensor_type": "_legacy_types",
    "save": "serialization",
    "load": "serialization",
    "set_printoptions": "_format",
    "set_num_threads": "_threads",
    "get_num_threads": "_threads",
    "set_num_interop_threads": "_threads",
    "get_num_interop_threads": "_threads",
    "finfo": "_dtype_info",
    "iinfo": "_dtype_info",
    "memory_format": "_dtype_info",
    "layout": "_dtype_info",
    "strided": "_dtype_info",
    "sparse_coo": "_dtype_info",
    "sparse_csr": "_dtype_info",
    "sparse_csc": "_dtype_info",
    "sparse_bsr": "_dtype_info",
    "sparse_bsc": "_dtype_info",
    "jagged": "_dtype_info",
    "contiguous_format": "_dtype_info",
    "preserve_format": "_dtype_info",
    "channels_last": "_dtype_info",
    "channels_last_3d": "_dtype_info",
    # lazytorch.compile (shadows the builtin inside this module only; it uses _builtins).
    "compile": "_compile",
    "CompileMode": "_compile",
    "mark_dynamic": "_shapes",
    "mark_static": "_shapes",
    "autocast": "amp",
    "GradScaler": "amp",
    "is_anomaly_enabled": "autograd.checks",
    "is_anomaly_check_nan_enabled": "autograd.checks",
    "set_anomaly_enabled": "autograd.checks",
    "is_autocast_enabled": "amp.autocast_mode",
    "set_autocast_enabled": "amp.autocast_mode",
    "get_autocast_dtype": "amp.autocast_mode",
    "set_autocast_dtype": "amp.autocast_mode",
    "get_autocast_gpu_dtype": "amp.autocast_mode",
    "set_autocast_gpu_dtype": "amp.autocast_mode",
    "get_autocast_cpu_dtype": "amp.autocast_mode",
    "set_autocast_cpu_dtype": "amp.autocast_mode",
    "is_autocast_cpu_enabled": "amp.autocast_mode",
    "set_autocast_cpu_enabled": "amp.autocast_mode",
    "is_autocast_cache_enabled": "amp.autocast_mode",
    "set_autocast_cache_enabled": "amp.autocast_mode",
    "clear_autocast_cache": "amp.autocast_mode",
    "autocast_increment_nesting": "amp.autocast_mode",
    "autocast_decrement_nesting": "amp.autocast_mode",
    "install_as_torch": "_as_torch",
    "uninstall_as_torch": "_as_torch",
    "vmap": "func",
}


# torch.* names of functions that live in nn.functional (torch.conv2d is F.conv2d).
_FROM_FUNCTIONAL = (
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "pixel_shuffle",
    "pixel_unshuffle",
)


# torch.* forms of functional ops with torch's own torch.* signatures (torch.dropout(input, p,
# train), torch.layer_norm(..., cudnn_enable), int reductions): lazytorch.nn._torch_functions.
_TORCH_FORMS = (
    "adaptive_avg_pool1d",
    "adaptive_max_pool1d",
    "alpha_dropout",
    "alpha_dropout_",
    "avg_pool1d",
    "batch_norm",
    "bilinear",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "constant_pad_nd",
    "cosine_embedding_loss",
    "ctc_loss",
    "dropout",
    "dropout_",
    "embedding",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "group_norm",
    "gru_cell",
    "hardshrink",
    "hinge_embedding_loss",
    "instance_norm",
    "kl_div",
    "layer_norm",
    "lstm_cell",
    "margin_ranking_loss",
    "max_pool1d",
    "max_pool1d_with_indices",
    "max_pool2d",
    "max_pool3d",
    "pdist",
    "poisson_nll_loss",
    "prelu",
    "rms_norm",
    "rnn_relu_cell",
    "rnn_tanh_cell",
    "rrelu",
    "rrelu_",
    "selu",
    "selu_",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
)


# -- functions: the torch.* names the op modules declare with @public (lazytorch._public) -------
_FUNCTIONS = _REGISTRY.functions()
# A declared name must not shadow (or be shadowed by) a name this module defines or loads
# lazily; a submodule's attribute gives way (lazytorch.tensor is the function, as in torch).
_clash = sorted(
    {n for n in _FUNCTIONS.keys() & globals().keys() if not isinstance(globals()[n], _ModuleType)}
    | (_FUNCTIONS.keys() & {*_LAZY_SUBMODULES, *_LAZY_FUNCTIONS, *_FROM_FUNCTIONAL, *_TORCH_FORMS})
)
if _clash:
    raise ImportError(f"lazytorch: {_clash} are declared with @public and defined in the facade")
globals().update(_FUNCTIONS)


def __getattr__(name: str) -> Any:
    if name in _FROM_FUNCTIONAL:
        fn = getattr(importlib.import_module("lazytorch.nn.functional"), name)
        globals()[name] = fn
        return fn
    if name in _TORCH_FORMS:
        fn = getattr(importlib.import_module("lazytorch.nn._torch_functions"), name)
        globals()[name] = fn
        return fn
    if name.endswith("Tensor") and name != "Tensor":
        from lazytorch._legacy_types import LEGACY_TYPES  # lazy: import time (on first use)

        if name in LEGACY_TYPES:
            globals()[name] = LEGACY_TYPES[name]
            return LEGACY_TYPES[name]
    if name in _LAZY_SUBMODULES:
        mod = importlib.import_module(f"lazytorch.{name}")
        globals()[name] = mod
        return mod
    if name in _LAZY_FUNCTIONS:
        fn = getattr(importlib.import_module(f"lazytorch.{_LAZY_FUNCTIONS[name]}"), name)
        globals()[name] = fn
        return fn
    if name.startswith("__"):  # protocol probes (__wrapped__, __path__...): plain and cheap
        raise AttributeError(f"module 'lazytorch' has no attribute {name!r}")
    raise _attribute_error(importlib.import_module(__name__), name)


def __dir__() -> list[str]:
    return sorted(
        set(globals())
        | set(_LAZY_SUBMODULES)
        | set(_LAZY_FUNCTIONS)
        | set(_FROM_FUNCTIONAL)
        | set(_TORCH_FORMS)
    )


__all__ = [
    "ImplicitMaterializationError",
    "Size",
    "SymBool",
    "SymFloat",
    "SymInt",
    "Tensor",
    "are_deterministic_algorithms_enabled",
    "backend",
    "deterministic_algorithms",
    "get_backend",
    "get_float32_matmul_precision",
    "is_deterministic_algorithms_warn_only_enabled",
    "set_backend",
    "set_float32_matmul_precision",
    "set_flush_denormal",
    "set_warn_always",
    "is_warn_always_enabled",
    "use_deterministic_algorithms",
    "__version__",
    "can_cast",
    "cpu",
    "cuda",
    "get_device_module",
    "default_dtype",
    "device",
    "dtype",
    "enable_grad",
    "get_default_device",
    "get_default_dtype",
    "get_max_pending_nodes",
    "inference_mode",
    "install_as_torch",
    "uninstall_as_torch",
    "autocast",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "get_autocast_gpu_dtype",
    "set_autocast_gpu_dtype",
    "get_autocast_cpu_dtype",
    "set_autocast_cpu_dtype",
    "is_autocast_cpu_enabled",
    "set_autocast_cpu_enabled",
    "is_autocast_cache_enabled",
    "set_autocast_cache_enabled",
    "clear_autocast_cache",
    "autocast_increment_nesting",
    "autocast_decrement_nesting",
    "is_floating_point",
    "is_grad_enabled",
    "is_inference_mode_enabled",
    "is_sync_mode",
    "is_tensor",
    "typename",
    "log_softmax",
    "materialize",
    "metrics",
    "no_grad",
    "numel",
    "promote_types",
    "result_type",
    "save",
    "load",
    "compile",
    "vmap",
    "CompileMode",
    "mark_dynamic",
    "mark_static",
    "set_default_device",
    "set_default_dtype",
    "set_grad_enabled",
    "set_max_pending_nodes",
    "set_num_interop_threads",
    "set_num_threads",
    "get_num_interop_threads",
    "get_num_threads",
    "set_printoptions",
    "set_strict_mode",
    "set_sync_mode",
    "softmax",
    "strict_mode",
    "sym_float",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sum",
    "sync_mode",
    *_DTYPE_NAMES,
    *sorted(_FUNCTIONS),
    *_LAZY_SUBMODULES,
    *_FROM_FUNCTIONAL,
    *_TORCH_FORMS,
]


def _publish_device_module(device_type: str, module: Any) -> None:
    """A registered device module becomes ``lazytorch.<device_type>`` (`lazytorch._devices`
    calls this hook); RuntimeError if that would shadow another attribute."""
    existing = globals().get(device_type)
    if existing is not None and existing is not module:
        raise RuntimeError(
            f"cannot register a device module named '{device_type}': it would shadow "
            f"lazytorch.{device_type}"
        )
    globals()[device_type] = module


_devices.publish = _publish_device_module
# The built-in devices register exactly as out-of-tree backends do (lazytorch._devices).
_register_device_module("cpu", cpu)
_register_device_module("cuda", cuda)

del _clash
# How long `import lazytorch` took (benchmarks/import_time.py reports it).
import_seconds = metrics.import_seconds = _time.perf_counter() - _t0
