"""The PyTorch front door (docs/pytorch.md): a `torch.compile` backend that translates the
aten ops of Dynamo's graphs which fusec supports (`aten_table.py`, one declared table) into
`.tdsl` programs (`to_tdsl.py`), leaves the rest to eager through PyTorch's capability-based
partitioner, and runs each compiled part on the inputs' device (`backend.py`). Nothing
here is imported unless PyTorch is used."""
