"""Table services emulated as dry-runs: clean planner, archiver, markers, safety check."""
