"""How much work a kernel does on given argument shapes: the scalar ops its loops run.

    count = work_counter(kernel)        # once per kernel
    count([(4, 8), (4, 8)])             # softmax: 4 rows x 8 columns x 9 ops = 288

The executor picks a kernel's serial or parallel variant from this number
(``runtime.cpu.threads``), so it stands for time: every op in a loop body counts one
(a load, an add, a compare), a transcendental function ``TRANSCENDENTAL`` (``exp_f32``
is about that many vector instructions), and a loop its trip count times its body's
count; ops outside loops count once. Bounds are evaluated from ``loop.dim`` of the arguments, index constants and
index arithmetic; an induction variable stands for its loop's lower bound, so a tile
loop bounded by ``min(i + 32, n)`` counts a whole tile. A bound the counter cannot
evaluate (a value loaded from memory) makes the count the elements of the kernel's
arguments instead: the work of one pass over its data.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, BlockArgument, OpResult, SSAValue

from dialects import loop

Shapes = Sequence[tuple[int, ...]]

_INDEX_ARITHMETIC: dict[type, Callable[[int, int], int]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv,
    arith.DivSIOp: lambda a, b: int(a / b),
    arith.FloorDivSIOp: operator.floordiv,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.RemUIOp: operator.mod,
    arith.MinSIOp: min,
    arith.MinUIOp: min,
    arith.MaxSIOp: max,
    arith.MaxUIOp: max,
}

#: what one call of exp, sin, log, ... counts, against one for an add
TRANSCENDENTAL = 8
#: math ops as cheap as an add
_CHEAP_MATH = (mathd.AbsFOp, mathd.AbsIOp, mathd.FloorOp, mathd.CeilOp, mathd.SqrtOp, mathd.RsqrtOp)


class _Unknown(Exception):
    """A loop bound that is not a function of the shapes."""


class _Evaluation:
    """The index values of one kernel under one set of argument shapes."""

    def __init__(self, kernel: loop.KernelOp, shapes: Shapes):
        self.arguments: dict[SSAValue, int] = {arg: k for k, arg in enumerate(kernel.body.block.args)}
        self.shapes = shapes
        self.values: dict[SSAValue, int] = {}

    def value(self, v: SSAValue) -> int:
        if v in self.values:
            return self.values[v]
        result = self._compute(v)
        self.values[v] = result
        return result

    def _compute(self, v: SSAValue) -> int:
        if isinstance(v, BlockArgument):
            owner = v.block.parent_op()
            if isinstance(owner, loop.LoopOp) and v is owner.iv:
                return self.value(owner.lb)  # the first iteration stands for all
            raise _Unknown
        assert isinstance(v, OpResult)  # a value is a block's argument or an op's result
        op = v.owner
        if isinstance(op, loop.DimOp) and op.source in self.arguments:
            return self.shapes[self.arguments[op.source]][op.index.value.data]
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
            return op.value.value.data
        if isinstance(op, arith.IndexCastOp):
            return self.value(op.input)
        function = _INDEX_ARITHMETIC.get(type(op))
        if function is not None:
            return function(self.value(op.operands[0]), self.value(op.operands[1]))
        raise _Unknown

    def block(self, block: Block) -> int:
        """The ops one run of ``block`` executes."""
        total = 0
        for op in block.ops:
            if isinstance(op, loop.LoopOp):
                lb, ub, step = self.value(op.lb), self.value(op.ub), self.value(op.step)
                trips = max(0, -(-(ub - lb) // step)) if step > 0 else 0
                total += trips * self.block(op.body.block)
            elif isinstance(op, loop.YieldOp):
                continue
            elif op.dialect_name() == "math" and not isinstance(op, _CHEAP_MATH):
                total += TRANSCENDENTAL
            else:
                total += 1
        return total


def work_counter(kernel: loop.KernelOp) -> Callable[[Shapes], int]:
    """The function from a kernel's argument shapes to the ops its loops run."""

    def count(shapes: Shapes) -> int:
        try:
            return _Evaluation(kernel, shapes).block(kernel.body.block)
        except (_Unknown, ZeroDivisionError):
            return sum(math.prod(shape) for shape in shapes)

    return count
