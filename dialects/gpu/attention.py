"""The attention pattern of a ``loop.kernel``, read from its loops, and the tiles of a
flash kernel: what ``map-gpu`` checks before choosing the ``flash`` schedule, and
what ``runtime.cuda.codegen_flash`` generates the kernel from. Beside the dialects because
both a pass and the runtime read it (imports run ``passes -> dialects <- runtime``).

``lower-to-loops`` writes an attention group as one row of scores per point of an
outer parallel band (a query row of one batch and head):

    loop.parallel %b, %h, %i {                                            (the band)
      loop.parallel %t = 0 to %keys { %s = reduce add %d { q[..] * k[..] }; store %s, S[%t] }
      %m = loop.reduce max %j { f(load S[%j]) }            (f: the score modification)
      loop.parallel %t { store exp(f(load S[%t]) - %m), E[%t] }
      %l = loop.reduce add %j { load E[%j] }
      loop.parallel %t { store load E[%t] / %l, P[%t] }                    (rounded to P's half float, if any)
      loop.parallel %c = 0 to Dv { %o = reduce add %j { P[%j] * v[..] }; store %o, out[..] }
    }

The last nest may instead be the reduction alone, its column a loop of the band.
``match`` finds these pieces and gives each band loop a role from the indices that
use it: the *row* (read by q, not by k or v), the *column* (read only by v and the
output), the *groups* (the rest: batch and head). ``f`` is any scalar code of the
raw score, the key index ``%j``, the band's indices and loads of other inputs (a
scale, a mask through ``where``): the flash kernel applies it to each score as
FlexAttention's ``score_mod`` does.

``causal`` reads from ``f`` whether it masks every key past the row (so a flash block
can stop at its last row's key tile), and ``MmaTiles`` are the tiles of the kernel on
tensor cores (``runtime.cuda.codegen_flash_mma``) when q, k and v are half.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

from dialects import loop


@dataclass
class Attention:
    """The pieces of an attention kernel (see the module docstring)."""

    band: list[loop.ParallelOp]
    row: loop.ParallelOp
    column: loop.ParallelOp  # the PV nest's loop, or a loop of the band
    groups: list[loop.ParallelOp]  # the band's other loops, outermost first
    keys: loop.ParallelOp  # the raw scores' loop: its index is the key's
    scores: loop.ReduceOp  # q . k over the head dimension
    q: loop.LoadOp
    k: loop.LoadOp
    logits: loop.ReduceOp  # the row max: its body holds the score modification
    raw: loop.LoadOp  # in ``logits``: the raw score
    pv: loop.ReduceOp
    v: loop.LoadOp
    out: loop.StoreOp
    head_dim: int
    value_dim: int

    @property
    def value_type(self) -> Attribute | None:
        """The element type queries, keys, values and the output share, None where they
        differ."""
        types = {v.type for v in (self.q.result, self.k.result, self.v.result, self.out.value)}
        return next(iter(types)) if len(types) == 1 else None

    @property
    def modification(self) -> list[Operation]:
        """The ops of the score modification, the raw score's load first."""
        return [o for o in self.logits.body.block.ops if not isinstance(o, loop.YieldOp)]

    @property
    def logit(self) -> SSAValue:
        """The modified score (what the softmax sees)."""
        terminator = self.logits.body.block.last_op
        assert isinstance(terminator, loop.YieldOp)
        return terminator.values[0]


# ---------------------------------------------------------------------------
# Small facts about values


def constant_value(value: SSAValue) -> int | float | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr | FloatAttr):
        return owner.value.value.data
    return None


def _unit(l: Operation, ub: SSAValue | None = None) -> bool:
    """Whether loop ``l`` runs from 0 by 1 (to ``ub`` when given)."""
    lb, upper, step = l.operands[:3]
    return constant_value(lb) == 0 and constant_value(step) == 1 and (ub is None or upper is ub)


def ivs_of(value: SSAValue, memo: dict[SSAValue, frozenset[SSAValue]] | None = None) -> frozenset[SSAValue]:
    """The loop indices ``value`` is computed from (through any op, loads included)."""
    memo = {} if memo is None else memo
    if value in memo:
        return memo[value]
    if isinstance(value, BlockArgument):
        parent = value.block.parent_op()
        found: frozenset[SSAValue] = frozenset([value]) if isinstance(parent, loop.LoopOp) else frozenset()
    else:
        assert isinstance(value, OpResult)  # a value is a block's argument or an op's result
        found = frozenset()
        for operand in value.owner.operands:
            found |= ivs_of(operand, memo)
    memo[value] = found
    return found


def _loops(block: Block) -> list[Operation]:
    return [o for o in block.ops if isinstance(o, loop.LoopOp)]


def _effects(block: Block) -> list[Operation]:
    """The ops of ``block`` other than pure scalar code and its terminator."""
    return [o for o in block.ops if o.regions or isinstance(o, loop.LoadOp | loop.StoreOp | loop.ScratchOp)]


def _is_zero(value: SSAValue) -> bool:
    return constant_value(value) == 0


def _is_minus_inf(value: SSAValue) -> bool:
    return constant_value(value) == float("-inf")


def _yielded(body: Block) -> SSAValue | None:
    terminator = body.last_op
    if isinstance(terminator, loop.YieldOp) and len(terminator.values) == 1:
        return terminator.values[0]
    return None


def band_of(outer: loop.ParallelOp) -> list[loop.ParallelOp]:
    """``outer`` and the parallel loops perfectly nested in it (index code aside)."""
    band = [outer]
    while True:
        inner = _loops(band[-1].body.block)
        effects = _effects(band[-1].body.block)
        if len(inner) != 1 or not isinstance(inner[0], loop.ParallelOp) or effects != inner:
            return band
        band.append(inner[0])


# ---------------------------------------------------------------------------
# The pieces


def _product(reduce: loop.ReduceOp, keys: SSAValue | None) -> tuple[loop.LoadOp, loop.LoadOp] | None:
    """``reduce add %j from 0 { load a[..] * load b[..] }`` -> the two loads."""
    if reduce.combiner_kinds != (loop.Combiner.ADD,):
        return None
    if not _is_zero(reduce.inits[0]) or not _unit(reduce) or (keys is not None and reduce.ub is not keys):
        return None
    value = _yielded(reduce.body.block)
    ops = [o for o in reduce.body.block.ops if not isinstance(o, loop.YieldOp)]
    loads = [o for o in ops if isinstance(o, loop.LoadOp)]
    if value is None or not isinstance(value.owner, arith.MulfOp) or len(loads) != 2 or _effects(reduce.body.block) != loads:
        return None
    if {value.owner.lhs.owner, value.owner.rhs.owner} != set(loads):
        return None
    return loads[0], loads[1]


def _stored(op: Operation, value: SSAValue, iv: SSAValue) -> SSAValue | None:
    """The temporary ``op`` stores ``value`` into at ``[iv]``, or None."""
    if isinstance(op, loop.StoreOp) and op.value is value and list(op.indices) == [iv] and isinstance(op.buffer.owner, loop.ScratchOp):
        return op.buffer
    return None


def _loads_at(op: Operation, buffer: SSAValue, iv: SSAValue) -> bool:
    return isinstance(op, loop.LoadOp) and op.buffer is buffer and list(op.indices) == [iv]


def _same_code(a: list[Operation], b: list[Operation], mapping: dict[SSAValue, SSAValue]) -> bool:
    """Whether two op lists compute the same thing, ``mapping`` pairing values of ``a``
    with values of ``b`` (extended as the lists are compared)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if type(x) is not type(y) or x.regions or y.regions or len(x.operands) != len(y.operands):
            return False
        if x.properties != y.properties or [r.type for r in x.results] != [r.type for r in y.results]:
            return False
        if any(mapping.get(p, p) is not q for p, q in zip(x.operands, y.operands)):
            return False
        mapping.update(zip(x.results, y.results))
    return True


def match(kernel: loop.KernelOp) -> Attention | None:
    """The kernel's attention pieces, or None where its loops are not of that form."""
    top = _loops(kernel.body.block)
    if len(top) != 1 or not isinstance(top[0], loop.ParallelOp) or _effects(kernel.body.block) != top:
        return None
    band = band_of(top[0])
    row_block = band[-1].body.block
    nests = _loops(row_block)
    if len(nests) != 6 or not all(_unit(l) for l in band):
        return None
    keys, logits, exps, total, probs, last = nests
    if not isinstance(keys, loop.ParallelOp) or not _unit(keys):
        return None
    n = keys.ub
    # the raw scores: S[t] = sum_d q[..] * k[..]
    key_body = _effects(keys.body.block)
    if len(key_body) != 2:
        return None
    scores, store = key_body
    if not isinstance(scores, loop.ReduceOp):
        return None
    pair = _product(scores, None)
    if pair is None or constant_value(scores.ub) is None:
        return None
    raw_scores = _stored(store, scores.res[0], keys.iv)
    if raw_scores is None:
        return None
    q, k = pair if keys.iv not in ivs_of(pair[0].result) else pair[::-1]
    # the row max of f(S[j]), f the score modification
    if not isinstance(logits, loop.ReduceOp) or logits.combiner_kinds != (loop.Combiner.MAX,):
        return None
    logit = _yielded(logits.body.block)
    if not _unit(logits, n) or not _is_minus_inf(logits.inits[0]) or logit is None:
        return None
    modification = [o for o in logits.body.block.ops if not isinstance(o, loop.YieldOp)]
    raws = [o for o in modification if isinstance(o, loop.LoadOp) and isinstance(o.buffer.owner, loop.ScratchOp)]
    if len(raws) != 1 or not _loads_at(raws[0], raw_scores, logits.iv) or modification[0] is not raws[0]:
        return None
    if any(o.regions or isinstance(o, loop.StoreOp | loop.ScratchOp) for o in modification):
        return None
    # E[t] = exp(f(S[t]) - m): the same f
    if not isinstance(exps, loop.ParallelOp) or not _unit(exps, n):
        return None
    exp_ops = [o for o in exps.body.block.ops if not isinstance(o, loop.YieldOp)]
    mapping: dict[SSAValue, SSAValue] = {logits.iv: exps.iv}
    if len(exp_ops) != len(modification) + 3 or not _same_code(modification, exp_ops[: len(modification)], mapping):
        return None
    sub, exp, store = exp_ops[len(modification) :]
    if not (isinstance(sub, arith.SubfOp) and sub.lhs is mapping.get(logit) and sub.rhs is logits.res[0]):
        return None
    if not isinstance(exp, mathd.ExpOp) or exp.operand is not sub.result:
        return None
    exponentials = _stored(store, exp.result, exps.iv)
    # l = sum_j E[j]; P[t] = E[t] / l
    if exponentials is None or not isinstance(total, loop.ReduceOp) or total.combiner_kinds != (loop.Combiner.ADD,):
        return None
    total_ops = [o for o in total.body.block.ops if not isinstance(o, loop.YieldOp)]
    if not _unit(total, n) or not _is_zero(total.inits[0]) or len(total_ops) != 1:
        return None
    if not _loads_at(total_ops[0], exponentials, total.iv) or _yielded(total.body.block) is not total_ops[0].results[0]:
        return None
    if not isinstance(probs, loop.ParallelOp) or not _unit(probs, n):
        return None
    prob_ops = [o for o in probs.body.block.ops if not isinstance(o, loop.YieldOp)]
    if len(prob_ops) not in (3, 4) or not _loads_at(prob_ops[0], exponentials, probs.iv):
        return None
    div = prob_ops[1]
    if not (isinstance(div, arith.DivfOp) and div.lhs is prob_ops[0].results[0] and div.rhs is total.res[0]):
        return None
    probability = div.result
    if len(prob_ops) == 4:  # a half-float softmax, computed in f32, rounds its result once
        rounded = prob_ops[2]
        if not (isinstance(rounded, arith.TruncFOp) and rounded.input is probability):
            return None
        probability = rounded.result
    probabilities = _stored(prob_ops[-1], probability, probs.iv)
    if probabilities is None:
        return None
    # out[..] = sum_j P[j] * v[.., j, c]
    out: Operation | None
    if isinstance(last, loop.ParallelOp):
        column: loop.ParallelOp | None = last
        inner = _effects(last.body.block)
        if len(inner) != 2 or not _unit(last) or constant_value(last.ub) is None:
            return None
        pv, out = inner
    else:
        column = None
        ops = list(row_block.ops)
        pv = last
        out = ops[ops.index(last) + 1] if ops.index(last) + 1 < len(ops) else None
    if not isinstance(pv, loop.ReduceOp):
        return None
    pair = _product(pv, n)
    if pair is None or not isinstance(out, loop.StoreOp) or out.value is not pv.res[0]:
        return None
    effects = [o for o in _effects(row_block) if not isinstance(o, loop.ScratchOp)]
    if effects != (nests if column is not None else [*nests, out]):
        return None
    p, v = pair if _loads_at(pair[0], probabilities, pv.iv) else pair[::-1]
    if not _loads_at(p, probabilities, pv.iv) or isinstance(v.buffer.owner, loop.ScratchOp):
        return None
    return _with_roles(kernel, band, column, keys, scores, q, k, logits, raws[0], pv, v, out)


def _with_roles(kernel, band, column, keys, scores, q, k, logits, raw, pv, v, out) -> Attention | None:
    """The pieces with a role for each band loop, or None where the roles are not those
    of attention (or the buffers are not what a flash kernel reads and writes)."""
    memo: dict[SSAValue, frozenset[SSAValue]] = {}

    def uses(*values: SSAValue) -> frozenset[SSAValue]:
        found: frozenset[SSAValue] = frozenset()
        for value in values:
            found |= ivs_of(value, memo)
        return found

    reads_q, reads_k, reads_v = uses(*q.indices), uses(*k.indices), uses(*v.indices)
    terminator = logits.body.block.last_op
    assert isinstance(terminator, loop.YieldOp)
    reads_f = uses(terminator.values[0])
    reads_out = uses(*out.indices)
    ivs = {l.iv: l for l in band}
    if column is None:
        columns = [l for l in band if l.iv not in reads_q | reads_k | reads_f and l.iv in reads_v]
        if len(columns) != 1 or constant_value(columns[0].ub) is None:
            return None
        column = columns[0]
    rows = [l for l in band if l.iv in reads_q and l.iv not in reads_k | reads_v and l is not column]
    if len(rows) != 1:
        return None
    row = rows[0]
    if column.iv in reads_q | reads_k | reads_f or not {row.iv, column.iv} <= reads_out:
        return None
    # a key tile and a value tile serve every row of a block, every column of a row
    if row.iv in reads_k | reads_v or keys.iv not in reads_k or pv.iv not in reads_v:
        return None
    if not reads_q | reads_k | reads_v | reads_f | reads_out <= {*ivs, column.iv, keys.iv, scores.iv, logits.iv, pv.iv}:
        return None
    # bounds of the band known before its first loop (the grid is made from them)
    if any(l.ub.owner.parent_block() is not kernel.body.block for l in band if isinstance(l.ub.owner, Operation)):
        return None
    inputs = set(kernel.inputs)
    loads = [q, k, v, *[o for o in logits.body.block.ops if isinstance(o, loop.LoadOp)][1:]]
    if not all(o.buffer in inputs for o in loads) or out.buffer in inputs:
        return None
    groups = [l for l in band if l is not row and l is not column]
    head_dim, value_dim = constant_value(scores.ub), constant_value(column.ub)
    assert isinstance(head_dim, int) and isinstance(value_dim, int)
    return Attention(band, row, column, groups, keys, scores, q, k, logits, raw, pv, v, out, head_dim, value_dim)


# ---------------------------------------------------------------------------
# A causal mask


#: ``arith.cmpi`` predicates of ``lhs >= rhs`` and ``lhs > rhs`` (signed, unsigned), and
#: of ``lhs <= rhs`` and ``lhs < rhs``
_AT_LEAST = {"sge", "sgt", "uge", "ugt"}
_AT_MOST = {"sle", "slt", "ule", "ult"}


def _index_of(value: SSAValue) -> SSAValue:
    """``value`` with an ``index_cast`` to a 64-bit integer looked through (exact for an
    index, which is below 2**63)."""
    owner = value.owner
    if isinstance(owner, arith.IndexCastOp) and isinstance(owner.result.type, IntegerType) and owner.result.type.width.data == 64:
        return owner.input
    return value


def causal(attention: Attention) -> bool:
    """Whether the score modification is ``where(row >= key, s, -inf)`` (``>`` too, either
    side, signed or not; widened to f32 or not): the modified score of every key past the row is ``-inf``, so a
    key tile whose first key is past a block's last row holds ``-inf`` only and the flash
    kernel need not visit it (such a tile changes no row's maximum, sum nor output)."""
    select = attention.logit.owner
    if isinstance(select, arith.ExtFOp):  # a half-float score widened for its softmax: -inf stays -inf
        select = select.input.owner
    if not isinstance(select, arith.SelectOp) or not _is_minus_inf(select.rhs):
        return False
    compare = select.cond.owner
    if not isinstance(compare, arith.CmpiOp):
        return False
    lhs, rhs = _index_of(compare.lhs), _index_of(compare.rhs)
    if not all(isinstance(v.type, IndexType) for v in (lhs, rhs)):
        return False
    predicate = arith.CMPI_COMPARISON_OPERATIONS[compare.predicate.value.data]
    row, key = attention.row.iv, attention.logits.iv
    return (lhs is row and rhs is key and predicate in _AT_LEAST) or (lhs is key and rhs is row and predicate in _AT_MOST)


# ---------------------------------------------------------------------------
# Tiles


#: static shared memory a block may have (numba-cuda cannot opt in above it)
SHARED_BYTES = 48 * 1024


@dataclass(frozen=True)
class FlashTiles:
    """How a flash block divides its work: ``rows`` query rows a block, ``keys`` keys a
    tile, each thread ``per_row`` consecutive rows by
    ``threads_across`` of the columns of the scores and of the output (``owned``)."""

    rows: int  # BQ
    keys: int  # BK
    per_row: int  # RM: rows per thread
    threads_across: int  # TC: threads sharing a row
    head_dim: int
    value_dim: int

    @property
    def row_groups(self) -> int:
        return self.rows // self.per_row

    @property
    def threads(self) -> int:
        return self.row_groups * self.threads_across

    @property
    def key_columns(self) -> int:  # CN: score columns per thread
        return self.keys // self.threads_across

    @property
    def value_columns(self) -> int:  # DN: output columns per thread
        return self.value_dim // self.threads_across

    @property
    def vector(self) -> int:
        """Elements a thread reads at once from shared memory (4: ``ld.shared.v4``)
        where its rows, keys and columns come in fours, else 1."""
        return 4 if self.per_row % 4 == 0 and self.key_columns % 4 == 0 and self.value_columns % 4 == 0 else 1

    def owned(self, n: int) -> list[str]:
        """The key (or output column) offsets a thread owns, ``n`` of them, as source in
        ``tx``: runs of ``vector`` consecutive ones, the ``TC`` threads of a row side by
        side, so a row's threads read one contiguous stretch."""
        width, across = self.vector, self.threads_across
        return [f"tx * {width} + {(u // width) * across * width + u % width}" for u in range(n)]

    # shared arrays (float32): q as [d][row], k as [d][key], v as [key][column], p as
    # [key][row], then the row partials; the strides are multiples of 4 (aligned vector
    # loads) and 4 more than the extent (transposed stores spread over banks)
    @property
    def q_stride(self) -> int:
        return self.rows + 4

    @property
    def k_stride(self) -> int:
        return self.keys + 4

    @property
    def v_stride(self) -> int:
        return self.value_dim + 4

    @property
    def p_stride(self) -> int:
        return self.rows + 4

    def shared_words(self, partials: bool = True) -> int:
        """Words of shared memory, with the row partials (the simulator's row
        reductions; a GPU's go through warp shuffles) or without."""
        return (
            self.head_dim * self.q_stride
            + self.head_dim * self.k_stride
            + self.keys * self.v_stride
            + self.keys * self.p_stride
            + (self.rows * self.threads_across if partials else 0)
        )

    def valid(self) -> bool:
        return (
            self.rows % self.per_row == 0
            and self.keys % self.threads_across == 0
            and self.value_dim % self.threads_across == 0
            and 32 % self.threads_across == 0
            and self.threads % 32 == 0
            and self.shared_words() * 4 <= SHARED_BYTES
        )


#: (rows, keys, rows per thread) tried in order, 8 threads across a row where the
#: value dimension allows: 8 x 8 register tiles of scores and outputs where they fit
#: (4 multiply-adds per shared load), smaller for wider heads
CANDIDATES = [(64, 64, 8), (64, 32, 8), (64, 32, 4), (32, 32, 4), (32, 16, 4), (32, 16, 2), (16, 8, 2), (8, 8, 1)]


def choose_tiles(head_dim: int, value_dim: int) -> FlashTiles | None:
    """The first candidate that fits, with at most 32 outputs a thread; None if none."""
    for across in (8, 4, 2, 1):
        if value_dim % across:
            continue
        for rows, keys, per_row in CANDIDATES:
            tiles = FlashTiles(rows, keys, per_row, across, head_dim, value_dim)
            if tiles.valid() and per_row * tiles.value_columns <= 64:
                return tiles
    return None


# ---------------------------------------------------------------------------
# Tiles on tensor cores


#: rows of an ``mma.m16n8k16`` (a warp's query rows) and its reduction steps
MMA_ROWS, MMA_STEPS = 16, 16
#: halves added to each shared row: the 8 rows of 16 bytes one ``ldmatrix`` reads fall in
#: different banks
MMA_PAD = 8
#: the widest head (and value) dimension on tensor cores: a thread holds ``head_dim / 4``
#: registers of q's fragments and ``value_dim / 2`` accumulators of the output
MMA_MAX_DIM = 128


@dataclass(frozen=True)
class MmaTiles:
    """The tiles of a flash kernel on tensor cores: ``rows`` query rows a block, 16 a warp,
    ``keys`` keys a tile; the shared tiles are half, row-major (q ``[row][d]``, two of k
    ``[key][d]`` and two of v ``[key][column]``: one being read, the next being copied),
    their rows padded by ``MMA_PAD``. The simulator's twin adds a tile of probabilities
    and row partials (the simulator has no shared-memory limit)."""

    rows: int  # BQ
    keys: int  # BK
    head_dim: int
    value_dim: int

    @property
    def warps(self) -> int:
        return self.rows // MMA_ROWS

    @property
    def threads(self) -> int:
        return 32 * self.warps

    @property
    def q_stride(self) -> int:
        return self.head_dim + MMA_PAD

    @property
    def k_stride(self) -> int:
        return self.head_dim + MMA_PAD

    @property
    def v_stride(self) -> int:
        return self.value_dim + MMA_PAD

    @property
    def p_stride(self) -> int:
        return self.keys + MMA_PAD

    def shared_bytes(self) -> int:
        """Bytes of shared memory of the kernel on a GPU."""
        return 2 * (self.rows * self.q_stride + 2 * self.keys * (self.k_stride + self.v_stride))

    def valid(self) -> bool:
        return (
            self.rows % MMA_ROWS == 0
            and self.keys % MMA_STEPS == 0
            and self.head_dim % MMA_STEPS == 0
            and self.value_dim % MMA_STEPS == 0
            and max(self.head_dim, self.value_dim) <= MMA_MAX_DIM
            and self.shared_bytes() <= SHARED_BYTES
        )


#: a block of 4 warps (64 query rows), keys tried in this order
MMA_BLOCK_ROWS = 64
MMA_KEYS = (64, 32, 16)


def choose_mma_tiles(head_dim: int, value_dim: int) -> MmaTiles | None:
    """The widest key tile that fits on tensor cores; None if none does."""
    for keys in MMA_KEYS:
        tiles = MmaTiles(MMA_BLOCK_ROWS, keys, head_dim, value_dim)
        if tiles.valid():
            return tiles
    return None
