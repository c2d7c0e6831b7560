"""claims: indexes that lead with the column a claim's checks ask for, not a flag

A claim locks its task and then asks for the task's slot-holding claims and for the holder's active
claims. With one index per column, SQLite (which keeps no statistics unless asked) took the
``holds_slot`` and ``status`` indexes for those questions and read every holding or active claim of the
whole market for each claim. These indexes answer them from the task's or the holder's own claims;
they also serve every query of one column they replace.

Revision ID: 0010_claim_indexes
Revises: 0008_uploads
"""

from __future__ import annotations

from alembic import op

revision = "0010_claim_indexes"
down_revision = "0008_uploads"
branch_labels = None
depends_on = None

_ADDED = {
    "ix_claims_task_holding": ["task_id", "holds_slot"],
    "ix_claims_bot_status": ["bot_id", "status", "expires_at"],
    "ix_claims_operator_status": ["operator_id", "status", "expires_at"],
}
_REPLACED = {
    "ix_claims_task_id": ["task_id"],
    "ix_claims_bot_id": ["bot_id"],
    "ix_claims_operator_id": ["operator_id"],
    "ix_claims_holds_slot": ["holds_slot"],
}


def upgrade() -> None:
    for name, columns in _ADDED.items():
        op.create_index(name, "claims", columns)
    for name in _REPLACED:
        op.drop_index(name, table_name="claims")


def downgrade() -> None:
    for name, columns in _REPLACED.items():
        op.create_index(name, "claims", columns)
    for name in _ADDED:
        op.drop_index(name, table_name="claims")
