"""The REST API at ``/api/``: every kind, kubectl-style YAML or JSON in and out."""
