"""`streamlit run app.py` (and `make run`) in a checkout: the dashboard shipped in the package
(`hudi_core/dashboard/`: this entry script's page list and the page scripts). Installed, the same
dashboard starts with `hudi-inspect ui [TABLE|ROOT ...]`."""

from hudi_core.dashboard.app import main

main()
