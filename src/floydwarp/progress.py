"""Progress reporting: a tqdm bar, a user callback, or nothing."""
from __future__ import annotations

import contextlib


@contextlib.contextmanager
def progress_callback(progress, description=""):
    """Yield ``report(done, total)`` for an engine, or None when nobody listens.

    The bar appears only once a run has taken a second, so short runs print nothing.
    """
    if not progress:
        yield None
        return
    if callable(progress) and progress is not True:
        yield progress
        return
    from tqdm.auto import tqdm

    bar = None

    def report(done, total):
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=description, unit="round", leave=False, delay=1.0)
        bar.update(done - bar.n)

    try:
        yield report
    finally:
        if bar is not None:
            bar.close()
