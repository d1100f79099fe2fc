"""`streamlit run app.py` (and `make run`) in a checkout: the dashboard shipped in the package
(`hudi_core/dashboard/`: this entry script's page list and the page scripts). Installed, the same
dashboard starts with `hudi-inspect ui [TABLE|ROOT ...]`."""

# Only as Streamlit's script (run as __main__): a worker process the engine spawns imports the parent's main
# script again, as __mp_main__, and must not draw (or import) the dashboard there.
if __name__ == "__main__":
    from hudi_core.dashboard.app import main

    main()
