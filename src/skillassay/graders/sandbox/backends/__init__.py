"""Where the app runs: ``process`` (local process group, default) or ``docker`` (the plan's image per run)."""
