"""Run under mpiexec: every case x dtype of tests/plain_outputs.py written rank by rank into the .npy
result layout (mpi backend, parallel_write=True), for test_mpi.py to compare with a plain loop.

    write_every_dtype.py FOLDER

Rank 0 prints one JSON line: {"written": [NAME, ...], "errors": {NAME: message}}.
"""
import json
import sys
from pathlib import Path

from mpi4py import MPI

import floydwarp as fw
from floydwarp.errors import FloydwarpError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plain_outputs import CASES, DTYPES, edge_arrays  # noqa: E402

folder = Path(sys.argv[1])
written, errors = [], {}
for case, (n, _) in CASES.items():
    for dtype in DTYPES:
        name = f"{case}-{dtype}"
        try:
            fw.solve(fw.Graph.from_edges(*edge_arrays(case), n=n), backend="mpi", dtype=dtype,
                     output_file=folder / f"{name}.npy", parallel_write=True)
            written.append(name)
        except FloydwarpError as exc:
            errors[name] = str(exc)
if MPI.COMM_WORLD.Get_rank() == 0:
    print(json.dumps({"written": written, "errors": errors}))
