"""Packaging beyond `pyproject.toml`: the dashboard's page scripts live in the repository's top-level `pages/`
(beside `app.py`, as Streamlit lays out a multipage app) and are installed as `hudi_core/dashboard/pages/`, where
`hudi-inspect ui` serves them from. Streamlit runs them by path, never as modules."""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages(include=["hudi_core*"]), "hudi_core.dashboard.pages"],
    package_dir={"hudi_core.dashboard.pages": "pages"},
    package_data={"hudi_core.dashboard.pages": ["*.py"]},
)
