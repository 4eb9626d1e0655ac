"""How many random cases the randomised tests draw: a small share in an ordinary run (CI
included), a campaign with ``FUSEC_CAMPAIGN=1``.

    SEEDS = range(BASE, BASE + cases(50, 2000))

A count set for one test family (``FUSEC_DIFF_COUNT=400``) wins over both.
"""

from __future__ import annotations

import os

#: set to 1 for the long runs: every randomised test draws its campaign count
ENVIRONMENT = "FUSEC_CAMPAIGN"


def campaign() -> bool:
    return os.environ.get(ENVIRONMENT, "").strip().lower() in ("1", "yes", "true", "on")


def cases(ordinary: int, long: int, override: str | None = None) -> int:
    """``ordinary`` cases, ``long`` in a campaign, or the environment variable
    ``override`` where it is set."""
    if override and os.environ.get(override, "").strip():
        return int(os.environ[override])
    return long if campaign() else ordinary
