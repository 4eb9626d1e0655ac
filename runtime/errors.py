"""The exceptions fusec raises for a bad program, bad inputs or a failed run: one family.

Every error the API raises for these derives from `FusecError`, so a caller needs one
`except fusec.FusecError`; the subclasses say which of the three it was (docs/reference.md,
"The Python API"). The program errors, which carry diagnostics against a source file, are
`compiler.frontend.diagnostics.SourceError`. The family is defined here, in the runtime,
because the runtime raises it too and must not import the compiler, and the front end
imports it as the one module of the runtime it may (docs/architecture.md, "What may
import what").
"""

from __future__ import annotations


class FusecError(Exception):
    """The base of every error fusec reports to its user (as opposed to a bug of fusec)."""


class InputError(FusecError):
    """A bad input: a missing, misshapen or mistyped argument, an unreadable file, a
    function or option the program does not have. The command reports it as one line and
    exits with status 1."""


class ExecutionError(FusecError):
    """A run that failed on its arguments: sizes that disagree inside the program, an
    operation NumPy refuses, buffers that cannot be allocated."""


class IndexOutOfRangeError(ExecutionError, IndexError):
    """An index read from the data (a ``gather``'s) outside its axis: the kernel that met
    it recorded it instead of loading out of bounds, and the host raises it once the
    kernel has finished."""


class NegativePowerError(ExecutionError, ValueError):
    """An integer raised to a negative integer power, which NumPy refuses: the kernel that
    met it recorded it, and the host raises it once the kernel has finished."""


def recorded_error(kernel: str, checks: tuple[tuple[str, str], ...], record) -> ExecutionError:
    """The error a kernel's error record (check number + 1, value, size) describes,
    ``checks`` giving each of its checks' kind and what it checks, in order
    (``dialects.loop.check_descriptions``)."""
    number, value, size = (int(v) for v in record[:3])
    kind, what = checks[number - 1]
    if kind == "exponent":
        return NegativePowerError(
            f"{what}: integers to negative integer powers are not allowed (exponent {value}, kernel {kernel})"
        )
    return IndexOutOfRangeError(
        f"{what}: index {value} is out of range for an axis of size {size} (kernel {kernel})"
    )
