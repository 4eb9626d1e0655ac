"""Operator fusion: classify ops, apply fusion rules under a cost model, and turn
each function into ``graph.fusion_group`` kernels (passes ``fuse`` / ``no-fuse``).

- ``classify``: TVM-style op classes (elementwise < broadcast < injective <
  reduction < output-fusable < opaque; constants and dim_size are free);
- ``rules``: the fusion rules as a table, the refusals, the group templates;
- ``patterns``: matchers of pattern rules (attention);
- ``cost``: ``DeviceModel``, bytes/FLOPs per kernel, roofline time, fusion score;
- ``calibration``: the cost model's times corrected by measured ones, by kernel kind;
- ``planner``: the greedy partition and the not-fused reasons;
- ``facts``: what the templates ask of a group (``OpSetFacts``: from its ops);
- ``summary``: what the planner keeps of a group, and the union of two
  (``MergedFacts``) judged from their summaries;
- ``live``, ``depth``: what bounds a kernel: values held at once, chains of ops;
- ``group_dag``, ``siblings``: the groups' graph kept acyclic, sibling candidates;
- ``fuse``: the passes, building the regions;
- ``report``: the fusion report (docs/reference.md, "The fusion report").
"""
