"""Support package for the Streamlit dashboard (`app.py`, `pages/`).

Pure parts (no Streamlit import at module level): :mod:`roots` (allowed table roots),
:mod:`recent` (recently opened tables), :mod:`state` (URL/query-param encoding),
:mod:`engine` (adapters to engine parts that may be missing from a build), :mod:`markers`
(timeline markers), :mod:`charts` (Plotly figure builders: data in, figure out).
Streamlit-bound parts: :mod:`loaders` (cached loaders), :mod:`render` (errors, tables, downloads),
:mod:`picker` (the sidebar table picker).
"""
