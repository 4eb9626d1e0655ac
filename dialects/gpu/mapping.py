"""The GPU mapping's attributes: what ``map-gpu`` decides and ``codegen_cuda`` reads.

Kept beside the dialects (not in the pass) because the runtime reads them and imports
no pass. They are plain discardable attributes on ``loop`` ops, so they print in
``--emit tiled`` and a FileCheck test can pin each decision:

    loop.kernel @k0 ... attributes {gpu.schedule = "rows", gpu.threads = 256 : i64, gpu.per_thread = 16 : i64}
    loop.kernel @k1 ... attributes {gpu.schedule = "gemm", gpu.tile_m = 128 : i64, gpu.tile_n = 128 : i64, ...}
    %t = loop.scratch(%n) {gpu.memory = "registers"} : memref<?xf32>
    %v = loop.load %x[%i, %j] {gpu.row_cache} : memref<?x?xf32>
"""

from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.utils.str_enum import StrEnum

SCHEDULE = "gpu.schedule"  # kernel: a Schedule
THREADS = "gpu.threads"  # kernel: threads per block
PER_THREAD = "gpu.per_thread"  # kernel: elements per thread (rows: the register row's limit)
MEMORY = "gpu.memory"  # loop.scratch: "registers" | "global" (per block) | "thread"
ROW_CACHE = "gpu.row_cache"  # loop.load: read once per row into registers
# gemm: the block's tile of the output (rows x columns) and of the reduction, the
# thread's tile of the output (held in registers), and each band loop's role
TILE_M, TILE_N, TILE_K = "gpu.tile_m", "gpu.tile_n", "gpu.tile_k"
THREAD_M, THREAD_N = "gpu.thread_m", "gpu.thread_n"
GEMM_DIM = "gpu.gemm_dim"  # loop.parallel: "batch" | "m" | "n" (dialects.gpu.gemm_nest)
A_ALONG, B_ALONG = "gpu.a_along", "gpu.b_along"  # kernel: the tile index threads read along
MMA = "gpu.mma"  # kernel (gemm, flash): the half type the products run in on tensor cores (MMA_TYPES)
TILE = "gpu.tile"  # kernel (flash): [query rows a block, keys a tile]
#: the factor types tensor cores multiply exactly (into float32 sums), by their ``gpu.mma`` name
MMA_TYPES: dict[type, str] = {Float16Type: "f16", BFloat16Type: "bf16"}
# kernel (flash): the score modification masks every key past the row (a causal mask):
# the key tiles past a block's last row are not visited
CAUSAL = "gpu.causal"


class Schedule(StrEnum):
    """How ``map-gpu`` runs a kernel's loops on the GPU (``passes/cuda/map_gpu.py`` says
    each). Not a fusion group's ``strategy`` (``library`` or ``generated``), which says
    whether a matmul is a library call or a kernel fusec generates."""

    ELEMENTWISE = "elementwise"
    ROWS = "rows"
    THREADS = "threads"
    BLOCK = "block"
    SPLIT = "split"
    GEMM = "gemm"
    FLASH = "flash"
