from trunchbull.cli import main

raise SystemExit(main())
