"""`Module`: torch's base class for layers and models, with torch's semantics.

Attribute assignment registers state: a `Parameter` goes to ``_parameters``, a Module to
``_modules``, a Tensor assigned to a registered buffer name to ``_buffers``. Everything
else (iteration, ``state_dict``, ``load_state_dict``, ``train``/``eval``, ``to``, hooks,
``repr``) is built on those three ordered dicts, exactly as torch builds it, so keys, order
and printed form match torch's.

Values stay lazy: ``state_dict()`` holds detached aliases of the (possibly pending)
parameters, and ``load_state_dict`` copies into the existing Parameter objects in place,
so an optimizer holding them keeps working.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from lazytorch import _as_torch
from lazytorch.autograd.engine import RemovableHandle as _Handle
from lazytorch.autograd.engine import zeroed_sparse_rows
from lazytorch.autograd.grad_mode import no_grad
from lazytorch.ir import dtypes as dt
from lazytorch.ir.device import Device
from lazytorch.nn.modules import _backward_hooks as _bw
from lazytorch.nn.modules import state_dict as _sd
from lazytorch.nn.parameter import Buffer, Parameter
from lazytorch.ops._core import ComplexBase
from lazytorch.ops.creation import empty_like as _empty_like
from lazytorch.tensor import Tensor

__all__ = ["Module", "RemovableHandle"]


class RemovableHandle(_Handle):
    """A hook's handle: ``remove()`` unregisters it (and its flags in `extra_dicts`)."""

    def __init__(self, hooks: dict[int, Any], hook: Any, extra_dicts: tuple[Any, ...] = ()):
        super().__init__(hooks, hook)
        self._extra_dicts = extra_dicts

    def remove(self) -> None:
        super().remove()
        for d in self._extra_dicts:
            d.pop(self.id, None)


def _addindent(s_: str, num_spaces: int) -> str:
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    rest = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(rest)


def _typename(obj: Any) -> str:
    """torch.typename: ``lazytorch.FloatTensor`` for a tensor, else the qualified type name."""
    if isinstance(obj, Tensor):
        return f"{_as_torch.NAME}.{obj.dtype.legacy_name}Tensor"
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None)
    if qualname is None:
        module = type(obj).__module__
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _forward_unimplemented(self: Module, *input: Any) -> None:
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function'
    )


class Module:
    """Base class for all neural network modules; subclass it and define ``forward``.

    >>> import lazytorch
    >>> from lazytorch import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(4, 2)
    ...         self.register_buffer("steps", lazytorch.zeros((), dtype=lazytorch.int64))
    ...     def forward(self, x):
    ...         return self.fc(x).relu()
    >>> net = Net()
    >>> net
    Net(
      (fc): Linear(in_features=4, out_features=2, bias=True)
    )
    >>> list(net.state_dict())
    ['steps', 'fc.weight', 'fc.bias']
    >>> net(lazytorch.ones(3, 4)).shape
    lazytorch.Size([3, 2])
    """

    _version: int = 1
    training: bool
    forward: Callable[..., Any] = _forward_unimplemented

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                f"'{next(iter(kwargs))}'"
            )
        if args:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but "
                f"{len(args) + 1} were given"
            )
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})

    # -- registration -------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (e.g. BatchNorm's running mean).

        A non-persistent buffer is left out of ``state_dict()``.

        >>> import lazytorch
        >>> m = lazytorch.nn.Module()
        >>> m.register_buffer("count", lazytorch.zeros(()), persistent=False)
        >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
        (['count'], [])
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, (Tensor, ComplexBase)):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(lazytorch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a placeholder that is skipped everywhere).

        >>> import lazytorch
        >>> m = lazytorch.nn.Module()
        >>> m.register_parameter("scale", lazytorch.nn.Parameter(lazytorch.ones(3)))
        >>> [name for name, _ in m.named_parameters()]
        ['scale']
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(lazytorch.nn.Parameter or None required)"
            )
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' "
                "as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        else:
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for `add_module`."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path `target` (``""`` is this module).

        >>> from lazytorch import nn
        >>> net = nn.Sequential(nn.Sequential(nn.ReLU(), nn.Tanh()))
        >>> net.get_submodule("0.1")
        Tanh()
        """
        if target == "":
            return self
        mod: Module = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Replace (or, unless `strict`, add) the submodule at the dotted path `target`."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The Parameter at the dotted path `target`."""
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path `target`."""
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer  # type: ignore[no-any-return]

    # -- attribute protocol ---------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        if "_parameters" in d and name in d["_parameters"]:
            return d["_parameters"][name]
        if "_buffers" in d and name in d["_buffers"]:
            return d["_buffers"][name]
        if "_modules" in d and name in d["_modules"]:
            return d["_modules"][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        def remove_from(*dicts_or_sets: Any) -> None:
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(
                self.__dict__, self._buffers, self._modules, self._non_persistent_buffers_set
            )
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(lazytorch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(
                    self.__dict__, self._parameters, self._buffers, self._non_persistent_buffers_set
                )
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(
                        f"cannot assign '{_typename(value)}' as child module '{name}' "
                        "(lazytorch.nn.Module or None expected)"
                    )
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer):  # nn.Buffer(t, persistent=...): a new buffer
                    if buffers is None:
                        raise AttributeError("cannot assign buffer before Module.__init__() call")
                    remove_from(self.__dict__, self._parameters, self._modules)
                    self.register_buffer(name, value, value.persistent)
                elif buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, (Tensor, ComplexBase)):
                        raise TypeError(
                            f"cannot assign '{_typename(value)}' as buffer '{name}' "
                            "(lazytorch.Tensor or None expected)"
                        )
                    buffers[name] = value
                else:
                    super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self) -> list[str]:
        keys = (
            dir(self.__class__)
            + list(self.__dict__)
            + list(self._parameters)
            + list(self._modules)
            + list(self._buffers)
        )
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        for name in (
            "_forward_hooks_with_kwargs",
            "_forward_hooks_always_called",
            "_forward_pre_hooks_with_kwargs",
            "_backward_hooks",
            "_backward_pre_hooks",
            "_state_dict_hooks",
            "_state_dict_pre_hooks",
            "_load_state_dict_pre_hooks",
            "_load_state_dict_post_hooks",
        ):
            self.__dict__.setdefault(name, OrderedDict())
        self.__dict__.setdefault("_non_persistent_buffers_set", set())
        self.__dict__.setdefault("_is_full_backward_hook", None)

    # -- iteration ------------------------------------------------------------------------------
    def _named_members(
        self,
        get_members_fn: Callable[[Module], Any],
        prefix: str = "",
        recurse: bool = True,
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Any]]:
        # Tensors are remembered by identity: a Tensor's == is elementwise.
        memo: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters of this module (and, with `recurse`, of its descendants), each
        once.

        >>> from lazytorch import nn
        >>> lin = nn.Linear(3, 3)
        >>> len(list(nn.Sequential(lin, lin).parameters()))   # shared: listed once
        2
        """
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs, in registration order, depth first.

        >>> from lazytorch import nn
        >>> [n for n, _ in nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2)).named_parameters()]
        ['0.weight', '0.bias', '1.weight', '1.bias']
        """
        yield from self._named_members(
            lambda m: m._parameters.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers of this module (and, with `recurse`, of its descendants)."""
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs.

        >>> from lazytorch import nn
        >>> [n for n, _ in nn.BatchNorm1d(3).named_buffers()]
        ['running_mean', 'running_var', 'num_batches_tracked']
        """
        yield from self._named_members(
            lambda m: m._buffers.items(),
            prefix=prefix,
            recurse=recurse,
            remove_duplicate=remove_duplicate,
        )

    def children(self) -> Iterator[Module]:
        """The immediate child modules, each once."""
        for _, module in self.named_children():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, child) pairs of the immediate children, each child once."""
        memo: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        """This module and all its descendants, depth first, each once."""
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(
        self,
        memo: set[Module] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Module]]:
        """(dotted name, module) pairs, starting with ``("", self)``.

        >>> from lazytorch import nn
        >>> [n for n, _ in nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU())).named_modules()]
        ['', '0', '1', '1.0']
        """
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, sub, remove_duplicate)

    # -- modes -------------------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout drops, BatchNorm uses and updates batch statistics)
        on this module and every descendant; returns self.

        >>> from lazytorch import nn
        >>> net = nn.Sequential(nn.Dropout(), nn.Linear(2, 2)).eval()
        >>> net.training, net[0].training
        (False, False)
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode: the same as ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter (freeze with False); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to None, or to zeros in place."""
        for p in self.parameters():
            g = p.grad
            if g is None:
                continue
            if set_to_none:
                p.grad = None
            elif g.grad_fn is not None:
                p.grad = g.detach().zero_()  # type: ignore[attr-defined]
            else:
                g.requires_grad_(False)
                g.zero_()  # type: ignore[attr-defined]
                zeroed_sparse_rows(p)

    # -- conversions ---------------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        """Convert every parameter (keeping the Parameter objects: an optimizer holding
        them stays valid), its gradient, and every buffer with `fn`."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            grad = param.grad
            if applied is not param:
                param.data = applied
            if grad is not None:
                with no_grad():
                    g = fn(grad)
                if g is not grad:
                    param.grad = g
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn: Callable[[Module], None]) -> Module:
        """Call `fn` on every descendant, children first, then on self; returns self.

        >>> import lazytorch
        >>> from lazytorch import nn
        >>> def init(m):
        ...     if isinstance(m, nn.Linear):
        ...         nn.init.zeros_(m.bias)
        >>> net = nn.Sequential(nn.Linear(2, 2), nn.ReLU()).apply(init)
        >>> net[0].bias
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
        """
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Convert floating point parameters and buffers to a dtype and/or move everything
        to a device: ``to(dtype)``, ``to(device)``, ``to(tensor)``, ``to(device, dtype)``.

        >>> import lazytorch
        >>> lin = lazytorch.nn.Linear(2, 2).to(lazytorch.float64)
        >>> lin.weight.dtype
        lazytorch.float64
        """
        device = kwargs.pop("device", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
        for a in args:
            if isinstance(a, dt.DType):
                dtype = a
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, bool):
                continue  # non_blocking
            elif isinstance(a, (str, Device, int)):
                device = a
            elif a is not None:
                raise TypeError(f"to() received an invalid combination of arguments: {a!r}")
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got "
                f"desired dtype={dtype}"
            )

        def convert(t: Tensor) -> Tensor:
            return t.to(device, dtype if t.is_floating_point() else None)  # type: ignore[attr-defined,no-any-return]

        return self._apply(convert)

    def _cast_floats(self, dtype: dt.DType) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)  # type: ignore[attr-defined]

    def float(self) -> Module:
        """Cast floating point parameters and buffers to float32."""
        return self._cast_floats(dt.float32)

    def double(self) -> Module:
        """Cast floating point parameters and buffers to float64."""
        return self._cast_floats(dt.float64)

    def half(self) -> Module:
        """Cast floating point parameters and buffers to float16."""
        return self._cast_floats(dt.float16)

    def bfloat16(self) -> Module:
        """Cast floating point parameters and buffers to bfloat16.

        >>> import lazytorch
        >>> lazytorch.nn.Linear(2, 1).bfloat16().weight.dtype
        lazytorch.bfloat16
        """
        return self._cast_floats(dt.bfloat16)

    def type(self, dst_type: dt.DType) -> Module:
        """Cast all parameters and buffers to `dst_type`."""
        return self._apply(lambda t: t.to(dst_type))  # type: ignore[attr-defined]

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Move parameters and buffers to `device` without copying their values (they are
        uninitialized there): how a module built on the ``meta`` device gets storage.

        >>> import lazytorch
        >>> with lazytorch.device("meta"):
        ...     lin = lazytorch.nn.Linear(2, 3)
        >>> lin.to_empty(device="cpu").weight.shape, lin.weight.device
        (lazytorch.Size([3, 2]), device(type='cpu'))
        """
        return self._apply(
            lambda t: _empty_like(t, device=device),  # type: ignore[no-any-return]
            recurse=recurse,
        )

    def cpu(self) -> Module:
        """Move parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())  # type: ignore[attr-defined]

    def cuda(self, device: Any = None) -> Module:
        """Move parameters and buffers to a CUDA device (where lazytorch has one)."""
        return self._apply(lambda t: t.cuda(device))  # type: ignore[attr-defined]

    def share_memory(self) -> Module:
        """Move every parameter and buffer (and gradient) into shared memory
        (`Tensor.share_memory_`), for processes that train this module together."""
        for t in [*self.parameters(), *self.buffers()]:
            t.share_memory_()  # type: ignore[attr-defined]
            if t.grad is not None:  # type: ignore[attr-defined]
                t.grad.share_memory_()  # type: ignore[attr-defined]
        return self

    # -- calling --------------------------------------------------------------------------------
    def register_forward_pre_hook(
        self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward; a returned value replaces the
        positional arguments (a non-tuple is wrapped in one). With `with_kwargs`,
        ``hook(module, args, kwargs)`` may return a new ``(args, kwargs)``.

        >>> import lazytorch
        >>> relu = lazytorch.nn.ReLU()
        >>> h = relu.register_forward_pre_hook(lambda m, args: (-args[0],))
        >>> relu(lazytorch.tensor([1.0, -2.0]))
        tensor([0., 2.])
        >>> h.remove()
        """
        handle = RemovableHandle(
            self._forward_pre_hooks, hook, (self._forward_pre_hooks_with_kwargs,)
        )
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward; a returned value
        replaces the output. With `with_kwargs`, ``hook(module, args, kwargs, output)``.

        >>> import lazytorch
        >>> seen = []
        >>> tanh = lazytorch.nn.Tanh()
        >>> h = tanh.register_forward_hook(lambda m, args, out: seen.append(out.shape))
        >>> _ = tanh(lazytorch.zeros(2, 3))
        >>> seen
        [lazytorch.Size([2, 3])]
        """
        handle = RemovableHandle(
            self._forward_hooks,
            hook,
            (self._forward_hooks_with_kwargs, self._forward_hooks_always_called),
        )
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients with respect to the
        module's outputs are computed; a returned tuple replaces ``grad_output``.

        >>> import lazytorch
        >>> relu = lazytorch.nn.ReLU()
        >>> h = relu.register_full_backward_pre_hook(lambda m, go: (go[0] * 2,))
        >>> x = lazytorch.tensor([1.0, -1.0], requires_grad=True)
        >>> relu(x).sum().backward()
        >>> x.grad
        tensor([2., 0.])
        """
        handle = RemovableHandle(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect
        to the module's inputs are computed (None for an input that needs none); a
        returned tuple replaces ``grad_input``.

        >>> import lazytorch
        >>> seen = []
        >>> lin = lazytorch.nn.Linear(3, 2)
        >>> h = lin.register_full_backward_hook(
        ...     lambda m, gi, go: seen.append((gi[0].shape, go[0].shape)))
        >>> lin(lazytorch.ones(4, 3, requires_grad=True)).sum().backward()
        >>> seen
        [(lazytorch.Size([4, 3]), lazytorch.Size([4, 2]))]
        """
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        self._is_full_backward_hook = True
        handle = RemovableHandle(self._backward_hooks, hook)
        if prepend:
            self._backward_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """torch's deprecated backward hook: ``hook(module, grad_input, grad_output)``
        with the gradients of the last autograd op of the module's forward. lazytorch
        supports it where that op is known (zero-padded convolutions: ``grad_input`` is
        the input's, weight's and bias's gradients; single-op layers without parameters:
        the input's) and raises NotImplementedError elsewhere; prefer
        `register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a "
                "single Module. Please use only one of them."
            )
        _bw.legacy_hook_supported(self)
        self._is_full_backward_hook = False
        return RemovableHandle(self._backward_hooks, hook)

    def _call_impl(self, *args: Any, **kwargs: Any) -> Any:
        if not (
            self._forward_hooks
            or self._forward_pre_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        for hook_id, hook in list(self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if isinstance(res, tuple) and len(res) == 2:
                        args, kwargs = res
                    else:
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple "
                            f"of (new_args, new_kwargs), but got {res}."
                        )
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        bw_hook = None
        legacy_conv = False
        if self._backward_hooks or self._backward_pre_hooks:
            bw_hook = _bw.BackwardHook(
                self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values())
            )
            legacy_conv = self._is_full_backward_hook is False and _bw._legacy_kind(self) == "conv"
            if not legacy_conv:
                args = bw_hook.setup_input_hook(args)
        called: set[int] = set()
        result = None
        try:
            if legacy_conv:  # torch's hook sees the convolution's (input, weight, bias)
                assert bw_hook is not None
                result = self._conv_forward(
                    *bw_hook.setup_input_hook((*args, self.weight, self.bias))
                )  # type: ignore[operator]
            else:
                result = self.forward(*args, **kwargs)
            for hook_id, hook in list(self._forward_hooks.items()):
                called.add(hook_id)
                if hook_id in self._forward_hooks_with_kwargs:
                    res = hook(self, args, kwargs, result)
                else:
                    res = hook(self, args, result)
                if res is not None:
                    result = res
        except Exception:
            # Hooks registered with always_call run even when forward failed.
            for hook_id, hook in list(self._forward_hooks.items()):
                if hook_id in self._forward_hooks_always_called and hook_id not in called:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            hook(self, args, kwargs, result)
                        else:
                            hook(self, args, result)
                    except Exception:
                        continue
            raise
        if bw_hook is not None:
            result = bw_hook.setup_output_hook(result)
        return result

    __call__ = _call_impl

    # -- state dict (the logic is in `lazytorch.nn.modules.state_dict`) ----------------------------
    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        """Put this module's own parameters and persistent buffers into `destination`."""
        _sd.save_local_state(self, destination, prefix, keep_vars)

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> Any:
        """An OrderedDict of every parameter and persistent buffer by dotted name, in
        torch's order (a module's own parameters, then its buffers, then each child's).

        The values are detached aliases: they see later in-place updates of the module.

        >>> from lazytorch import nn
        >>> list(nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)).state_dict())
        ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked']
        """
        if args:  # torch's deprecated positional form
            destination = args[0] if destination is None else destination
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        return _sd.state_dict(self, destination, prefix, keep_vars)

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Copy this module's own entries of `state_dict` in place, recording problems in
        the lists (override to convert old formats, as BatchNorm does)."""
        _sd.load_local_state(
            self,
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _sd._IncompatibleKeys:
        """Copy parameters and buffers from `state_dict` into this module, in place (under
        ``no_grad``: the Parameter objects stay the same, and stay leaves). With `assign`,
        the module takes the state dict's tensors themselves (as Parameters where it had
        Parameters, with their ``requires_grad``), as torch does.

        With `strict`, missing or unexpected keys raise torch's error; a shape mismatch
        always does. Returns ``(missing_keys, unexpected_keys)``.

        >>> import lazytorch
        >>> from lazytorch import nn
        >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).all())
        True
        """
        return _sd.load_state_dict(self, state_dict, strict, assign)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` saves this module."""
        return RemovableHandle(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` after this module saved."""
        return RemovableHandle(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before this module loads."""
        return RemovableHandle(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after this module and its children
        loaded."""
        return RemovableHandle(self._load_state_dict_post_hooks, hook)

    # -- printing --------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The module's own settings, printed inside its parentheses (override it)."""
        return ""

    def __repr__(self) -> str:
        extra_repr = self.extra_repr()
        extra_lines = extra_repr.split("\n") if extra_repr else []
        child_lines = [
            "(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
