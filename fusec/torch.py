"""fusec's PyTorch door (docs/pytorch.md).

    import torch
    compiled = torch.compile(model, backend="fusec")   # registered: no import needed
    with torch.no_grad():
        y = compiled(x)
    print(fusec.torch.explain(model, x))              # what ran in fusec, as .tdsl

Needs PyTorch (`pip install fusec[torch]`)."""

try:
    import torch  # noqa: F401 (the import is the check)
except ImportError:
    raise ImportError("fusec.torch needs PyTorch: pip install 'fusec[torch]' (or torch itself)") from None

from compiler.pytorch.backend import Report, backend, explain

__all__ = ["Report", "backend", "explain"]
