"""Benchmark records (DESIGN.md section 8) and where the bench commands read them from.

A registry is either the hub's API (``GET /v1/bench/benchmarks?q=`` and
``GET /v1/bench/benchmarks/{slug}``) or a static ``index.json``, given by URL or by file path.
Records are kept as the JSON they arrived in (``bench info --json`` prints them whole); only the
adapter, which the commands act on, is parsed into a model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ConfigDict, ValidationError

from bountyboard.benchhub.schemas import ExternalHarnessAdapter, HarborNativeAdapter, HarborSection, HfRowsAdapter
from bountyboard.benchhub.search import rank_records
from bountyboard.client.exceptions import BountyboardError
from bountyboard.client.transport import ApiError, Transport

__all__ = ["Benchmark", "ExternalHarnessAdapter", "HarborNativeAdapter", "HfRowsAdapter", "Registry",
           "RegistryError", "RowFields"]


class RegistryError(BountyboardError):
    """The registry could not be read, or holds no such benchmark."""


class RowFields(BaseModel):
    """A typed view of ``fields``: columns of a row; a dotted path reaches into nested values."""

    model_config = ConfigDict(extra="allow")

    id: str | None = None
    input: str
    context: str | None = None
    target: str
    choices: str | None = None
    labels: str | None = None


class Benchmark(BaseModel):
    """A registry record: its raw JSON, with the adapter parsed."""

    slug: str
    record: dict[str, Any]
    adapter: HfRowsAdapter | HarborNativeAdapter | ExternalHarnessAdapter

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Benchmark:
        slug = record.get("slug")
        if not isinstance(slug, str) or not slug:
            raise RegistryError("a registry record has no slug")
        try:
            adapter = HarborSection.model_validate(record.get("harbor")).adapter
        except ValidationError as exc:
            raise RegistryError(f"benchmark {slug!r} has no usable harbor.adapter: {exc}") from exc
        return cls(slug=slug, record=record, adapter=adapter)

    @property
    def name(self) -> str:
        return str(self.record.get("name") or self.slug)

    @property
    def fields(self) -> RowFields:
        assert isinstance(self.adapter, HfRowsAdapter)
        return RowFields.model_validate(self.adapter.fields)


def _records(document: Any) -> list[dict[str, Any]]:
    """The records of an index or a list answer: a bare list, or under ``records`` (the hub's
    /benchhub/index.json), ``benchmarks`` (its data file) or ``data`` (a page of the API)."""
    if isinstance(document, dict):
        document = next((document[key] for key in ("records", "benchmarks", "data") if key in document), None)
    if not isinstance(document, list):
        raise RegistryError("the registry is not a list of benchmarks (nor an object with `records`)")
    return [record for record in document if isinstance(record, dict)]


class Registry:
    """Reads records from a static index (``source`` is a path or an http(s) URL) or from the API."""

    def __init__(self, *, base_url: str, source: str | None = None) -> None:
        self.base_url = base_url
        self.source = source
        self._index: list[dict[str, Any]] | None = None

    def _load_index(self) -> list[dict[str, Any]]:
        if self._index is None:
            assert self.source is not None
            try:
                if self.source.startswith(("http://", "https://")):
                    response = httpx.get(self.source, timeout=30, follow_redirects=True)
                    response.raise_for_status()
                    document = response.json()
                else:
                    document = json.loads(Path(self.source).expanduser().read_text())
            except (OSError, ValueError, httpx.HTTPError) as exc:
                raise RegistryError(f"cannot read the registry {self.source}: {exc}") from exc
            self._index = _records(document)
        return self._index

    def _api(self, path: str, params: dict[str, Any] | None = None) -> Any:
        try:
            with Transport(self.base_url, max_retries=2) as transport:
                return transport.request("GET", path, params=params).json()
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise RegistryError(f"the hub at {self.base_url} answered {exc}") from exc
        except httpx.HTTPError as exc:
            raise RegistryError(f"cannot reach the hub at {self.base_url} ({exc}); "
                                "use --registry with an index.json file or URL") from exc

    def search(self, query: str) -> list[dict[str, Any]]:
        # The hub ranks its answers with the same function a static index is ranked with here.
        if self.source:
            return rank_records(self._load_index(), query)
        return _records(self._api("/v1/bench/benchmarks", {"q": query}) or [])

    def get(self, slug: str) -> Benchmark:
        if self.source:
            found = next((record for record in self._load_index() if record.get("slug") == slug), None)
        else:
            found = self._api(f"/v1/bench/benchmarks/{quote(slug, safe='')}")  # a slug never leaves its segment
        if not isinstance(found, dict):
            raise RegistryError(f"no benchmark {slug!r} in {self.source or self.base_url}")
        return Benchmark.from_record(found)
