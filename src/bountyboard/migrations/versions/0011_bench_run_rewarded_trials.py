"""benchhub: a run's trials with a verifier reward (Harbor's n_trials); every run recounted

Revision ID: 0011_bench_run_rewarded_trials
Revises: 0007_benchhub_trust

``nTrials`` of a run becomes Harbor's ``n_trials``, the trials whose verifier gave rewards, and
``{}`` becomes a verifier's empty reward (no error, no pass@k). Until now an upload sent ``{}``, with
an error, for a trial without a reward: those stored ``{}`` are dropped, so every stored trial reads
the new way. Then every run is recounted with today's rule (``reward`` before the registry key
too) and the pools are rebuilt from them.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op
from sqlalchemy.orm import Session

revision = "0011_bench_run_rewarded_trials"
down_revision = "0007_benchhub_trust"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("bench_runs") as batch:
        batch.add_column(sa.Column("n_rewarded", sa.Integer(), nullable=False, server_default="0"))
    runs = sa.table("bench_runs", sa.column("id", sa.String()), sa.column("trials", sa.Text()))
    connection = op.get_bind()
    for run_id, text in connection.execute(sa.select(runs.c.id, runs.c.trials)).all():
        trials = json.loads(text)
        legacy = [trial for trial in trials if trial.get("rewards") == {}]
        for trial in legacy:
            del trial["rewards"]
        if legacy:
            connection.execute(runs.update().where(runs.c.id == run_id)
                               .values(trials=json.dumps(trials, separators=(",", ":"))))
    connection.execute(sa.text("DELETE FROM bench_pools"))
    from bountyboard.benchhub import pools  # the counting rule lives in one place

    with Session(bind=connection) as session:
        pools.recount_all(session)
        session.commit()


def downgrade() -> None:
    with op.batch_alter_table("bench_runs") as batch:
        batch.drop_column("n_rewarded")
