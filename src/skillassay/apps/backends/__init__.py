"""Where the app runs: ``host`` (a process group on this machine, default) or ``docker`` (the plan's image
per run).
"""
