"""`trunchbull verify` (SPEC §5): every hash and the digest recomputed."""

from __future__ import annotations

import orjson

from trunchbull.release.canonical import sha256_hex
from trunchbull.release.files import ReleaseFiles
from trunchbull.release.manifest import FORMAT, MANIFEST, compute_digest


def verify(release: ReleaseFiles) -> list[str]:
    """Problems found by recomputing every hash and the digest; [] when intact."""
    try:
        manifest = release.manifest.data
    except (KeyError, orjson.JSONDecodeError) as err:
        return [f"release.json is missing or not JSON ({err})"]
    problems = []
    if manifest.get("format") != FORMAT:
        problems.append(f"release.json format is {manifest.get('format')!r}, expected {FORMAT!r}")
    listed = manifest.get("files") or {}
    present = {n for n in release.files if n != MANIFEST}
    for name in sorted(present - set(listed)):
        problems.append(f"{name}: not listed in release.json")
    for name in sorted(set(listed) - present):
        problems.append(f"{name}: listed in release.json but missing")
    for name in sorted(present & set(listed)):
        actual = sha256_hex(release.files[name])
        if actual != listed[name]:
            problems.append(f"{name}: sha256 is {actual}, release.json says {listed[name]}")
    if manifest.get("digest") != compute_digest(manifest):
        problems.append(
            f"digest mismatch: release.json says {manifest.get('digest')}, its content gives {compute_digest(manifest)}"
        )
    return problems
