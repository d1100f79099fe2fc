from hudi_core.cli import main

raise SystemExit(main())
