"""The shipped registry validates against the JSON Schema shipped beside it."""

from __future__ import annotations

import copy
import json
import re
from collections import Counter
from typing import Any

import jsonschema
import pytest

from bountyboard.benchhub import registry

DOCUMENT = json.loads(registry.REGISTRY_PATH.read_text())
SCHEMA = json.loads(registry.SCHEMA_PATH.read_text())


def test_registry_file_validates_against_its_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.validate(DOCUMENT, SCHEMA, cls=jsonschema.Draft202012Validator)
    assert registry.document_errors(DOCUMENT) == []


def test_registry_covers_every_adapter_kind_with_at_least_25_benchmarks() -> None:
    records = DOCUMENT["benchmarks"]
    assert len(records) >= 25
    kinds = Counter(record["harbor"]["adapter"]["kind"] for record in records)
    assert set(kinds) == {"hf_rows", "harbor_native", "external_harness"}
    assert len({record["slug"] for record in records}) == len(records)


def test_reference_scores_always_carry_a_source() -> None:
    claims = [ref for record in DOCUMENT["benchmarks"] for ref in record["referenceScores"]]
    assert claims, "the registry ships some published claims"
    assert all(ref["sourceUrl"].startswith("https://") for ref in claims)


def test_homepages_are_pages_or_null_never_guessed() -> None:
    """A homepage is an http(s) page of the benchmark's own, or null: the arithmetic rows ship with the
    package and have no page of their own (docs/bench.md describes them)."""
    homepages = {record["slug"]: record["homepage"] for record in DOCUMENT["benchmarks"]}
    assert homepages["arithmetic"] is None
    assert all(url is None or url.startswith(("https://", "http://")) for url in homepages.values())
    assert not [slug for slug, url in homepages.items() if url and "github.com/bountyboard/" in url]


def test_gsm8k_uses_the_answer_after_the_four_hashes() -> None:
    adapter = next(r for r in DOCUMENT["benchmarks"] if r["slug"] == "gsm8k")["harbor"]["adapter"]
    assert (adapter["dataset"], adapter["config"], adapter["split"]) == ("openai/gsm8k", "main", "test")
    match = re.search(adapter["verifier"]["targetPattern"], "She pays 3 * 4 = <<3*4=12>>12 dollars.\n#### 1,212")
    assert match is not None and match.group(1) == "1,212"


def _mutated(slug: str, change: Any) -> dict[str, Any]:
    record = copy.deepcopy(next(r for r in DOCUMENT["benchmarks"] if r["slug"] == slug))
    change(record)
    return record


@pytest.mark.parametrize(("slug", "change", "field"), [
    ("gsm8k", lambda r: r.pop("metric"), "record"),
    ("gsm8k", lambda r: r.update(slug="Not A Slug"), "slug"),
    ("gsm8k", lambda r: r["harbor"]["adapter"].update(kind="zip_file"), "harbor.adapter"),
    ("gsm8k", lambda r: r["harbor"]["adapter"]["verifier"].update(kind="vibes"), "harbor.adapter"),
    ("mmlu", lambda r: r["harbor"]["adapter"]["fields"].pop("choices"), "harbor.adapter"),
    ("arc-challenge", lambda r: r["harbor"]["adapter"]["fields"].pop("labels"), "harbor.adapter"),
    ("terminal-bench", lambda r: r["harbor"]["adapter"].update(ref="terminal bench 2"), "harbor.adapter"),
    ("mmlu", lambda r: r["referenceScores"][0].pop("sourceUrl"), "referenceScores.0"),
    ("mmlu", lambda r: r["referenceScores"][0].update(value=86.4), "referenceScores.0.value"),
    ("mmlu", lambda r: r["metric"].update(min=1, max=0), "metric"),
    ("humaneval", lambda r: r.update(reproducible=True), "reproducible"),
    ("gsm8k", lambda r: r.update(homepage="docs/bench.md"), "homepage"),
    ("gsm8k", lambda r: r.pop("homepage"), "record"),
])
def test_broken_records_are_refused(slug: str, change: Any, field: str) -> None:
    errors = registry.record_errors(_mutated(slug, change))
    assert errors, "the broken record was accepted"
    assert any(error["field"].startswith(field) for error in errors), errors
