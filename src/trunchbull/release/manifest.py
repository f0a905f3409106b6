"""release.json, the manifest (SPEC §5): written (new_manifest) and read
(Manifest) here only. Its `digest` covers every other file's name and hash
and the manifest itself."""

from __future__ import annotations

import hashlib

from trunchbull.release.canonical import canonical_json, sha256_hex

FORMAT = "trunchbull.release"
PROTOCOL_VERSION = 1
MANIFEST = "release.json"
CASES = "cases.jsonl"
MODULES_DIR = "modules"
MAX_CASES = 25_000  # compiled cases in one release (the seed)


def new_manifest(
    *,
    title: str,
    version: str | None,
    counts: dict,
    evals: list[dict],
    tools: list[dict],
    inputs: dict[str, str],
    compiler_version: str,
    dependencies: dict | None,
    warnings: list[str],
) -> dict:
    """The manifest of a new release, without `files` and `digest` (ReleaseFiles.assemble adds them)."""
    return {
        "format": FORMAT,
        "protocolVersion": PROTOCOL_VERSION,
        "title": title,
        "version": version,
        "counts": counts,
        "evals": evals,
        "tools": tools,
        "inputs": inputs,
        "compiler": {"name": "trunchbull", "version": compiler_version},
        "dependencies": dependencies,
        "warnings": warnings,
    }


def eval_entry(
    eval_id: str,
    title: str | None,
    description: str | None,
    module: str,
    cases: int,
    kinds: list[str],
    bundle: str | None,
) -> dict:
    return {
        "id": eval_id,
        "title": title,
        "description": description,
        "module": module,
        "caseCount": cases,
        "evaluatorKinds": kinds,
        "bundle": bundle,
    }


def tool_entry(name: str, description: str, input_schema: dict, module: str, bundle: str) -> dict:
    return {"name": name, "description": description, "inputSchema": input_schema, "module": module, "bundle": bundle}


def plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def bundle_name(sha256: str) -> str:
    """A module bundle's name in the release."""
    return f"{MODULES_DIR}/{sha256}.mjs"


def compute_digest(manifest: dict) -> str:
    """Over every payload file (name and sha256, sorted) and the manifest
    itself without its digest field, so titles and tool schemas are covered."""
    digest = hashlib.sha256()
    files = manifest.get("files") or {}
    for name in sorted(files, key=lambda n: n.encode()):
        digest.update(name.encode() + b"\0" + str(files[name]).encode() + b"\n")
    rest = {k: v for k, v in manifest.items() if k != "digest"}
    digest.update(MANIFEST.encode() + b"\0" + sha256_hex(canonical_json(rest)).encode() + b"\n")
    return "sha256:" + digest.hexdigest()


class Manifest:
    """A read-only view of release.json."""

    __slots__ = ("data",)

    def __init__(self, data: dict):
        self.data = data

    @property
    def digest(self) -> str:
        return self.data["digest"]

    @property
    def title(self) -> str:
        return self.data.get("title") or ""

    @property
    def version(self) -> str | None:
        return self.data.get("version")

    @property
    def counts(self) -> dict:
        return self.data["counts"]

    @property
    def evals(self) -> list[dict]:
        """Each eval's entry (eval_entry), in release order."""
        return self.data.get("evals") or []

    @property
    def eval_ids(self) -> list[str]:
        return [entry["id"] for entry in self.evals]

    @property
    def tools(self) -> list[dict]:
        """Each tool's entry (tool_entry), in release order."""
        return self.data.get("tools") or []

    def describe_counts(self) -> str:
        """`2 evals, 10 cases, 1 tool`."""
        return ", ".join(plural(self.counts[k], k[:-1]) for k in ("evals", "cases", "tools"))

    @property
    def dependencies(self) -> dict | None:
        return self.data.get("dependencies")

    @property
    def protocol_version(self) -> object:
        return self.data.get("protocolVersion")

    @property
    def format(self) -> object:
        return self.data.get("format")

    @property
    def files(self) -> dict:
        return self.data.get("files") or {}
