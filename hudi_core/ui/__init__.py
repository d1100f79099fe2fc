"""Support package for the Streamlit dashboard (`hudi_core/dashboard/`: `app.py`, `pages/`).

Pure parts (no Streamlit import at module level): :mod:`roots` (allowed table roots),
:mod:`recent` (recently opened tables), :mod:`state` (URL/query-param encoding),
:mod:`markers` (how the engine's typed markers are worded), :mod:`frames` (display rows of the
instant and file-group pages), :mod:`scenario_tables` (scenario steps built into the cache),
:mod:`charts` (Plotly figure builders: data in, figure out). Streamlit-bound parts: :mod:`loaders`
(cached calls of the engine's API), :mod:`render` (errors, tables, downloads), :mod:`picker` (the
sidebar table picker). Nothing here parses table files or second-guesses the engine's results.
"""
