"""market: eligibility requirements of tasks and claim bonds

Revision ID: 0022_eligibility_bonds
Revises: 0016_task_version

Tasks gain ``min_reputation`` (on the lower end of the success rate's interval) and ``min_completed``
(both nullable: no requirement) and ``claim_bond_cents`` (0: no bond). Claims gain ``bond_cents`` (what
the claim holds in ``bond:<claim_id>``) and ``bond_state`` (null, held, returned or forfeited).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

Cents = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

revision = "0022_eligibility_bonds"
down_revision = "0016_task_version"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tasks") as batch:
        batch.add_column(sa.Column("min_reputation", sa.Float(), nullable=True))
        batch.add_column(sa.Column("min_completed", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("claim_bond_cents", Cents, nullable=False, server_default="0"))
    with op.batch_alter_table("claims") as batch:
        batch.add_column(sa.Column("bond_cents", Cents, nullable=False, server_default="0"))
        batch.add_column(sa.Column("bond_state", sa.String(20), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("claims") as batch:
        batch.drop_column("bond_state")
        batch.drop_column("bond_cents")
    # Not in batch mode: SQLite would copy the table and lose its version trigger (0016); it drops the
    # columns itself.
    for column in ("claim_bond_cents", "min_completed", "min_reputation"):
        op.drop_column("tasks", column)
