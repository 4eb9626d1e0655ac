"""Tensor types of the graph dialect, and shapes with symbolic sizes.

A symbolic size (a name such as ``N`` in ``f32[N, 768]``) is a dynamic dimension of
a builtin ``tensor`` type whose name is kept in the type's encoding, one string per
dimension ("" for a static one):

    tensor<?x768xf32, ["N", ""]>

So two values with the same symbolic shape have equal types, which is what the
verifiers compare, and a fully static type prints as plain ``tensor<4x768xf32>``.
Shapes are handled in Python as tuples of ``int | str``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from fractions import Fraction

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StringAttr,
    TensorType,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute

from dialects.sizes import Dim, Size

Shape = tuple[Dim, ...]

ELEMENT_TYPES: dict[str, Attribute] = {
    "bf16": bf16,
    "f16": f16,
    "f32": f32,
    "f64": f64,
    "i32": i32,
    "i64": i64,
    "bool": i1,
}

#: bf16 is ``ml_dtypes.bfloat16`` (the dtype JAX uses): NumPy has none of its own, and
#: ml_dtypes' arrays compute as NumPy's do, each op's result rounded to bfloat16
NUMPY_DTYPES: dict[str, np.dtype] = {
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "bool": np.dtype(np.bool_),
}


def dtype_name(element_type: Attribute) -> str:
    """The DSL's name of an element type (``f32``, ``bool``, ...)."""
    for name, candidate in ELEMENT_TYPES.items():
        if candidate == element_type:
            return name
    raise ValueError(f"unsupported element type {element_type}")


def tensor_type(dtype: str | Attribute, shape: Sequence[Dim]) -> TensorType:
    """The tensor type of a DSL dtype and a shape of ints and size names."""
    return _tensor_type(dtype, tuple(shape))


@functools.lru_cache(maxsize=4096)  # bounded: a long-lived process compiles many programs
def _tensor_type(dtype: str | Attribute, shape: tuple[Dim, ...]) -> TensorType:
    """``tensor_type``, made once per dtype and shape: an attribute is immutable, and
    making one verifies it (a program of thousands of statements asks for a few types
    thousands of times)."""
    element = ELEMENT_TYPES[dtype] if isinstance(dtype, str) else dtype
    dims = [DYNAMIC_INDEX if isinstance(d, str) else d for d in shape]
    if any(isinstance(d, str) for d in shape):
        names = ArrayAttr([StringAttr(d if isinstance(d, str) else "") for d in shape])
        return TensorType(element, dims, names)
    return TensorType(element, dims)


def shape_of(type_: Attribute) -> Shape:
    """The shape of a tensor type, symbolic sizes as their names."""
    assert isinstance(type_, TensorType), f"expected a tensor type, got {type_}"
    dims = type_.get_shape()
    encoding = type_.encoding
    names: list[str] = (
        [n.data for n in encoding.data]
        if isinstance(encoding, ArrayAttr)
        else [""] * len(dims)
    )
    shape: list[Dim] = []
    for dim, name in zip(dims, names, strict=True):
        if dim == DYNAMIC_INDEX:
            shape.append(name or "?")
        else:
            shape.append(dim)
    return tuple(shape)


def dtype_of(type_: Attribute) -> str:
    assert isinstance(type_, TensorType), f"expected a tensor type, got {type_}"
    return dtype_name(type_.element_type)


def is_float(type_: Attribute) -> bool:
    element = type_.element_type if isinstance(type_, TensorType) else type_
    return isinstance(element, BFloat16Type | Float16Type | Float32Type | Float64Type)


#: the 16-bit floats: stored in two bytes, computed in float32 on the compiled targets
#: (docs/reference.md#numerics), each rounded to nearest even where a value becomes one
HALF_FLOAT_TYPES = (BFloat16Type, Float16Type)


def is_half_float(type_: Attribute) -> bool:
    """Whether a tensor's, memref's or scalar's elements are ``f16`` or ``bf16``."""
    element = type_.element_type if isinstance(type_, TensorType | MemRefType) else type_
    return isinstance(element, HALF_FLOAT_TYPES)


def dtype_kind(dtype: np.dtype) -> str:
    """A NumPy dtype's kind ("f", "i", "b", ...), "f" for ml_dtypes' bfloat16 too (whose
    own kind is "V", which ``np.issubdtype(dtype, np.floating)`` does not count)."""
    return "f" if dtype == NUMPY_DTYPES["bf16"] else dtype.kind


def is_float_dtype(dtype: np.dtype) -> bool:
    """Whether a NumPy dtype is a float: NumPy's own, or ml_dtypes' bfloat16."""
    return dtype_kind(dtype) == "f"


def float_limits(dtype: np.dtype) -> ml_dtypes.finfo:
    """``np.finfo`` of a float dtype, bfloat16's from ml_dtypes (NumPy's refuses it)."""
    return ml_dtypes.finfo(dtype)


def is_bool(type_: Attribute) -> bool:
    element = type_.element_type if isinstance(type_, TensorType) else type_
    return isinstance(element, IntegerType) and element.width.data == 1


def encoding_is_valid(type_: TensorType) -> bool:
    """A symbolic-size encoding names exactly the dynamic dimensions."""
    encoding = type_.encoding
    if isinstance(encoding, NoneAttr):
        return all(d != DYNAMIC_INDEX for d in type_.get_shape())
    if not isinstance(encoding, ArrayAttr):
        return False
    dims = type_.get_shape()
    if len(encoding.data) != len(dims):
        return False
    for dim, name in zip(dims, encoding.data):
        if not isinstance(name, StringAttr):
            return False
        if (dim == DYNAMIC_INDEX) != bool(name.data):
            return False
    return True


#: the scalar types of fusec's IR: the element types, and ``index`` (a loop's counter, a size)
SCALAR_TYPES: tuple[Attribute, ...] = (*ELEMENT_TYPES.values(), IndexType())


def element_type_problem(type_: TensorType | MemRefType) -> str | None:
    """Why a tensor's or memref's element type is none of fusec's, or None."""
    if type_.element_type in ELEMENT_TYPES.values():
        return None
    known = ", ".join(str(t) for t in ELEMENT_TYPES.values())
    return f"has element type {type_.element_type}, which is none of fusec's ({known})"


def tensor_type_problem(type_: TensorType) -> str | None:
    """Why a tensor type is none of fusec's (its element type, or size names that are not
    its dynamic sizes, which ``shape_of`` reads one per dimension), or None."""
    if problem := element_type_problem(type_):
        return problem
    if not encoding_is_valid(type_):
        return "must name each dynamic size, and only those, in its encoding"
    return None


def foreign_type(attribute: Attribute) -> tuple[Attribute, str] | None:
    """The first type in ``attribute`` (a type, or an attribute holding types: a function
    type, a typed number, a dense literal, an array of them) that fusec's IR does not have,
    and why; None when there is none. fusec's passes and code generators read only these
    types: another one (``ui32``, ``complex<f32>``, ``f80``, a rank's worth of size names
    too few) would reach them as an exception."""
    problem: str | None = None
    if isinstance(attribute, TensorType):
        problem = tensor_type_problem(attribute)
    elif isinstance(attribute, MemRefType):
        problem = element_type_problem(attribute)
    elif isinstance(attribute, TypeAttribute) and not isinstance(attribute, FunctionType):
        known = ", ".join(str(t) for t in SCALAR_TYPES)
        problem = None if attribute in SCALAR_TYPES else f"is none of fusec's types (tensors, memrefs and {known})"
    else:
        return next((found for part in _parts_of(attribute) if (found := foreign_type(part))), None)
    return (attribute, problem) if problem else None


def _parts_of(attribute: Attribute) -> Sequence[Attribute]:
    """The attributes ``attribute`` holds: its parameters, or its elements."""
    if isinstance(attribute, ParametrizedAttribute):
        return attribute.parameters
    if isinstance(attribute, ArrayAttr):
        return attribute.data
    if isinstance(attribute, DictionaryAttr):
        return list(attribute.data.values())
    return ()


def broadcast_shapes(*shapes: Shape) -> Shape | None:
    """NumPy broadcasting over symbolic shapes; None when they do not broadcast.

    A size name only matches itself or the integer 1: two different names could be
    equal at run time, but the language treats them as a mismatch.
    """
    rank = max((len(s) for s in shapes), default=0)
    result: list[Dim] = []
    for axis in range(rank):
        dim: Dim = 1
        for shape in shapes:
            offset = axis - (rank - len(shape))
            if offset < 0:
                continue
            d = shape[offset]
            if d == 1:
                continue
            if dim == 1:
                dim = d
            elif dim != d:
                return None
        result.append(dim)
    return tuple(result)


def num_elements(shape: Shape) -> tuple[Fraction, tuple[str, ...]]:
    """The element count of a shape as (rational factor, sorted size names): two shapes
    have it equal exactly when their counts are provably equal (``dialects.sizes``)."""
    count = Size.product(shape)
    return count.factor, count.names


def format_shape(shape: Shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _read_hex_float_literals_as_bits() -> None:
    """Make xDSL's parser read ``dense<0xFF800000> : tensor<f32>`` as the float with
    those bits (-inf), as MLIR does.

    xDSL 0.74 prints a non-finite float of a dense literal as its bit pattern, but
    parses a hex element back as the integer's value (4.29e9), so a ``graph.constant``
    of -inf, inf or nan did not survive printing and parsing, in either form.
    ``FloatAttr`` already reads hex as bits; this does the same for dense elements.
    """
    from xdsl.dialects.builtin import AnyFloat
    from xdsl.parser.attribute_parser import AttrParser

    element = AttrParser._TensorLiteralElement  # pyright: ignore[reportPrivateUsage]
    upstream = element.to_type
    if getattr(upstream, "reads_hex_bits", False):
        return

    def to_type(self, parser, type):
        if (
            isinstance(type, AnyFloat)
            and isinstance(self.value, int)
            and not isinstance(self.value, bool)
            and not self.is_negative
            and self.span.text[:2] in ("0x", "0X")
        ):
            raw = self.value.to_bytes(type.compile_time_size, "little")
            return next(type.iter_unpack(raw))
        return upstream(self, parser, type)

    # Patched with setattr: the attribute marks the patch as applied, and mypy rightly
    # refuses an assignment to a method of xDSL's class.
    setattr(to_type, "reads_hex_bits", True)  # noqa: B010
    setattr(element, "to_type", to_type)  # noqa: B010


def _float_attr_reads_hex_bits() -> None:
    """The same for a ``FloatAttr`` whose type the context gives (a ``f64`` property in
    an op's custom syntax, ``value = 0xfff0000000000000``): xDSL prints a non-finite one
    as its bits but parsed only decimal floats there."""
    from xdsl.dialects.builtin import FloatAttr
    from xdsl.utils.mlir_lexer import MLIRTokenKind

    upstream = FloatAttr.parse_with_type

    def parse_with_type(parser, type):
        token = parser._current_token  # pyright: ignore[reportPrivateUsage]
        if token.kind == MLIRTokenKind.INTEGER_LIT and token.text[:2] in ("0x", "0X"):
            bits = parser.parse_integer(allow_negative=False)
            return FloatAttr(next(type.iter_unpack(bits.to_bytes(type.compile_time_size, "little"))), type)
        return upstream(parser, type)

    setattr(FloatAttr, "parse_with_type", staticmethod(parse_with_type))  # noqa: B010 (as above)


_read_hex_float_literals_as_bits()
_float_attr_reads_hex_bits()
