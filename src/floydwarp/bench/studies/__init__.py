"""The benchmark studies, one module each (see :data:`floydwarp.bench.STUDY_MODULES`).

Every module has ``NAME``, ``TITLE``, ``run(config, *, command=None, on_record=None) -> dict``,
``columns(records) -> [Column]``, ``summary_lines(data) -> [str]`` and
``plots(data, out_dir, ceilings=None, prefix="") -> [(file name, caption)]``.
"""
