"""Migrations 0007 and 0011 recount runs stored before them with Harbor's rule and pool them (both databases)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from bountyboard.benchhub import registry
from bountyboard.storage.migrations import alembic_config
from tests.support.server import backends, database_url


def as_json(value: Any) -> Any:
    """JSON columns come back parsed from PostgreSQL and as text from SQLite."""
    return json.loads(value) if isinstance(value, str) else value


LEGACY_TRIALS = [  # uploaded under the old rule, which scored it 0.75 (errors left out)
    {"taskId": "a", "trialName": "a__0", "rewards": {"reward": 1.0}, "error": None},
    {"taskId": "a", "trialName": "a__1", "rewards": {"reward": 0.0}, "error": None},
    {"taskId": "b", "trialName": "b__0", "rewards": {"reward": 1.0}, "error": None},
    {"taskId": "c", "trialName": "c__0", "rewards": {}, "error": "Timeout"},
]


def sync_url(url: str) -> str:
    return url.replace("+asyncpg", "+psycopg2").replace("+aiosqlite", "")


@pytest.mark.parametrize("backend", backends())
def test_legacy_runs_are_recounted_and_pooled(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        config = alembic_config(url)
        command.upgrade(config, "0004_benchhub")
        engine = sa.create_engine(sync_url(url))
        record = next(r for r in registry.shipped_records() if r["slug"] == "gsm8k")
        now = datetime(2026, 11, 1, tzinfo=UTC)
        with engine.begin() as connection:
            connection.execute(sa.text(
                "INSERT INTO bench_benchmarks (slug, name, kind, reproducible, record, search_text, registry_sha256, "
                "created_at, updated_at) VALUES ('gsm8k', 'GSM8K', 'hf_rows', true, :record, 'gsm8k', NULL, :now, :now)"
            ), {"record": json.dumps(record), "now": now})
            connection.execute(sa.text(
                "INSERT INTO bench_runs (id, benchmark_slug, model, model_key, agent_name, agent_version, "
                "harness_name, harness_version, dataset_ref, dataset_revision, score, stderr, n_tasks, n_trials, "
                "n_errors, task_tally, trials, claim_value, claim_source_url, bundle_sha256, submitter_kind, "
                "submitter_id, created_at) VALUES ('run_legacy', 'gsm8k', 'Org/M', 'm', 'terminus-2', '1', "
                "'bountyboard', '0.1', 'openai/gsm8k', 'main', 0.75, 0.25, 3, 4, 1, :tally, :trials, 0.8, "
                "'https://example.org', :sha, 'anonymous', 'anon_1', :now)"
            ), {"tally": json.dumps({"a": [1.0, 2], "b": [1.0, 1]}), "trials": json.dumps(LEGACY_TRIALS),
                "sha": "0" * 64, "now": now})
        command.upgrade(config, "heads")
        with engine.connect() as connection:
            run = connection.execute(sa.text(
                "SELECT score, primary_metric, metrics, pass_at_k, task_tally, n_trials, n_rewarded, n_errors, trials "
                "FROM bench_runs")).one()
            pool = connection.execute(sa.text(
                "SELECT model_key, agent_name, dataset_revision, anonymous, runs, n_trials, n_tasks, sum_total "
                "FROM bench_pools")).one()
            # Claims are kept per submitter since 0012_benchhub_model_identity.
            claim = connection.execute(sa.text("SELECT submitter_id, claim_value FROM bench_submitter_pools")).one()
        engine.dispose()
    assert run.score == 0.5 and run.primary_metric == "reward"
    assert as_json(run.metrics) == {"reward": 0.5}
    assert as_json(run.task_tally) == {"sums": {"a": 1.0, "b": 1.0, "c": 0.0}, "trials": {"a": 2, "b": 1, "c": 1}}
    assert (run.n_trials, run.n_errors) == (4, 1)
    # 0011: the legacy {} of the errored trial meant "no reward": it is dropped, and Harbor's n_trials
    # (the trials with rewards) is 3; as a missing reward it still counts as a failure in pass@k.
    assert run.n_rewarded == 3
    assert "rewards" not in json.loads(run.trials)[3]
    assert as_json(run.pass_at_k) == {}
    # Keyed with its organisation by a later revision (0012_benchhub_model_identity).
    assert tuple(pool) == ("org/m", "terminus-2", "main", True, 1, 4, 3, 2.0)
    assert tuple(claim) == ("anon_1", 0.8)
