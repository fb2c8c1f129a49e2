"""bench/run.py's parts: processes, namespaces, implementations, scenarios, runner, report."""
