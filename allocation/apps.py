from django.apps import AppConfig


class AllocationConfig(AppConfig):
    """The domain app: cluster inventory, claims and simulations.

    The allocation algorithms live in ``allocation.engine``, a pure-Python
    library that never imports Django; this app wraps it with models, services,
    views and management commands. Keep ``allocation/__init__.py`` empty so
    ``import allocation.engine`` does not load Django.
    """

    name = "allocation"
    verbose_name = "DRA allocation"
    default_auto_field = "django.db.models.BigAutoField"
