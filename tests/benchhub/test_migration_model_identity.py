"""Migration 0012 keys stored runs with their organisation and rebuilds the pools; the downgrade keys
them as before; upgrade, downgrade and upgrade again on both databases."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic import command

from bountyboard.benchhub import registry
from bountyboard.storage.migrations import alembic_config
from tests.benchhub.test_migration_0007 import sync_url
from tests.support.server import backends, database_url

# (id, model as uploaded, key under the old rule, submitter, claim)
RUNS = [
    ("run_acme", "acme/calc-1", "calc-1", "usr_a", None),
    ("run_evil", "evil/calc-1", "calc-1", "anon_1", None),
    ("run_snapshot", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "usr_a", None),
    ("run_bare", "calc-1", "calc-1", "usr_b", None),
    ("run_acme_again", "Acme/Calc-1", "calc-1", "usr_b", 0.8),
]
NEW_KEYS = {"run_acme": "acme/calc-1", "run_evil": "evil/calc-1", "run_snapshot": "anthropic/claude-sonnet-4-5",
            "run_bare": "calc-1", "run_acme_again": "acme/calc-1"}
OLD_KEYS = {run_id: old for run_id, _, old, _, _ in RUNS}
OLD_POOLS = {("calc-1", False): (3, 0.8), ("calc-1", True): (1, None), ("claude-sonnet-4-5", False): (1, None)}
NEW_POOLS = {("acme/calc-1", False): (2, None), ("evil/calc-1", True): (1, None),
             ("anthropic/claude-sonnet-4-5", False): (1, None), ("calc-1", False): (1, None)}
SUBMITTER_POOLS = {("acme/calc-1", "usr_a"): (1, None), ("acme/calc-1", "usr_b"): (1, 0.8),
                   ("evil/calc-1", "anon_1"): (1, None), ("anthropic/claude-sonnet-4-5", "usr_a"): (1, None),
                   ("calc-1", "usr_b"): (1, None)}


def stored(engine: sa.Engine) -> dict[str, Any]:
    with engine.connect() as connection:
        keys = dict(connection.execute(sa.text("SELECT id, model_key FROM bench_runs")).all())
        inspector = sa.inspect(connection)
        # The pools kept their latest claim before 0012; since, the submitter pools keep it.
        claim = "claim_value" if "claim_value" in {c["name"] for c in inspector.get_columns("bench_pools")} else "NULL"
        pools = {(key, bool(anonymous)): (runs, value) for key, anonymous, runs, value in connection.execute(
            sa.text(f"SELECT model_key, anonymous, runs, {claim} FROM bench_pools"))}
        submitter_pools = None
        if inspector.has_table("bench_submitter_pools"):
            submitter_pools = {(key, submitter): (runs, claim) for key, submitter, runs, claim in connection.execute(
                sa.text("SELECT model_key, submitter_id, runs, claim_value FROM bench_submitter_pools"))}
    return {"keys": keys, "pools": pools, "submitter_pools": submitter_pools}


@pytest.mark.parametrize("backend", backends())
def test_stored_runs_are_keyed_with_their_organisation_and_back(backend: str, tmp_path: Path) -> None:
    with database_url(backend, tmp_path) as url:
        config = alembic_config(url)
        command.upgrade(config, "0004_benchhub")
        engine = sa.create_engine(sync_url(url))
        record = next(r for r in registry.shipped_records() if r["slug"] == "gsm8k")
        start = datetime(2026, 11, 1, tzinfo=UTC)
        trials = [{"taskId": "a", "trialName": "a__0", "rewards": {"reward": 1.0}, "error": None}]
        with engine.begin() as connection:
            connection.execute(sa.text(
                "INSERT INTO bench_benchmarks (slug, name, kind, reproducible, record, search_text, registry_sha256, "
                "created_at, updated_at) VALUES ('gsm8k', 'GSM8K', 'hf_rows', true, :record, 'gsm8k', NULL, :now, :now)"
            ), {"record": json.dumps(record), "now": start})
            for index, (run_id, model, old_key, submitter, claim) in enumerate(RUNS):
                connection.execute(sa.text(
                    "INSERT INTO bench_runs (id, benchmark_slug, model, model_key, agent_name, agent_version, "
                    "harness_name, harness_version, dataset_ref, dataset_revision, score, stderr, n_tasks, n_trials, "
                    "n_errors, task_tally, trials, claim_value, claim_source_url, bundle_sha256, submitter_kind, "
                    "submitter_id, created_at) VALUES (:id, 'gsm8k', :model, :key, 'terminus-2', '1', 'bountyboard', "
                    "'0.1', 'openai/gsm8k', 'main', 1.0, NULL, 1, 1, 0, :tally, :trials, :claim, :source, :sha, "
                    ":kind, :submitter, :at)"
                ), {"id": run_id, "model": model, "key": old_key, "tally": json.dumps({"a": [1.0, 1]}),
                    "trials": json.dumps(trials), "claim": claim, "source": "https://example.org" if claim else None,
                    "sha": f"{index:064x}", "kind": "anonymous" if submitter.startswith("anon_") else "user",
                    "submitter": submitter, "at": start + timedelta(minutes=index)})
        command.upgrade(config, "0007_benchhub_trust")
        before = stored(engine)
        command.upgrade(config, "heads")
        upgraded = stored(engine)
        command.downgrade(config, "0007_benchhub_trust")
        downgraded = stored(engine)
        command.upgrade(config, "heads")
        again = stored(engine)
        engine.dispose()
    # 0007 keys the runs but pools nothing (0011 recounts and pools them); the downgrade gives the
    # pools their latest claims back.
    assert before == {"keys": OLD_KEYS, "pools": {}, "submitter_pools": None}
    assert upgraded == {"keys": NEW_KEYS, "pools": NEW_POOLS, "submitter_pools": SUBMITTER_POOLS}
    assert downgraded == {"keys": OLD_KEYS, "pools": OLD_POOLS, "submitter_pools": None}
    assert again == upgraded
