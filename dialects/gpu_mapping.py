"""The GPU mapping's attributes: what ``map-gpu`` decides and ``codegen_cuda`` reads.

Kept beside the dialects (not in the pass) because the runtime reads them and imports
no pass. They are plain discardable attributes on ``loop`` ops, so they print in
``--emit tiled`` and a FileCheck test can pin each decision:

    loop.kernel @k0 ... attributes {gpu.strategy = "rows", gpu.threads = 256 : i64, gpu.per_thread = 16 : i64}
    %t = loop.scratch(%n) {gpu.memory = "registers"} : memref<?xf32>
    %v = loop.load %x[%i, %j] {gpu.row_cache} : memref<?x?xf32>
"""

from xdsl.utils.str_enum import StrEnum

STRATEGY = "gpu.strategy"  # kernel: a Strategy
THREADS = "gpu.threads"  # kernel: threads per block
PER_THREAD = "gpu.per_thread"  # kernel: elements per thread (rows: the register row's limit)
MEMORY = "gpu.memory"  # loop.scratch: "registers" | "global" (per block) | "thread"
ROW_CACHE = "gpu.row_cache"  # loop.load: read once per row into registers
TILE = "gpu.tile"  # kernel (flash): [query rows a block, keys a tile]


class Strategy(StrEnum):
    ELEMENTWISE = "elementwise"
    ROWS = "rows"
    THREADS = "threads"
    BLOCK = "block"
    SPLIT = "split"
    FLASH = "flash"
