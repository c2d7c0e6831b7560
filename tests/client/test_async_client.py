"""The asynchronous SDK: the same surface as the synchronous one, and the same loop against a live server."""

from __future__ import annotations

import asyncio
import inspect
import typing
from collections.abc import AsyncIterator, Generator, Iterator
from pathlib import Path

import pytest

from bountyboard.client import ApiError, AsyncClient, Client, MissingScopeError
from bountyboard.client.operations import Operations
from bountyboard.client.state import StateFile
from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer


def _public(cls: type) -> dict[str, object]:
    """The public methods, those of the shared base included, as read from the class."""
    return {name: member for name in dir(cls) if not name.startswith("_")
            and callable(member := getattr(cls, name))}


def test_both_clients_offer_every_operation_with_its_parameters_and_docstring() -> None:
    # The operations that make requests (generators); the state file's own two are methods of the base.
    operations = {name: member for name, member in inspect.getmembers(Operations, inspect.isfunction)
                  if not name.startswith("_")
                  and typing.get_origin(typing.get_type_hints(member)["return"]) is Generator}
    sync, asynchronous = _public(Client), _public(AsyncClient)
    assert set(sync) - {"close"} == set(asynchronous) - {"close"}
    assert set(sync) - set(operations) == {"close", "persisted_claims", "forget_claim"}
    for name, operation in operations.items():
        hints = typing.get_type_hints(operation)
        parameters = inspect.signature(operation).parameters.values()
        written = [(p.name, p.kind, p.default, hints.get(p.name, p.annotation)) for p in parameters]
        for client in (Client, AsyncClient):
            method = getattr(client, name)
            signature = inspect.signature(method, eval_str=True)
            assert [(p.name, p.kind, p.default, p.annotation) for p in signature.parameters.values()] == written, name
            assert inspect.getdoc(method) == inspect.getdoc(operation), name
        # The result a caller gets: what the operation returns (Op[T]), or iterates over (Stream[T]).
        returned = inspect.signature(getattr(Client, name)).return_annotation
        assert inspect.signature(getattr(AsyncClient, name)).return_annotation == (
            AsyncIterator[typing.get_args(returned)[0]] if typing.get_origin(returned) is Iterator else returned), name


def test_each_method_drives_its_operation_with_its_clients_io(tmp_path: Path) -> None:
    sync = Client("http://127.0.0.1:9", "k", state_path=tmp_path / "state.json")
    asynchronous = AsyncClient("http://127.0.0.1:9", "k", state=StateFile(None))
    for name in _public(AsyncClient).keys() - {"persisted_claims", "forget_claim"}:
        bound = getattr(asynchronous, name)
        returns = inspect.signature(bound).return_annotation
        # Everything that talks to the service is awaited (or an async iterator) in the async client, not in the other.
        assert inspect.iscoroutinefunction(bound) or typing.get_origin(returns) is AsyncIterator, name
        assert not inspect.iscoroutinefunction(getattr(sync, name)), name
    sync_init = set(inspect.signature(Client.__init__).parameters)
    assert sync_init <= set(inspect.signature(AsyncClient.__init__).parameters)


@pytest.fixture()
def market(admin: Admin) -> Marketplace:
    return Marketplace(admin)


def test_the_async_client_works_the_loop(server: LiveServer, market: Marketplace, tmp_path: Path) -> None:
    task = market.publish("arena")
    reader = market.operator.bot(scopes=["tasks:read", "claims:read"])

    async def work() -> None:
        async with AsyncClient(server.base_url, reader.key, state_path=tmp_path / "reader.json") as client:
            with pytest.raises(MissingScopeError):
                await client.claim(task["id"])
        async with AsyncClient(server.base_url, market.bot.key, state_path=tmp_path / "bot.json") as client:
            start = await client.latest_cursor()
            found = [seen async for seen in client.iter_tasks(status="published") if seen["id"] == task["id"]]
            assert found and found[0]["nextAction"] == "claim"
            eligible = (await client.list_tasks(eligible=True, page_size=100))["data"]
            assert [t["eligible"] for t in eligible if t["id"] == task["id"]] == [True]
            claim_id = (await client.claim(task["id"]))["claimId"]
            assert claim_id in client.persisted_claims()
            receipt = await client.submit(claim_id, "text", "quicksort")
            again = await client.submit(claim_id, "text", "quicksort", idempotency_key="fixed-key")
            retried = await client.submit(claim_id, "text", "quicksort", idempotency_key="fixed-key")
            assert again == retried and again["submissionId"] == receipt["submissionId"]
            status = await client.claim_status(claim_id)
            assert status["submissionId"] == receipt["submissionId"]
            kinds = [event["type"] async for event, _ in client.iter_events(after=start)]
            assert kinds == ["task.claimed", "claim.submitted"]
        with pytest.raises(ApiError) as refused:
            async with AsyncClient(server.base_url, reader.key, state_path=tmp_path / "r2.json",
                                   check_scopes=False) as client:
                await client.claim(task["id"])
        assert refused.value.status == 403 and refused.value.required_scopes == ["tasks:claim"]

    asyncio.run(work())
