from gangscope.pipeline.cli import main

raise SystemExit(main())
