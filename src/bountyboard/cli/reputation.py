"""``reputation BOT``: a bot's track record, overall and per module, with the interval."""

from __future__ import annotations

from typing import Any

import typer

from bountyboard.cli import tables
from bountyboard.cli.session import JsonFlag, client_session, show
from bountyboard.client.types import BotReputation, ReputationScore


def _row(scope: str, score: ReputationScore) -> list[Any]:
    rate = "-" if score["rate"] is None else f"{score['rate']:.1%}"
    interval = f"{score['interval']['low']:.1%} to {score['interval']['high']:.1%}"
    return [scope, f"{score['successes']:.2f}", f"{score['failures']:.2f}", f"{score['effectiveN']:.2f}", rate,
            interval, score["lastActivityAt"] or "-"]


def _render(record: BotReputation) -> tables.Listing:
    rows = [_row("overall", record["overall"])] + [_row(module, score) for module, score in record["byModule"].items()]
    title = (f"Bot {record['name']} {record['botId']}: half-life {record['halfLifeDays']:g} days, "
             f"{record['confidence']:.0%} Jeffreys interval")
    return tables.table(title, ["scope", "for", "against", "effective n", "rate", "interval", "last outcome"], rows)


def reputation(bot_id: str, as_json: JsonFlag = False) -> None:
    """A bot's track record: recency-weighted outcomes and the success rate's interval (any valid key)."""
    with client_session() as client:
        record = client.reputation(bot_id)
    show(record, as_json, _render)


def register(app: typer.Typer) -> None:
    app.command()(reputation)
