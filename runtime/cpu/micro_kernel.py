"""The register-blocked core of the CPU's generated matrix product
(``runtime/cpu/codegen_gemm.py``): ``C[MR, NR] += A[:, MR] x B[:, NR]`` over ``kk``
reduction steps of packed panels, written as LLVM vector IR (a Numba ``intrinsic``).

Numba's own lowering keeps no accumulator tile in registers: an ``MR x NR`` tile in a
NumPy array is loaded and stored at every step (LLVM cannot prove the array apart from
the panels), and ``MR * NR`` scalar accumulators stay scalar (no SLP vectorisation of a
loop-carried chain). Here each row of the tile is ``NR / W`` vectors of ``W`` lanes
held in registers (loop ``phi`` nodes) across the whole reduction: each step loads the
``NR`` values of ``B``'s panel row as vectors, broadcasts each of ``A``'s ``MR`` values,
and adds each product to its accumulator with one rounding (``llvm.fma``, as the BLAS
NumPy calls does). Each accumulator sums its products in increasing ``k``, so the
result is the same bits on every run and every thread count.

Panels (``codegen_gemm``): ``A``'s ``MR`` rows of ``kk`` contiguous values, ``lda``
apart; ``B``'s ``kk`` runs of ``NR`` values; ``C`` a row-major buffer of row length
``ldc``. On an AVX-512 core the f32 tile of 8 x 32 is 16 ``zmm`` accumulators
(measured: 125 GFLOP/s on one core of the CI machine's Xeon, 0.75 of its FMA peak).
"""

from __future__ import annotations

import functools
from typing import Any

#: (rows, columns, lanes of a vector) of the tile by element type, where the core has
#: 512-bit vectors and where it has 256: a tile of half the registers at most (16 of
#: AVX-512's 32, 12 of AVX2's 16), the rest for the panel row and a broadcast
TILES = {
    ("float32", True): (8, 32, 16),
    ("float64", True): (8, 16, 8),
    ("float32", False): (6, 16, 8),
    ("float64", False): (6, 8, 4),
}


@functools.cache
def wide_vectors() -> bool:
    """Whether this machine's cores have 512-bit vectors (AVX-512F)."""
    from llvmlite import binding

    return bool(binding.get_host_cpu_features().get("avx512f", False))


def tile(dtype: str) -> tuple[int, int, int]:
    """``(MR, NR, W)`` of ``dtype``'s tile on this machine."""
    return TILES[(dtype, wide_vectors())]


@functools.cache
def micro_kernel(dtype: str, rows: int, columns: int, lanes: int) -> Any:
    """The intrinsic ``micro(a, a_at, lda, b, b_at, c, c_at, ldc, kk)`` of a ``rows x
    columns`` tile of ``dtype`` in vectors of ``lanes`` (``tile``; the kernel's source
    names them, so that it alone says what it computes): ``A``'s rows start at flat
    element ``a_at`` of ``a``, ``lda`` apart, ``B``'s panel at ``b_at`` of ``b``, the
    tile at flat element ``c_at`` of ``c``."""
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    element = ir.FloatType() if dtype == "float32" else ir.DoubleType()
    vector = ir.VectorType(element, lanes)
    align = 4 if dtype == "float32" else 8  # the element's: the panels are not vector-aligned
    per_row = columns // lanes
    i64 = ir.IntType(64)

    def constant(n: int) -> Any:
        return ir.Constant(i64, n)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        a, a_at, lda, b, b_at, c, c_at, ldc, kk = args

        def start(array: Any, array_type: Any, at: Any) -> Any:
            return builder.gep(context.make_array(array_type)(context, builder, array).data, [at])

        a_ptr, b_ptr, c_ptr = (
            start(x, t, at) for x, t, at in zip((a, b, c), (signature.args[i] for i in (0, 3, 5)), (a_at, b_at, c_at))
        )

        def vector_at(base: Any, offset: Any) -> Any:
            return builder.bitcast(builder.gep(base, [offset]), vector.as_pointer())

        tile_at = [
            [builder.add(builder.mul(ldc, constant(r)), constant(v * lanes)) for v in range(per_row)]
            for r in range(rows)
        ]
        initial = [
            [builder.load(vector_at(c_ptr, tile_at[r][v]), align=align) for v in range(per_row)] for r in range(rows)
        ]
        entry = builder.block
        body = builder.function.append_basic_block("micro.step")
        done = builder.function.append_basic_block("micro.done")
        builder.cbranch(builder.icmp_signed(">", kk, constant(0)), body, done)

        builder.position_at_end(body)
        k = builder.phi(i64)
        accumulators = [[builder.phi(vector) for _ in range(per_row)] for _ in range(rows)]
        b_row = builder.gep(b_ptr, [builder.mul(k, constant(columns))])
        b_values = [builder.load(vector_at(b_row, constant(v * lanes)), align=align) for v in range(per_row)]
        a_rows = [builder.gep(a_ptr, [builder.mul(lda, constant(r))]) for r in range(rows)]
        fma = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(vector, [vector] * 3),
            f"llvm.fma.v{lanes}{'f32' if dtype == 'float32' else 'f64'}",
        )
        undefined = ir.Constant(vector, ir.Undefined)
        splat = ir.Constant(ir.VectorType(ir.IntType(32), lanes), [0] * lanes)
        updated = []
        for r in range(rows):
            value = builder.load(builder.gep(a_rows[r], [k]))
            broadcast = builder.shuffle_vector(
                builder.insert_element(undefined, value, ir.Constant(ir.IntType(32), 0)), undefined, splat
            )
            updated.append([builder.call(fma, [broadcast, b_values[v], accumulators[r][v]]) for v in range(per_row)])
        following = builder.add(k, constant(1))
        k.add_incoming(constant(0), entry)
        k.add_incoming(following, body)
        for r in range(rows):
            for v in range(per_row):
                accumulators[r][v].add_incoming(initial[r][v], entry)
                accumulators[r][v].add_incoming(updated[r][v], body)
        builder.cbranch(builder.icmp_signed("<", following, kk), body, done)

        builder.position_at_end(done)
        final = []
        for r in range(rows):
            for v in range(per_row):
                phi = builder.phi(vector)
                phi.add_incoming(initial[r][v], entry)
                phi.add_incoming(updated[r][v], body)
                final.append((r, v, phi))
        for r, v, phi in final:  # phi nodes first in their block, then the stores
            builder.store(phi, vector_at(c_ptr, tile_at[r][v]), align=align)
        return context.get_dummy_value()

    def typer(
        typingctx: Any, a: Any, a_at: Any, lda: Any, b: Any, b_at: Any, c: Any, c_at: Any, ldc: Any, kk: Any
    ) -> Any:
        return types.void(a, a_at, lda, b, b_at, c, c_at, ldc, kk), codegen

    typer.__name__ = f"micro_{dtype}"
    return intrinsic(typer)
