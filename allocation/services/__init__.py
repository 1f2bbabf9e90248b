"""Services: the only code that writes the database.

Views, consumers, the API, the admin and management commands call these; each write is
one transaction, validated by the engine first, and announced after commit
(:mod:`allocation.services.broadcast`).
"""
