"""A CPU ``flash`` kernel (``passes/cpu/map_cpu.py``) -> Python source for ``numba.njit``:
attention as one work item per (group, block of ``BQ`` query rows), its ``S x S`` scores
never in memory, both products on the register tile of ``runtime/cpu/micro_kernel.py``.

The kernel runs in two parallel phases (``prange``):

1. every group's keys and values are packed, a block of ``BK`` keys at a time, into the
   tile's right-hand panels (``NR`` columns a step, contiguous), each value read through
   its load's index map (a head split or a transpose is index arithmetic, never a copy);
   keys past the end pack as zeros. Packing once per group, not once per block of rows,
   keeps the copies at the size of K and V.
2. an item packs its queries (rows of the tile's left panel), then walks the key blocks
   (under a causal mask, ``dialects.gpu.attention.causal``, only those up to its last
   row): the block's scores by the tile, the score modification of the kernel's IR (a
   scale, a mask, any scalar code of the score, the row, the key and other inputs) per
   score, and the online softmax per row: ``m' = max(m, block max)``,
   ``a = exp(m - m')``, ``p = exp(s - m')``, ``l = l a + sum p``, ``O = O a + p V``
   (the tile again, the probabilities its left panel). Last, ``O / l`` is stored through
   the output's index map.

Each score and each ``p V`` sum adds its products in increasing order with one rounding
each (the tile's fused multiply-adds); a block's maximum and the sum of its ``p`` fold
into lanes (``lane_fold_maximum``, ``lane_fold_sum``: term ``j`` into lane ``j mod L``,
combined pairwise as the CPU's reductions are, docs/reference.md "Numerics"), and the
blocks' sums add in key order. A row whose scores are all ``-inf`` so far skips the
block (``exp(-inf - -inf)`` would be NaN where NumPy, whose maximum is over the whole
row, gets 0), so a row ``-inf`` everywhere ends as ``0 / 0 = NaN`` as NumPy's softmax
written out; NaN and ``+inf`` scores give NaN as there. The same bits on every run and
thread count: items do not depend on the threads.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import Float32Type, Float64Type
from xdsl.ir import SSAValue

from dialects import loop
from dialects.gpu.attention import Attention, causal, match
from runtime.codegen_scalar import CodegenError
from runtime.cpu.codegen import LANE_BYTES, TiledKernelSource, float_bytes

#: query rows of an item (a multiple of every tile's ``MR``: 8 and 6)
BQ = 48
#: keys of a block: its scores (``BQ x BK``) and panels stay in L1 and L2
BK = 256


class CpuFlashSource(TiledKernelSource):
    """The generator of a CPU flash kernel's source."""

    def __init__(self, kernel: loop.KernelOp):
        found = match(kernel)
        if found is None:
            raise CodegenError(f"kernel @{kernel.sym_name.data} is mapped flash but is not attention")
        element_type = found.value_type
        if not isinstance(element_type, Float32Type | Float64Type):
            raise CodegenError(f"kernel @{kernel.sym_name.data}: a CPU flash kernel reads and writes one of f32 or f64")
        super().__init__(kernel, element_type)
        self.a: Attention = found
        self.top: set[SSAValue] = set(kernel.body.block.args)

    def values(self, wanted: Sequence[SSAValue], bound: dict[SSAValue, str], indent: int) -> list[str]:
        """Emits the ops ``wanted`` needs, the loop indices (and the raw score) of
        ``bound`` given by name; returns the names of ``wanted``."""
        self.names.update(bound)
        for op in self.ops_needed(wanted, set(bound) | self.top):
            self.op(op, indent)
        return [self.name(v) for v in wanted]

    def exp(self, x: str) -> str:
        return f"exp_f32({x})" if isinstance(self.float_type, Float32Type) else f"math.exp({x})"

    def groups(self, linear: str, indent: int) -> dict[SSAValue, str]:
        """The group loops' indices at position ``linear`` of their flattened space."""
        return self.bind(self.a.groups, linear, indent) if self.a.groups else {}

    def source(self) -> str:
        a, e = self.a, self.emit
        args = self.buffer_arguments()
        for op in self.kernel.body.block.ops:
            if op is a.band[0]:
                break
            self.op(op, 1)
            self.top.update(op.results)
        dt, mr, nr = self.dtype, self.rows, self.columns
        head, width = a.head_dim, -(-a.value_dim // nr) * nr  # the output's columns up to a whole tile
        zero, minus_inf = (self.const_of(v, self.float_type) for v in (0.0, float("-inf")))
        nrows, nkeys = self.name(a.row.ub), self.name(a.keys.ub)
        groups = self.extent(a.groups)
        e(1, f"kblocks = ({nkeys} + {BK - 1}) // {BK}")
        e(1, f"k_all = np.empty({groups} * kblocks * {BK * head}, dtype={dt})")
        e(1, f"v_all = np.empty({groups} * kblocks * {BK * width}, dtype={dt})")
        # 1. keys and values, packed once per group
        e(1, f"for t_p in prange({groups} * kblocks):")
        e(2, "t_i = np.int64(t_p)")  # a prange index is unsigned: int64 before arithmetic
        e(2, "g_i = t_i // kblocks")
        e(2, f"k_0 = t_i % kblocks * {BK}")
        e(2, f"k_at = t_i * {BK * head}")
        e(2, f"v_at = t_i * {BK * width}")
        group_names = self.groups("g_i", 2)
        e(2, f"for j in range({BK}):")
        e(3, "key = k_0 + j")
        e(3, f"k_c = min(key, {nkeys} - 1)")
        e(3, f"inside = key < {nkeys}")
        e(3, f"for d in range({head}):")
        (k_value,) = self.values([a.k.result], {**group_names, a.keys.iv: "k_c", a.scores.iv: "d"}, 4)
        e(4, f"k_all[k_at + j // {nr} * {head * nr} + d * {nr} + j % {nr}] = {self.choose('inside', k_value, zero)}")
        e(3, f"for c in range({width}):")
        e(4, f"c_c = min(c, {a.value_dim - 1})")
        (v_value,) = self.values([a.v.result], {**group_names, a.pv.iv: "k_c", a.column.iv: "c_c"}, 4)
        e(4, f"v_all[v_at + c // {nr} * {BK * nr} + j * {nr} + c % {nr}] = {self.choose('inside', v_value, zero)}")
        # 2. the items
        e(1, f"rblocks = ({nrows} + {BQ - 1}) // {BQ}")
        e(1, f"for t_p in prange({groups} * rblocks):")
        e(2, "t_i = np.int64(t_p)")
        e(2, "g_i = t_i // rblocks")
        if causal(a):  # the items with the most key blocks first, the short ones fill in behind
            e(2, f"r_0 = (rblocks - 1 - t_i % rblocks) * {BQ}")
        else:
            e(2, f"r_0 = t_i % rblocks * {BQ}")
        e(2, f"rows = min({BQ}, {nrows} - r_0)")
        e(2, f"rows_t = (rows + {mr - 1}) // {mr} * {mr}")
        group_names = self.groups("g_i", 2)
        e(2, f"q_p = np.empty(rows_t * {head}, dtype={dt})")
        e(2, f"s_t = np.empty(rows_t * {BK}, dtype={dt})")
        e(2, f"p_p = np.zeros(rows_t * {BK}, dtype={dt})")
        e(2, f"o_t = np.zeros(rows_t * {width}, dtype={dt})")
        e(2, f"m_r = np.full(rows_t, {minus_inf}, dtype={dt})")
        e(2, f"l_r = np.zeros(rows_t, dtype={dt})")
        e(2, "for i in range(rows_t):")
        e(3, f"r_c = min(r_0 + i, {nrows} - 1)")
        e(3, f"for d in range({head}):")
        (q_value,) = self.values([a.q.result], {**group_names, a.row.iv: "r_c", a.scores.iv: "d"}, 4)
        e(4, f"q_p[i * {head} + d] = {q_value}")
        key_end = f"min({nkeys}, r_0 + rows)" if causal(a) else nkeys
        e(2, f"for k_0 in range(0, {key_end}, {BK}):")
        e(3, f"kk = min({BK}, {key_end} - k_0)")
        e(3, f"b_at = (g_i * kblocks + k_0 // {BK}) * {BK}")
        e(3, "s_t[:] = " + zero)
        e(3, f"for i_t in range(0, rows_t, {mr}):")
        e(4, f"for j_t in range(0, kk, {nr}):")
        e(5, f"micro(q_p, np.int64(i_t * {head}), {head}, k_all, np.int64((b_at + j_t) * {head}), "
             f"s_t, np.int64(i_t * {BK} + j_t), {BK}, {head})")  # fmt: skip
        self.online_softmax(group_names, nkeys, minus_inf, zero)
        e(3, f"for i_t in range(0, rows_t, {mr}):")
        e(4, f"for c_t in range(0, {width}, {nr}):")
        e(5, f"micro(p_p, np.int64(i_t * {BK}), {BK}, v_all, np.int64(b_at * {width} + c_t * {BK}), "
             f"o_t, np.int64(i_t * {width} + c_t), {width}, kk)")  # fmt: skip
        # 3. the outputs
        e(2, "for i in range(rows):")
        e(3, "row = r_0 + i")
        e(3, f"for c in range({a.value_dim}):")
        out = a.out
        indices = self.values(list(out.indices), {**group_names, a.row.iv: "row", a.column.iv: "c"}, 4)
        e(4, f"{self.name(out.buffer)}[{', '.join(indices)}] = o_t[i * {width} + c] / l_r[i]")
        return self.tiled_module(args)

    def online_softmax(self, group_names: dict[SSAValue, str], nkeys: str, minus_inf: str, zero: str) -> None:
        """Per row of the item: the block's modified scores and their maximum, then its
        probabilities (the left panel of ``p V``) and their sum, the row's running
        maximum, sum and outputs rescaled."""
        a, e = self.a, self.emit
        lanes = LANE_BYTES // float_bytes(self.float_type)
        width = -(-a.value_dim // self.columns) * self.columns
        minus_zero = self.const_of(-0.0, self.float_type)
        e(3, f"blocks = (kk + {lanes - 1}) // {lanes}")
        e(3, "for i in range(rows):")
        e(4, "row = r_0 + i")
        e(4, f"m_l = lane_start({minus_inf}, {lanes})")
        e(4, f"m_w = lane_buffer({minus_inf}, {lanes})")
        e(4, "for blk in range(blocks):")
        e(5, f"for k in range({lanes}):")
        e(6, f"j = blk * {lanes} + k")
        e(6, f"k_c = min(k_0 + j, {nkeys} - 1)")
        e(6, f"raw = s_t[i * {BK} + j]")
        bound = {**group_names, a.row.iv: "row", a.logits.iv: "k_c", a.raw.result: "raw"}
        (logit,) = self.values([a.logit], bound, 6)
        e(6, f"x = {self.choose('j < kk', logit, minus_inf)}")
        e(6, f"s_t[i * {BK} + j] = x")
        e(6, "m_w[k] = x")
        e(5, "m_l = lane_fold_maximum(m_l, m_w)")
        e(4, "m_n = fmaximum(m_r[i], lane_maximum(m_l))")
        e(4, f"if m_n != {minus_inf}:")  # NaN is live
        e(5, f"alpha = {self.exp('m_r[i] - m_n')}")
        # the probabilities, then their sum from them: one loop writing both p_p and
        # the lanes' tile ran 2x slower (1.3 against 0.67 ns a score on one core)
        e(5, f"for j in range(blocks * {lanes}):")
        e(6, f"p_p[i * {BK} + j] = {self.exp(f's_t[i * {BK} + j] - m_n')}")
        e(5, f"s_l = lane_start({minus_zero}, {lanes})")
        e(5, f"s_w = lane_buffer({minus_zero}, {lanes})")
        e(5, "for blk in range(blocks):")
        e(6, f"for k in range({lanes}):")
        e(7, f"s_w[k] = p_p[i * {BK} + blk * {lanes} + k]")
        e(6, "s_l = lane_fold_sum(s_l, s_w)")
        e(5, "l_r[i] = l_r[i] * alpha + lane_sum(s_l)")
        e(5, "m_r[i] = m_n")
        e(5, f"for c in range({width}):")
        e(6, f"o_t[i * {width} + c] *= alpha")
        e(4, "else:")  # every score so far -inf: no probability, nothing to rescale
        e(5, f"for j in range({BK}):")
        e(6, f"p_p[i * {BK} + j] = {zero}")


def flash_source(kernel: loop.KernelOp) -> str:
    """The Python source of a CPU flash kernel: a module defining ``kernel``."""
    return CpuFlashSource(kernel).source()
