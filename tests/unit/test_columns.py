"""Status columns: enum members in Python, the same plain text in the database as before."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, create_engine, insert, select, text
from sqlalchemy.exc import StatementError

from bountyboard.columns import StrEnumColumn
from bountyboard.market.models import ClaimStatus


def test_a_status_is_stored_as_its_text_and_read_back_as_the_member() -> None:
    table = Table("claims", MetaData(), Column("id", Integer, primary_key=True),
                  Column("status", StrEnumColumn(ClaimStatus, 20)))
    engine = create_engine("sqlite://")
    table.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(insert(table).values(id=1, status=ClaimStatus.ACTIVE))
        connection.execute(insert(table).values(id=2, status="released"))
        assert connection.execute(text("SELECT status FROM claims ORDER BY id")).scalars().all() == ["active",
                                                                                                    "released"]
        read = connection.execute(select(table.c.status).where(table.c.status == ClaimStatus.RELEASED)).scalar_one()
        assert read is ClaimStatus.RELEASED
        with pytest.raises(StatementError):
            connection.execute(insert(table).values(id=3, status="lost"))
