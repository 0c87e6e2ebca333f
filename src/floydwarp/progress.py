"""Progress reporting: a tqdm bar, a user callback, or nothing."""
from __future__ import annotations

import contextlib


#: the context of a run nobody listens to (a nullcontext is reusable: one serves every run)
_NOBODY = contextlib.nullcontext()


def progress_callback(progress, description="", unit="round"):
    """A context that yields ``report(done, total)`` for an engine, or None when nobody listens.

    The bar (counting ``unit``) appears only once a run has taken a second, so short runs
    print nothing.  ``description`` may be a function giving it (built only when a bar is drawn).
    """
    if not progress:
        return _NOBODY
    if callable(progress) and progress is not True:
        return contextlib.nullcontext(progress)
    return _bar(description, unit)


@contextlib.contextmanager
def _bar(description, unit):
    from tqdm.auto import tqdm

    bar = None
    if callable(description):
        description = description()

    def report(done, total):
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=description, unit=unit, leave=False, delay=1.0)
        bar.update(done - bar.n)

    try:
        yield report
    finally:
        if bar is not None:
            bar.close()
