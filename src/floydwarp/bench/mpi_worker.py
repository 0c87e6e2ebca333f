"""One MPI job of the scaling study: ``mpiexec -n P python -m floydwarp.bench.mpi_worker --jobs JSON ...``.

Every rank builds the same random graph (same seed), runs one warm-up solve at a
small n (compilation, MPI connections) and then ``--repeats`` timed solves of each
job with ``floydwarp.solve(graph, backend=BACKEND, algorithm=...)``, a barrier before
each.  Rank 0 prints one line per job, ``FLOYDWARP_RECORD {json}``, with the wall
times (the slowest rank's, per repeat), the engine's timings on rank 0 ("compute",
"comm", "gather", ...) as medians, and the communication share comm / compute.

``--backend`` is passed through and ``--devices-per-rank`` kept in the records (the
multi-GPU path will run this worker with its own backend, one or more GPUs per rank; no
engine reads it yet); ``--option KEY=VALUE`` adds any option the backend takes.  A job the
library refuses (a bad algorithm or dtype) becomes a ``skipped`` record on every rank alike;
any other failure aborts the whole MPI job (the launcher records it).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

PREFIX = "FLOYDWARP_RECORD "


def _value(text):
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m floydwarp.bench.mpi_worker", description=__doc__.split("\n")[0])
    p.add_argument("--jobs", required=True, help='JSON list of {"n": N, "algorithm": NAME, "mode": TEXT}')
    p.add_argument("--backend", default="mpi")
    p.add_argument("--dtype", default="int32")
    p.add_argument("--percent", type=float, default=25.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--threads", type=int, default=None, help="CPU threads per rank")
    p.add_argument("--block-size", type=int, default=None)
    p.add_argument("--devices-per-rank", type=int, default=None, help="GPUs per rank (multi-GPU backends)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="backend option (JSON value)")
    p.add_argument("--warmup-n", type=int, default=128)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    from mpi4py import MPI

    import floydwarp as fw
    from floydwarp.errors import FloydwarpError
    from floydwarp.generate import erdos_renyi

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    options = {}
    for item in args.option:
        key, _, value = item.partition("=")
        options[key] = _value(value)
    jobs = json.loads(args.jobs)
    warmed = set()
    for job in jobs:
        n, algorithm = int(job["n"]), job["algorithm"]
        record = {"n": n, "algorithm": algorithm, "mode": job.get("mode"), "ranks": size, "backend": args.backend,
                  "dtype": args.dtype, "threads_per_rank": args.threads, "block_size": args.block_size,
                  "devices_per_rank": args.devices_per_rank, "percent": args.percent, "seed": args.seed,
                  "repeats": args.repeats, "options": options or None, "status": "ok", "note": ""}
        kwargs = dict(backend=args.backend, algorithm=algorithm, dtype=args.dtype, threads=args.threads,
                      block_size=args.block_size, **options)
        try:
            if algorithm not in warmed:
                fw.solve(erdos_renyi(min(n, args.warmup_n), args.percent, seed=args.seed), **kwargs)
                warmed.add(algorithm)
            graph = erdos_renyi(n, args.percent, seed=args.seed)
            walls, stages, meta = [], [], {}
            for _ in range(args.repeats):
                comm.Barrier()
                t0 = time.perf_counter()
                result = fw.solve(graph, **kwargs)
                wall = time.perf_counter() - t0
                slowest = comm.reduce(wall, op=MPI.MAX, root=0)
                if rank == 0:
                    walls.append(slowest)
                    stages.append(dict(result.timings))
                    meta = dict(result.metadata)
                del result
        except FloydwarpError as exc:
            record.update(status="skipped", note=" ".join(str(exc).split()))
            if rank == 0:
                print(PREFIX + json.dumps(record), flush=True)
            continue
        if rank != 0:
            continue
        keys = list(dict.fromkeys(k for s in stages for k in s))
        med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in keys}
        compute = med.get("compute")
        record.update(
            time_s=statistics.median(walls), times_s=walls, stages_s=med, compute_s=compute,
            comm_s=med.get("comm"), gather_s=med.get("gather"),
            comm_share=(med["comm"] / compute) if compute and med.get("comm") is not None else None,
            relaxations_per_s=float(n) ** 3 / compute if compute else None,
            grid=meta.get("grid"), processes=meta.get("processes", size))
        print(PREFIX + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
