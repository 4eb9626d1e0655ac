"""The values a fusion group stores only to check them: the results of its ops that check
their operands as they run (``graph.checks_at_run_time``: a gather's indices, an
integer power's exponents) that its kernel would not compute whole otherwise.

Every value the program computes is checked, as NumPy evaluates it
(docs/reference.md, "Numerics"): ``p = x ** e; return p[1:]`` fails where ``e[0]`` is
negative, as ``p = np.power(x, e)`` does before the slice is taken, and so does a
power or a gather that nothing reads. A kernel computes a value only where its outputs
need it (``lower-to-loops`` walks back from the stores): the slice's kernel would
compute ``x[1:] ** e[1:]`` alone, and an unused op nothing at all. So such a value
becomes one more output of its group, a buffer its kernel stores whole and nothing
reads: a write of the op's result, paid only by a program with a checking op that is
read in part or not at all. Where the group reads the op's every element on its way to
an output (``gather -> layernorm``, ``x ** e`` summed), nothing changes.

An element is read where the whole of some user's result is computed and that user
reads every element of its operand there, for every binding of the sizes: an
elementwise op, a layout op that moves every element (transpose, reshape, concat, pad,
a slice of whole axes, a flip), a reduction; a broadcast, a matmul and a gather of
indices only where their result has elements whenever the operand has (each size of
the result a positive constant or one of the operand's: ``broadcast`` of ``[D]`` to
``[N, D]`` computes nothing where ``N`` is 0). Any other reader (a slice of part of an
axis, a strided window, a gather from the value) reads it in part.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.ir import Operation, SSAValue

from dialects import graph
from dialects.tensor_types import shape_of

#: users that read every element of each operand wherever their own result is whole
_READ_WHOLE = (
    *graph.ELEMENTWISE.values(),
    graph.CompareOp,
    graph.SelectOp,
    graph.CastOp,
    graph.TransposeOp,
    graph.ReshapeOp,
    graph.ConcatOp,
    graph.PadOp,  # its widths are never negative (graph.PadOp.verify_)
    graph.ReduceOp,
)


def with_checked_values(ops: Sequence[Operation], outputs: Sequence[SSAValue]) -> list[SSAValue]:
    """``outputs`` (a group's, in program order) and the results of the group's checking
    ops that it would not compute whole, in program order; ``ops``: the group's ops in
    program order."""
    checked = {r for op in ops if graph.checks_at_run_time(op) for r in op.results}
    if not checked:
        return list(outputs)
    members = set(ops)
    stored = set(outputs)
    whole: dict[SSAValue, bool] = {}

    def computed_whole(value: SSAValue) -> bool:
        if value not in whole:
            whole[value] = value in stored or any(
                use.operation in members
                and _reads_whole(use.operation, value)
                and computed_whole(use.operation.results[0])
                for use in value.uses
            )
        return whole[value]

    # users come after their producers: deciding the last ops first keeps the recursion shallow
    for op in reversed(ops):
        for r in op.results:
            computed_whole(r)
    return [r for op in ops for r in op.results if r in stored or (r in checked and not whole[r])]


def _reads_whole(user: Operation, value: SSAValue) -> bool:
    """Whether ``user``, computed whole, reads every element of its operand ``value``."""
    if isinstance(user, _READ_WHOLE):
        return True
    if isinstance(user, graph.SliceOp):
        source, target = shape_of(user.input.type), shape_of(user.result.type)
        return all(n == size and abs(step) == 1 for n, size, step in zip(source, target, user.step_values))
    if isinstance(user, graph.BroadcastOp | graph.MatmulOp) or (
        isinstance(user, graph.GatherOp) and value is user.indices and value is not user.input
    ):
        return _has_elements_with(shape_of(user.results[0].type), shape_of(value.type))
    return False


def _has_elements_with(result: Iterable, operand: Sequence) -> bool:
    """Whether a result of shape ``result`` has elements wherever an operand of shape
    ``operand`` has: each of its sizes a positive constant or one of the operand's."""
    return all((isinstance(d, int) and d > 0) or d in operand for d in result)
