"""The adversarial campaign: cases of ten kinds that try to make fusec give a wrong
result, a traceback, a crash, a hang, a clobbered file or different bits on two runs.

    python -m tests.adversarial --kinds all --seed S [--scale K] [--jobs J] [--save DIR]

`--scale 1` runs each kind's full count (at least the counts of issue 46's campaign:
3,472 programs, 438 on the CUDA simulator, 340 conv/pool chains, 7,200 mutated
sources, 3,000 mutated IR files, 105 bad-file cases, 121 API misuses on two targets
(242 cases), 87 PyTorch checks, 38 cache faults, 24 programs x 8 determinism modes); `--scale 0.05` is a smoke
run. `--only I` reruns case I of one kind with its details; each failure group's
reproducer is saved under `--save`. Exit status 1 when anything failed.

- `campaign.py`: the command line, the table, the reproducers on disk;
- `pool.py`, `worker.py`: worker processes, a time limit per case, crashes and hangs;
- `outcome.py`: the classes of failure, a failure and its reproducer;
- `gen.py`: the random programs with their own NumPy evaluation; `compare.py` the
  documented tolerances; `reproducer.py` the scripts and archives a failure saves;
  `bits.py` one run of the determinism kind;
- `kinds/`: one module per kind (their docstrings say what each tries and its contract);
- `test_adversarial.py`: a small share of each kind under pytest.
"""
