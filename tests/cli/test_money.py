"""Every CLI command writes an amount of money the same way: two decimals (``12.50``, ``10.00``)."""

from __future__ import annotations

from pathlib import Path

from tests.client.loop import cli_env, run_cli
from tests.support.api import Admin
from tests.support.server import LiveServer


def test_amounts_have_two_decimals_in_every_command(loop_server: tuple[LiveServer, Admin], tmp_path: Path) -> None:
    live, admin = loop_server
    publisher = admin.account("publisher")
    credited = admin.http.post("/v1/admin/credit", json={"email": publisher.user["email"], "amount": 40})
    assert credited.status_code == 200, credited.text
    env = cli_env(live.base_url, publisher.key, tmp_path)

    published = run_cli("publish", "arena", "Sum the digits", "--bounty", "12.5", env=env)
    assert published.returncode == 0, published.stderr
    assert "12.50" in published.stdout and "12.5 " not in published.stdout, published.stdout
    task_id = published.stdout.split("Published ", 1)[1].split()[0]

    listed = run_cli("tasks", "list", "--module", "arena", env=env).stdout  # newest first
    record = listed.split(task_id, 1)[1].split("next", 1)[0]  # a table row, or a record at 80 columns
    assert "12.50" in record, listed
    shown = run_cli("tasks", "show", task_id, env=env).stdout
    assert "bountyAmount" in shown and "12.50" in shown, shown
    assert "escrowAmount" in shown and "12.50" in shown.split("escrowAmount", 1)[1].splitlines()[0], shown

    balance = run_cli("balance", env=env)
    assert balance.returncode == 0, balance.stderr
    assert balance.stdout.strip().endswith(": 27.50"), balance.stdout
    # A round amount keeps its decimals too.
    run_cli("publish", "arena", "Count the vowels", "--bounty", "7.5", env=env)
    assert run_cli("balance", env=env).stdout.strip().endswith(": 20.00")
