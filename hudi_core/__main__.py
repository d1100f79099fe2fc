from hudi_core.cli import run

run()
