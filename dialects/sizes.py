"""Symbolic sizes: a size name, or a product of size names times a rational factor.

A dim of a shape is an integer or a string. A string is either a size name bound by an
argument (``"N"``) or a *derived size* made from names: ``"D/4"``, ``"4*D"``, ``"B*S"``,
``"B*S*D/4"``, as a reshape into heads or a merge of axes produces. Every string has one
canonical spelling (``Size.dim``), so equal sizes are equal strings, and the types,
verifiers and broadcasting that compare dims as strings stay as they are.

A derived size exists only where it is a whole number: ``D/4`` with ``D = 30`` is an
error when the program is run (``Size.evaluate``), not a rounded size.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from math import prod
from typing import TypeGuard

Dim = int | str

#: the largest size and byte count an array can have: sizes are signed 64-bit integers
MAX_SIZE = 2**63 - 1

_NAME = re.compile(r"[^\W\d]\w*")
_OPERATOR = re.compile(r"[*/]")


class SizeError(ValueError):
    """A size that is not well formed, not bound, or not a whole number."""


@dataclass(frozen=True)
class Size:
    """``factor * names[0] * names[1] * ...``, names sorted, a name repeated for a power."""

    factor: Fraction
    names: tuple[str, ...] = ()

    @staticmethod
    def of(dim: Dim) -> Size:
        """The size a dim spells: an integer, a name, or a derived size like ``"B*D/4"``.
        A string without ``*`` or ``/`` is a name whatever it holds (textual IR may name
        a size anything)."""
        if isinstance(dim, int):
            return Size(Fraction(dim))
        if not _OPERATOR.search(dim):
            return Size(Fraction(1), (dim,))
        numerator, slash, denominator = dim.partition("/")
        if slash and not denominator.strip().isdigit():
            raise SizeError(f"malformed size {dim!r}: only an integer may divide")
        factor, names = Fraction(1), []
        for part in numerator.split("*"):
            part = part.strip()
            if part.isdigit():
                factor *= _integer(part, dim)
            elif _NAME.fullmatch(part):
                names.append(part)
            else:
                raise SizeError(f"malformed size {dim!r}")
        if slash:
            if _integer(denominator, dim) == 0:
                raise SizeError(f"size {dim!r} divides by zero")
            factor /= _integer(denominator, dim)
        return Size(factor, tuple(sorted(names)))

    @staticmethod
    def product(dims) -> Size:
        """The product of some dims: a shape's element count."""
        result = Size(Fraction(1))
        for d in dims:
            result = result * Size.of(d)
        return result

    def __mul__(self, other: Size) -> Size:
        return Size(self.factor * other.factor, tuple(sorted(self.names + other.names)))

    def __add__(self, other: Size) -> Size | None:
        """``self + other`` where it is a size (both integers, or both the same names:
        ``D/2 + D/2 = D``, ``N + N = 2*N``), else None (``N + 1``, ``N + M``)."""
        if self.names != other.names:
            return None
        return Size(self.factor + other.factor, self.names)

    def __truediv__(self, other: Size) -> Size | None:
        """``self / other`` where it is a size (other's names all among self's), else None."""
        have = Counter(self.names)
        if Counter(other.names) - have or other.factor == 0:
            return None
        rest = have - Counter(other.names)
        return Size(self.factor / other.factor, tuple(sorted(rest.elements())))

    @property
    def dim(self) -> Dim:
        """The canonical dim: an int when no name is left, else ``"4*B*S/3"``-style."""
        if not self.names:
            if self.factor.denominator != 1:
                raise SizeError(f"{self.factor} is not a whole size")
            return int(self.factor)
        numerator = [str(self.factor.numerator)] if self.factor.numerator != 1 else []
        text = "*".join(numerator + list(self.names))
        return text if self.factor.denominator == 1 else f"{text}/{self.factor.denominator}"

    def evaluate(self, sizes: dict[str, int]) -> int:
        """The size under a binding of its names; a ``SizeError`` when a name is unbound
        or the size is not a whole number there."""
        missing = [n for n in self.names if n not in sizes]
        if missing:
            raise SizeError(f"size {missing[0]} is not bound by any argument")
        whole = self.factor.numerator * prod(sizes[n] for n in self.names)
        if whole % self.factor.denominator:
            bound = ", ".join(f"{n} = {sizes[n]}" for n in dict.fromkeys(self.names))
            raise SizeError(f"size {self.dim} is not a whole number with {bound}")
        return whole // self.factor.denominator


def sum_dims(dims) -> Dim | None:
    """The dim of a sum of dims (the axis of a concatenation), or None where no size
    spells it."""
    first, *rest = (Size.of(d) for d in dims)
    total: Size | None = first
    for size in rest:
        if total is None:
            return None
        total = total + size
    return None if total is None else total.dim


def _integer(digits: str, dim: str) -> int:
    try:
        return int(digits)
    except ValueError:  # past Python's 4300 digits
        raise SizeError(f"size {dim[:40]!r}... has a number too long for any size") from None


def is_derived(dim: Dim) -> TypeGuard[str]:
    """Whether a dim is a derived size rather than an integer or a plain size name."""
    return isinstance(dim, str) and bool(_OPERATOR.search(dim))


def evaluate_dim(dim: Dim, sizes: dict[str, int]) -> int:
    """A dim under a binding of the size names (see ``Size.evaluate``)."""
    if isinstance(dim, int):
        return dim
    if dim in sizes:
        return sizes[dim]
    return Size.of(dim).evaluate(sizes)


def substitute(dim: Dim, binding: dict[str, Dim]) -> Dim:
    """``dim`` with its names replaced by the dims ``binding`` gives them (names it does
    not bind stay): a callee's ``"D/4"`` with ``D -> "E"`` is ``"E/4"``, with ``D -> 64``
    is ``16``. A ``SizeError`` where the result is not a whole number."""
    if isinstance(dim, int):
        return dim
    if dim in binding:
        return binding[dim]
    size = Size.of(dim)
    result = Size(size.factor)
    for name in size.names:
        result = result * Size.of(binding.get(name, name))
    return result.dim


def solve(dim: str, actual: int, sizes: dict[str, int]) -> tuple[str, int] | None:
    """The binding of the one name of ``dim`` that ``sizes`` lacks, from ``dim`` being
    ``actual`` (``"D/4"`` being 8 binds ``D = 32``); None when no single name is unbound
    or no whole size solves it."""
    size = Size.of(dim)
    unbound = [n for n in size.names if n not in sizes]
    if len(unbound) != 1:
        return None
    known = size.factor * prod(sizes[n] for n in size.names if n in sizes)
    value = actual / known
    return (unbound[0], int(value)) if value.denominator == 1 else None


@dataclass(frozen=True)
class Linear:
    """A sum of sizes and an integer: an index along an axis, such as the start of a
    slice (``"D/2"``, ``"N-2"``, ``"3"``) or the last index it reads (``"N-1"``). Terms
    with the same names are added, so ``D - D/2`` is ``D/2``."""

    terms: tuple[Size, ...] = ()  # by names, no zero factors; the integer has no names

    @staticmethod
    def of(value: Dim | Size) -> Linear:
        """The sum a dim, a size or a text like ``"N-2"``, ``"D/2+1"`` spells."""
        if isinstance(value, Size):
            return Linear((value,)) if value.factor else Linear()
        if isinstance(value, int):
            return Linear.of(Size(Fraction(value)))
        result = Linear()
        for sign, term in re.findall(r"([+-]?)\s*([^+-]+)", value.replace(" ", "")):
            size = Size.of(int(term) if term.isdigit() else term)
            result = result + Linear.of(size if sign != "-" else Size(-size.factor, size.names))
        return result

    def __add__(self, other: Linear) -> Linear:
        factors: dict[tuple[str, ...], Fraction] = {}
        for term in (*self.terms, *other.terms):
            factors[term.names] = factors.get(term.names, Fraction(0)) + term.factor
        return Linear(tuple(Size(f, names) for names, f in sorted(factors.items()) if f))

    def __neg__(self) -> Linear:
        return Linear(tuple(Size(-t.factor, t.names) for t in self.terms))

    def __sub__(self, other: Linear) -> Linear:
        return self + -other

    def scaled(self, k: int) -> Linear:
        return Linear(tuple(Size(t.factor * k, t.names) for t in self.terms)) if k else Linear()

    @property
    def constant(self) -> int | None:
        """The integer it is, where it has no names."""
        if not self.terms:
            return 0
        only = self.terms[0]
        return int(only.factor) if len(self.terms) == 1 and not only.names and only.factor.denominator == 1 else None

    @property
    def size(self) -> Size | None:
        """The one size it is (``D - D/2`` is ``D/2``), where it is a single term."""
        if not self.terms:
            return Size(Fraction(0))
        return self.terms[0] if len(self.terms) == 1 else None

    @property
    def text(self) -> str:
        """The canonical spelling: named terms first, then the integer (``"N-2"``)."""
        if not self.terms:
            return "0"
        ordered = sorted(self.terms, key=lambda t: not t.names)
        parts: list[str] = []
        for term in ordered:
            spelled = Size(abs(term.factor), term.names)
            text = str(spelled.factor) if not term.names else str(spelled.dim)
            parts.append(("-" if term.factor < 0 else "+" if parts else "") + text)
        return "".join(parts)

    def substituted(self, binding: dict[str, Dim]) -> Linear:
        """The index with its names replaced by the dims ``binding`` gives them (a
        callee's ``E/2`` with ``E -> "D"`` is ``D/2``), as ``substitute`` does a dim."""
        result = Linear()
        for term in self.terms:
            size = Size(term.factor)
            for name in term.names:
                size = size * Size.of(binding.get(name, name))
            result = result + Linear.of(size)
        return result

    def evaluate(self, sizes: dict[str, int]) -> int:
        """The index under a binding of its names (a ``SizeError`` where a name is
        unbound or the sum is not a whole number)."""
        missing = [n for t in self.terms for n in t.names if n not in sizes]
        if missing:
            raise SizeError(f"size {missing[0]} is not bound by any argument")
        total = sum(t.factor * prod(sizes[n] for n in t.names) for t in self.terms)
        if total.denominator != 1:
            raise SizeError(f"index {self.text} is not a whole number here")
        return int(total)


def index_out_of_range(index: Linear, dim: Dim, sizes: dict[str, int]) -> str | None:
    """Why a slice may not read ``index`` of an axis of size ``dim`` under a binding of
    the sizes, or None where it may (the run-time check of a slice whose bounds are
    symbolic: ``x[:N]`` of an ``f32[M]`` needs ``N <= M``)."""
    value, size = index.evaluate(sizes), evaluate_dim(dim, sizes)
    if 0 <= value < size:
        return None
    names = {n for t in index.terms for n in t.names} | set(Size.of(dim).names)
    bound = ", ".join(f"{n} = {sizes[n]}" for n in sorted(names))
    return f"a slice reads index {index.text} of an axis of size {dim}, out of range with {bound}"
