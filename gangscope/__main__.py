from gangscope.pipeline.run.cli import main

raise SystemExit(main())
