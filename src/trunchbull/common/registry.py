"""How every extension point's registry finds its entries (evaluator kinds,
case data files, export formats), one way: each public module of the
registry's package defines its entry under one name, except the package's
own plumbing, which the registry names. A module that should define the
entry and does not is a mistake in the package, raised with its name, never
skipped: a new format or kind that is misspelled would otherwise vanish."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Collection, TypeVar

T = TypeVar("T")


class RegistryError(Exception):
    """A module of a registry's package that defines no entry, or a wrong one."""


def find_entries(package: str, attribute: str, entry_type: type[T], plumbing: Collection[str] = ()) -> list[T]:
    """The `attribute` of every module of `package` (by module name) except
    private ones (`_x`) and those named in `plumbing`, each an `entry_type`."""
    modules = sorted(m.name for m in pkgutil.iter_modules(importlib.import_module(package).__path__))
    stale = sorted(set(plumbing) - set(modules))
    if stale:
        raise RegistryError(f"{package} has no module {', '.join(stale)}, named as its plumbing")
    found = []
    for name in modules:
        if name.startswith("_") or name in plumbing:
            continue
        entry = getattr(importlib.import_module(f"{package}.{name}"), attribute, None)
        if not isinstance(entry, entry_type):
            besides = f" besides {', '.join(sorted(plumbing))}" if plumbing else ""
            raise RegistryError(
                f"{package}.{name} defines no {attribute} (a {entry_type.__name__}): "
                f"each module of {package}{besides} defines one"
            )
        found.append(entry)
    return found
