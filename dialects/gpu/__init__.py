"""The GPU mapping's vocabulary on the loop dialect (``mapping``: the ``gpu.*``
attributes) and the loop nests it recognises (``gemm_nest``, ``attention``). Both the
mapping pass (``passes/cuda``) and the CUDA code generators (``runtime/cuda``) read
them, and neither may import the other, so they live beside the dialects."""
