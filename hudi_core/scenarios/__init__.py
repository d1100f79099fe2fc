"""Scenario builder: writes real Hudi tables into new scratch directories, and the built-in scenarios."""
