"""Batch jobs: each a plain ``run(client, now=...)`` returning a report."""
