"""`triton_backend.Launch`: a generated kernel's launches past Triton's JIT dispatch, checked
with stand-ins for the JIT and the compiled kernel (no GPU, no Triton compile). On a GPU,
tests/gpu/test_gpu.py runs the real thing."""

from __future__ import annotations

from typing import Any

from lazytorch.runtime.triton_backend import Launch


class Pointer:
    def __init__(self, address: int) -> None:
        self.address = address

    def data_ptr(self) -> int:
        return self.address


class Compiled:
    def __init__(self, log: list[Any]) -> None:
        self.log = log

    def run(self, *a: Any) -> None:  # only its presence matters: a compiled kernel
        raise AssertionError("launched through [grid]")

    def __getitem__(self, grid: tuple[int, ...]) -> Any:
        return lambda *args: self.log.append(("direct", grid, args))


class Jit:
    """JITFunction's surface: ``arg_names`` and ``[grid](*args, **kwargs)`` returning the
    compiled kernel (None under the interpreter)."""

    arg_names = ["b0", "b1", "xnumel", "XBLOCK", "RBLOCK"]

    def __init__(self, interpreted: bool = False) -> None:
        self.log: list[Any] = []
        self.interpreted = interpreted

    def __getitem__(self, grid: tuple[int, ...]) -> Any:
        def run(*args: Any, **kw: Any) -> Any:
            self.log.append(("jit", grid, args, kw))
            return None if self.interpreted else Compiled(self.log)

        return run


def test_the_second_launch_calls_the_compiled_kernel_with_the_constants_in_order():
    jit = Jit()
    k = Launch(jit)
    b0, b1 = Pointer(0x1000), Pointer(0x2000)
    k[(7,)](b0, b1, 100, XBLOCK=64, RBLOCK=32, num_warps=8)
    b2 = Pointer(0x3000)
    k[(7,)](b2, b1, 100, XBLOCK=64, RBLOCK=32, num_warps=8)
    assert jit.log[0][0] == "jit"
    # the grid padded to three dims; the constants follow the arguments in signature order
    assert jit.log[1] == ("direct", (7, 1, 1), (b2, b1, 100, 64, 32))


def test_other_constants_or_an_unaligned_pointer_go_through_the_jit():
    jit = Jit()
    k = Launch(jit)
    a, b = Pointer(0x1000), Pointer(0x2000)
    k[(1,)](a, b, 5, XBLOCK=64, RBLOCK=32)
    k[(1,)](a, b, 5, XBLOCK=128, RBLOCK=32)  # another config (the tuner): the JIT, re-armed
    k[(1,)](a, b, 5, XBLOCK=128, RBLOCK=32)
    k[(1,)](a, Pointer(0x2004), 5, XBLOCK=128, RBLOCK=32)  # the JIT specialized on alignment
    assert [e[0] for e in jit.log] == ["jit", "jit", "direct", "jit"]


def test_a_pointer_unaligned_at_compile_is_not_checked_again():
    jit = Jit()
    k = Launch(jit)
    k[(1,)](Pointer(0x1008), Pointer(0x2000), 5, XBLOCK=64, RBLOCK=32)
    k[(1,)](Pointer(0x1000), Pointer(0x2000), 5, XBLOCK=64, RBLOCK=32)
    assert [e[0] for e in jit.log] == ["jit", "direct"]


def test_the_interpreter_always_launches_through_the_jit():
    jit = Jit(interpreted=True)
    k = Launch(jit)
    for _ in range(3):
        k[(1,)](Pointer(0), Pointer(0), 5, XBLOCK=64, RBLOCK=32)
    assert [e[0] for e in jit.log] == ["jit"] * 3


def test_a_constant_left_to_its_default_keeps_the_jit():
    jit = Jit()
    k = Launch(jit)
    for _ in range(2):
        k[(1,)](Pointer(0), Pointer(0), 5, XBLOCK=64)  # RBLOCK would come from a default
    assert [e[0] for e in jit.log] == ["jit", "jit"]
