"""Example ranking data made from the kits-example demo (see ``__main__.py``)."""
