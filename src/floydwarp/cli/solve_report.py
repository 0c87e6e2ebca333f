"""What ``floydwarp solve`` prints besides the timings: negative cycles, ``--check``'s verdict
and checksum, ``-V``'s matrix."""
from __future__ import annotations

import click
import numpy as np

from .app import progress_wanted

#: --check recomputes with the reference backend up to this n, with the cpu backend above it.
CHECK_REFERENCE_MAX_N = 3000
#: -V prints the whole matrix up to this n, else its corners.
PRINT_FULL_MAX_N = 12
PRINT_EDGE = 4
MAX_LISTED = 10


def describe_cycles(result) -> str:
    if not result.has_negative_cycle:
        return "none"
    vertices = [result.label(int(v)) for v in result.negative_cycle_vertices]
    listed = ", ".join(map(str, vertices[:MAX_LISTED]))
    more = f", ... ({len(vertices)} vertices)" if len(vertices) > MAX_LISTED else ""
    return f"yes, through vertices [{listed}{more}]; pairs it reaches have no shortest path"


def run_check(result, graph) -> bool:
    """Recompute independently, print the verdict and the checksum; True when they match."""
    import floydwarp as fw
    from ..checksum import checksum, format_checksum

    # Above the reference's reach, check with a cpu algorithm other than the one being checked.
    if result.n <= CHECK_REFERENCE_MAX_N:
        check_backend, check_algorithm = "reference", "auto"
    else:
        same = result.backend == "cpu" and result.algorithm == "blocked"
        check_backend, check_algorithm = "cpu", "rows" if same else "blocked"
    # a result narrowed to a storage dtype (uint8 hop counts) is checked against the auto choice
    dtype = result.dtype.name if result.dtype.name in fw.DTYPES else "auto"
    expected = fw.solve(graph, dtype=dtype, backend=check_backend, algorithm=check_algorithm,
                        progress=progress_wanted())
    count, first = mismatches(result, expected, exact=graph.weight_stats().integral)
    against = f"{expected.backend}/{expected.algorithm}"
    if count == 0:
        click.echo(f"check:     match ({against}, {result.dtype.name})")
    else:
        click.echo(f"check:     MISMATCH in {count:,} entries against {against}; "
                   f"first {len(first)} (i, j, got, expected):")
        for i, j, got, exp in first:
            click.echo(f"  {i} {j} {got} {exp}")
    click.echo(f"checksum:  {format_checksum(checksum(result))} (Fletcher-16 of the int64 distances)")
    return count == 0


def mismatches(result, expected, *, exact=True, limit=MAX_LISTED):
    """How many entries differ, and the first ``limit`` as (i, j, got, expected).

    ``exact``: compare exactly (integer weights); else float results may differ by rounding.
    Entries with a negative cycle on the way have no defined value (it depends on the
    order of the updates): there only reachability is compared.
    """
    from ..arrays import to_host

    got_d, exp_d = result.dist, expected.dist
    cycles = result.negative_cycles
    n = result.n
    exact = exact or result.dtype.kind in "iu"
    rtol = 1e-5 if result.dtype == np.float32 else 1e-12
    rows = max(1, (16 << 20) // (8 * max(n, 1)))
    count, first = 0, []
    for s in range(0, n, rows):
        g, e = to_host(got_d[s:s + rows]), to_host(exp_d[s:s + rows])
        # reachability first: the two results' INF may differ (uint8 hop counts against int16)
        reached = g < result.inf
        same = (g == e) if exact else np.isclose(g, e, rtol=rtol, atol=0)
        bad = (reached != (e < expected.inf)) | (reached & ~same)
        if cycles:
            through = (cycles.reach_to[:, s:s + rows].T.astype(np.float32)
                       @ cycles.reach_from.astype(np.float32)) > 0
            bad = np.where(through, (g < result.inf) != (e < expected.inf), bad)
        count += int(bad.sum())
        for i, j in np.argwhere(bad)[:limit - len(first)]:
            first.append((s + int(i), int(j), _cell(g[i, j], result.inf), _cell(e[i, j], expected.inf)))
    if sorted(result.negative_cycle_vertices.tolist()) != sorted(expected.negative_cycle_vertices.tolist()):
        count += 1
    return count, first


def _cell(value, inf) -> str:
    if not value < inf:
        return "inf"
    exact = float(value).is_integer() and abs(float(value)) < 2 ** 63     # every digit of an int64 or less
    return str(int(value)) if exact else f"{float(value):.6g}"


def format_matrix(result) -> str:
    """The distance matrix as text: 'inf' unreachable, '-inf' through a negative cycle; corners when large."""
    from ..arrays import to_host

    n = result.n
    if n <= PRINT_FULL_MAX_N:
        idx = list(range(n))
    else:
        idx = list(range(PRINT_EDGE)) + [None] + list(range(n - PRINT_EDGE, n))
    real = [i for i in idx if i is not None]
    sub = to_host(result.dist[np.ix_(real, real)]) if real else np.zeros((0, 0))
    pos = {v: k for k, v in enumerate(real)}

    def cell(i, j):
        if i is None or j is None:
            return "..."
        if result.has_negative_cycle and result.negative_cycles.affects(i, j) and sub[pos[i], pos[j]] < result.inf:
            return "-inf"
        return _cell(sub[pos[i], pos[j]], result.inf)

    header = [""] + ["..." if j is None else str(result.label(j)) for j in idx]
    table = [header] + [["..." if i is None else str(result.label(i))] + [cell(i, j) for j in idx] for i in idx]
    width = max(len(c) for row in table for c in row)
    lines = [" ".join(c.rjust(width) for c in row) for row in table]
    if n > PRINT_FULL_MAX_N:
        lines.append(f"(first and last {PRINT_EDGE} of {n:,} rows and columns)")
    return "distances:\n" + "\n".join(lines)
