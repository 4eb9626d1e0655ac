"""Binding a call's arrays to a function's signature: shapes, dtypes and symbolic sizes,
and the arrays a call writes its results into (``out=``).

Used by every target, so the same call fails with the same one-line message
whether it runs on NumPy, the CPU or the GPU.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dialects.graph_semantics import astype
from dialects.sizes import MAX_SIZE, Size, SizeError, evaluate_dim, is_derived, solve
from dialects.tensor_types import NUMPY_DTYPES, Shape, float_limits, format_shape
from runtime.errors import InputError

#: the size of a symbolic dim that no input, `--dims` or `# dims:` line binds
DEFAULT_DIM = 256


@dataclass(frozen=True)
class Param:
    name: str
    dtype: str
    shape: Shape

    def describe(self) -> str:
        return f"{self.dtype}{format_shape(self.shape)}"


def bind_sizes(params: Sequence[Param], arrays: Sequence[np.ndarray], function: str) -> dict[str, int]:
    """Checks each array against its parameter and returns the symbolic sizes they fix."""
    if len(arrays) != len(params):
        raise InputError(
            f"{function} takes {len(params)} argument(s) "
            f"({', '.join(p.name for p in params)}), got {len(arrays)}"
        )
    sizes: dict[str, int] = {}
    where: dict[str, str] = {}
    for param, array in zip(params, arrays):
        if not isinstance(getattr(array, "dtype", None), np.dtype) or not hasattr(array, "ndim"):
            raise InputError(f"argument '{param.name}' must be a NumPy or device array, got {type(array).__name__}")
        if array.dtype != NUMPY_DTYPES[param.dtype] and not _bf16_bits(param, array):
            raise InputError(
                f"argument '{param.name}' has dtype {array.dtype}, but {function} expects "
                f"{param.describe()} ({NUMPY_DTYPES[param.dtype]})"
            )
        if array.ndim != len(param.shape):
            raise InputError(
                f"argument '{param.name}' has shape {array.shape}, but {function} expects "
                f"{param.describe()} (rank {len(param.shape)})"
            )
        for axis, (dim, actual) in enumerate(zip(param.shape, array.shape)):
            if isinstance(dim, int):
                if dim != actual:
                    raise InputError(
                        f"argument '{param.name}' has shape {array.shape}, but {function} expects "
                        f"{param.describe()}: axis {axis} must be {dim}"
                    )
            elif dim in sizes and sizes[dim] != actual:
                raise InputError(
                    f"size {dim} is {sizes[dim]} from {where[dim]} but {actual} from "
                    f"argument '{param.name}' axis {axis}"
                )
            else:
                sizes[dim] = actual
                where.setdefault(dim, f"argument '{param.name}' axis {axis}")
    return sizes


def _bf16_bits(param: Param, array) -> bool:
    """Whether ``array`` is a device array holding a bf16 parameter as its bits: the
    ``uint16`` the GPU target keeps, or the raw two-byte elements (``|V2``) a PyTorch
    bfloat16 tensor shares (NumPy has no bfloat16 of its own)."""
    return (
        param.dtype == "bf16"
        and not isinstance(array, np.ndarray)
        and (array.dtype == np.uint16 or (array.dtype.kind == "V" and array.dtype.itemsize == 2))
    )


def check_out(
    out: Any,
    expected: Sequence[tuple[np.dtype, tuple[int, ...]]],
    entry: str,
    view: Callable[[int, Any], Any],
    kind: str,
) -> list[Any]:
    """The arrays ``out=`` gives a call to write its results into (``Executable.run``),
    checked before any kernel is compiled or launched, each as the target views it:
    ``view(k, out[k])``, None for an object the target does not take (``kind`` says
    what it takes). A list or tuple of one writable array per result, of the result's
    dtype and shape (``expected``, as the target writes it), no two sharing memory
    (each result needs its own). One sharing memory with an argument is allowed: the
    executor writes it through a fresh buffer once the arguments are read
    (``shares_memory``), as NumPy's ufuncs do with an overlapping ``out``."""
    if not isinstance(out, (list, tuple)):
        raise InputError(f"{entry}: out= takes a list or tuple of arrays, one per result, got {type(out).__name__}")
    if len(out) != len(expected):
        raise InputError(f"{entry} has {len(expected)} result(s), out= has {len(out)} array(s)")
    views = []
    for k, (array, (dtype, shape)) in enumerate(zip(out, expected)):
        target = view(k, array)
        if target is None:
            raise InputError(f"{entry}: out[{k}] must be {kind}, got {type(array).__name__}")
        if isinstance(target, np.ndarray) and not target.flags.writeable:
            raise InputError(f"{entry}: out[{k}] is read-only")
        if target.dtype != dtype or tuple(target.shape) != shape:
            raise InputError(f"{entry}: out[{k}] must be {dtype}{list(shape)}, got {target.dtype}{list(target.shape)}")
        views.append(target)
    for (j, a), (k, b) in itertools.combinations(enumerate(views), 2):
        if shares_memory(a, b):
            raise InputError(f"{entry}: out[{j}] and out[{k}] share memory; each result needs an array of its own")
    return views


def shares_memory(a: Any, b: Any) -> bool:
    """Whether two arrays hold an element in common: NumPy's exact answer for two NumPy
    arrays; for others, whether the spans of addresses they reach meet, both read from
    ``__cuda_array_interface__`` (device arrays) or both from ``__array_interface__``
    (host memory: Numba's simulated device arrays)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b))
    for interface in ("__cuda_array_interface__", "__array_interface__"):
        span_a, span_b = _span(a, interface), _span(b, interface)
        if span_a is not None and span_b is not None:
            return max(span_a[0], span_b[0]) < min(span_a[1], span_b[1])  # (never an empty one)
    return False


def _span(array: Any, interface_name: str) -> tuple[int, int] | None:
    """The first address an array reaches and the one past its last (equal where it holds
    no element), read from its array interface ``interface_name``; None without one."""
    interface = getattr(array, interface_name, None)
    if interface is None:
        return None
    start, shape = interface["data"][0], interface["shape"]
    itemsize = np.dtype(interface["typestr"]).itemsize
    if math.prod(shape) == 0:
        return start, start
    strides = interface.get("strides") or [itemsize * math.prod(shape[i + 1 :]) for i in range(len(shape))]
    low = start + sum(min(0, s * (n - 1)) for s, n in zip(strides, shape))
    high = start + sum(max(0, s * (n - 1)) for s, n in zip(strides, shape)) + itemsize
    return low, high


def check_names(params: Sequence[str], names: Iterable[str], function: str) -> None:
    """Refuses arguments by name that match no parameter of `function`."""
    unknown = sorted(set(names) - set(params))
    if unknown:
        raise InputError(
            f"{function} has no parameter named {', '.join(repr(n) for n in unknown)} "
            f"(parameters: {', '.join(params)})"
        )


def concrete_shape(shape: Shape, sizes: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(d if isinstance(d, int) else sizes[d] for d in shape)


@dataclass(frozen=True)
class Distribution:
    """A distribution a program's `# draw:` line may give an input (docs/reference.md,
    "Drawn inputs"): its two numbers, the dtype kinds it draws and how."""

    name: str
    #: the NumPy dtype kinds it draws: "f" floats, "i" integers
    kinds: str
    first: str
    second: str
    sample: Callable[[np.random.Generator, float, float, tuple[int, ...]], np.ndarray]
    #: why two numbers do not define it, or None where they do
    refuses: Callable[[float, float], str | None]


def _ordered(low: float, high: float) -> str | None:
    if not low < high:
        return f"the low end ({low}) is not below the high end ({high})"
    return None if math.isfinite(high - low) else "the range is wider than a float64 can hold"


#: every distribution a `# draw:` line may name, by name
DISTRIBUTIONS = {
    d.name: d
    for d in (
        Distribution(
            "normal", "f", "mean", "standard deviation",
            lambda rng, mean, std, shape: rng.normal(mean, std, shape),
            lambda mean, std: None if std >= 0 else f"the standard deviation ({std}) is negative",
        ),
        Distribution("uniform", "f", "low", "high", lambda rng, low, high, shape: rng.uniform(low, high, shape), _ordered),
        Distribution(
            "integers", "i", "low", "high (excluded)",
            lambda rng, low, high, shape: rng.integers(int(low), int(high), shape), _ordered,
        ),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Draw:
    """How one input is drawn: a distribution of `DISTRIBUTIONS` and its two numbers,
    each a number or a size name (`integers(0, V)`: ids within a table of V rows)."""

    distribution: str
    first: int | float | str
    second: int | float | str

    def describe(self) -> str:
        return f"{self.distribution}({self.first}, {self.second})"

    def sample(self, rng: np.random.Generator, param: Param, shape: tuple[int, ...], sizes: Mapping[str, int]) -> np.ndarray:
        """An array of `param`'s dtype and `shape`; `InputError` where this draw does not
        define one (`integers(0, V)` with V = 0, a range past the dtype's)."""
        distribution = DISTRIBUTIONS[self.distribution]
        first, second = (sizes[n] if isinstance(n, str) else n for n in (self.first, self.second))
        why = distribution.refuses(first, second)
        dtype = NUMPY_DTYPES[param.dtype]
        info = np.iinfo(dtype) if dtype.kind == "i" else float_limits(dtype)
        # integers: the values drawn; floats: the numbers themselves (a normal's values
        # past the dtype's range are its infinities, as a cast makes them)
        low, high = (first, second - 1) if dtype.kind == "i" else (-abs(first), abs(second))
        if why is None and (low < int(info.min) or high > int(info.max)):
            why = f"it draws values outside {param.dtype}'s range [{info.min}, {info.max}]"
        if why is not None:
            raise InputError(f"cannot draw '{param.name}' from {self.describe()}: {why}")
        with np.errstate(over="ignore"):
            return astype(np.asarray(distribution.sample(rng, first, second, shape)), dtype)


@dataclass(frozen=True)
class InputDefaults:
    """What a program says of the inputs drawn for it (its `# dims:` and `# draw:`
    lines, docs/reference.md, "Drawn inputs"): sizes by name, draws by parameter name."""

    dims: Mapping[str, int] = field(default_factory=dict)
    draws: Mapping[str, Draw] = field(default_factory=dict)


#: a program without `# dims:` or `# draw:` lines
NO_DEFAULTS = InputDefaults()


def input_sizes(
    params: Sequence[Param],
    given: Mapping[str, np.ndarray],
    dims: Mapping[str, int],
    function: str,
    defaults: InputDefaults = NO_DEFAULTS,
) -> dict[str, int]:
    """Every size name of the parameters bound: first by the given arrays, then by
    `dims` (`--dims`), then by the program's `# dims:` line, then DEFAULT_DIM; a
    derived size (`D/2`) is what its names make it, and a given array's binds its one
    unknown name."""
    check_names([p.name for p in params], given, function)
    provided = [p for p in params if p.name in given]
    sizes = bind_sizes(provided, [np.asarray(given[p.name]) for p in provided], function)
    for dim in [d for d in sizes if is_derived(d)]:
        if (solved := solve(dim, sizes[dim], sizes)) is not None:
            sizes.setdefault(*solved)
    for name, value in dims.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise InputError(f"size {name} must be a whole number of at least 0, got {value!r}")
        value = int(value)
        if name in sizes and sizes[name] != value:
            raise InputError(f"--dims sets {name}={value}, but the inputs fix {name}={sizes[name]}")
        sizes.setdefault(name, value)
    names = dict.fromkeys(n for p in params for d in p.shape if isinstance(d, str) for n in Size.of(d).names)
    for name in names:
        sizes.setdefault(name, defaults.dims.get(name, DEFAULT_DIM))
    return sizes


def drawn_shapes(params: Sequence[Param], given: Mapping[str, np.ndarray], sizes: dict[str, int]) -> dict[str, tuple[int, ...]]:
    """The shape of each parameter not given, under `sizes` (`input_sizes`)."""
    return {param.name: tuple(_drawn_size(d, sizes) for d in param.shape) for param in params if param.name not in given}


def draw_inputs(
    params: Sequence[Param],
    given: Mapping[str, np.ndarray],
    dims: Mapping[str, int],
    seed: int,
    function: str,
    defaults: InputDefaults = NO_DEFAULTS,
) -> list[np.ndarray]:
    """The arguments of a call: the given arrays by name, the others drawn at random
    (standard normal floats, integers in [-8, 8), or as the program's `# draw:` line
    says) at the sizes `input_sizes` binds."""
    sizes = input_sizes(params, given, dims, function, defaults)
    shapes = drawn_shapes(params, given, sizes)
    check_allocation([p for p in params if p.name in shapes], shapes)
    rng = np.random.default_rng(seed)
    arrays = []
    for p in params:
        if p.name in given:
            arrays.append(np.asarray(given[p.name]))
        elif p.name in defaults.draws:
            arrays.append(defaults.draws[p.name].sample(rng, p, shapes[p.name], sizes))
        else:
            arrays.append(random_array(rng, p.dtype, shapes[p.name]))
    return arrays


def _drawn_size(dim: int | str, sizes: dict[str, int]) -> int:
    """A dim of an input drawn at random: a bound name's size, or a derived size
    (`D/2`), which must be whole."""
    try:
        return evaluate_dim(dim, sizes)
    except SizeError as error:
        raise InputError(f"cannot draw an input with size {dim}: {error}; give other --dims") from None


def check_allocation(params: Sequence[Param], shapes: Mapping[str, tuple[int, ...]]) -> None:
    """Refuses, with the number of bytes asked for, arrays that cannot be allocated: more
    than a 64-bit size can count, or more than this machine's memory (where the system
    would rather kill the process than refuse the allocation)."""
    nbytes = {p.name: math.prod(shapes[p.name]) * NUMPY_DTYPES[p.dtype].itemsize for p in params}
    total = sum(nbytes.values())
    memory = physical_memory()
    if total > MAX_SIZE:
        limit = "more than a 64-bit size can count"
    elif memory is not None and total > memory:
        limit = f"more than this machine's memory ({format_bytes(memory)})"
    else:
        return
    largest = max(params, key=lambda p: nbytes[p.name])
    raise InputError(
        f"the inputs drawn at random need {format_bytes(total)}, {limit}; the largest is "
        f"'{largest.name}' {largest.dtype}{list(shapes[largest.name])} ({format_bytes(nbytes[largest.name])}): "
        "give smaller --dims"
    )


def physical_memory() -> int | None:
    """This machine's memory in bytes, where the system says."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows) or no such name
        return None


def format_bytes(n: int) -> str:
    """A byte count for people: exact, and in binary units when large."""
    for unit, scale in (("EiB", 2**60), ("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= scale:
            return f"{n:,} bytes ({n / scale:.1f} {unit})"
    return f"{n:,} bytes"


def random_array(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("i"):
        return rng.integers(-8, 8, size=shape).astype(NUMPY_DTYPES[dtype])
    return astype(rng.standard_normal(shape), NUMPY_DTYPES[dtype])
