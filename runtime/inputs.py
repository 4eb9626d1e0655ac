"""Binding a call's arrays to a function's signature: shapes, dtypes and symbolic sizes.

Used by every target, so the same call fails with the same one-line message
whether it runs on NumPy, the CPU or the GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dialects.tensor_types import NUMPY_DTYPES, Shape, format_shape

DEFAULT_DIM = 256


class InputError(Exception):
    """A missing, misshapen or mistyped input: reported as one line, exit status 1."""


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
        if array.dtype != NUMPY_DTYPES[param.dtype]:
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


def concrete_shape(shape: Shape, sizes: Mapping[str, int]) -> tuple[int, ...]:
    return tuple(d if isinstance(d, int) else sizes[d] for d in shape)


def draw_inputs(
    params: Sequence[Param],
    given: Mapping[str, np.ndarray],
    dims: Mapping[str, int],
    seed: int,
    function: str,
) -> list[np.ndarray]:
    """The arguments of a call: the given arrays by name, the others drawn at random.

    Sizes come first from the given arrays, then from `dims`, then DEFAULT_DIM.
    """
    unknown = sorted(set(given) - {p.name for p in params})
    if unknown:
        raise InputError(
            f"{function} has no parameter named {', '.join(repr(n) for n in unknown)} "
            f"(parameters: {', '.join(p.name for p in params)})"
        )
    provided = [p for p in params if p.name in given]
    sizes = bind_sizes(provided, [np.asarray(given[p.name]) for p in provided], function)
    for name, value in dims.items():
        if name in sizes and sizes[name] != value:
            raise InputError(f"--dims sets {name}={value}, but the inputs fix {name}={sizes[name]}")
        sizes.setdefault(name, value)
    rng = np.random.default_rng(seed)
    arrays = []
    for param in params:
        if param.name in given:
            arrays.append(np.asarray(given[param.name]))
            continue
        shape = tuple(
            d if isinstance(d, int) else sizes.setdefault(d, DEFAULT_DIM) for d in param.shape
        )
        arrays.append(random_array(rng, param.dtype, shape))
    return arrays


def random_array(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("i"):
        return rng.integers(-8, 8, size=shape).astype(NUMPY_DTYPES[dtype])
    return rng.standard_normal(shape).astype(NUMPY_DTYPES[dtype])
