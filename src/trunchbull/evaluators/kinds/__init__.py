"""The declarative evaluator kinds, one module each (see registry.py)."""
