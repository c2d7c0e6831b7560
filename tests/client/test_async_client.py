"""The asynchronous SDK: the same surface as the synchronous one, and the same loop against a live server."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest

from bountyboard.client import ApiError, AsyncClient, Client, MissingScopeError
from bountyboard.client.operations import Operations
from tests.client.loop import Marketplace
from tests.support.api import Admin
from tests.support.server import LiveServer


def _methods(cls: type) -> dict[str, object]:
    """The public methods, those of the shared base included, as read from the class."""
    return {name: member for name in dir(cls) if not name.startswith("_")
            and callable(member := getattr(cls, name))}


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {name: inspect.signature(member) for name, member in _methods(cls).items()}


def _comparable(signature: inspect.Signature) -> list[tuple[str, object, object]]:
    """Parameters (name, kind, default, annotation) and the return annotation with the async wrapping taken off."""
    shown = str(signature.return_annotation).replace("AsyncIterator[", "Iterator[")
    return [(p.name, p.kind, p.default, p.annotation) for p in signature.parameters.values()] + [
        ("return", shown, None, None)]


def test_both_clients_offer_the_same_methods_with_the_same_signatures() -> None:
    sync, asynchronous = _public(Client), _public(AsyncClient)
    assert set(sync) - {"close"} == set(asynchronous) - {"close"}
    for name, signature in sync.items():
        other = asynchronous[name]
        if name == "__init__":
            continue
        assert _comparable(signature) == _comparable(other), name
        assert inspect.getdoc(getattr(Client, name)) == inspect.getdoc(getattr(AsyncClient, name)), name
    # Everything that talks to the service is awaited (or an async iterator) in the async client.
    for name, member in _methods(AsyncClient).items():
        if name in {"persisted_claims", "forget_claim"}:
            continue
        returns = str(inspect.signature(member).return_annotation)
        assert inspect.iscoroutinefunction(member) or returns.startswith("AsyncIterator["), name
    sync_init = set(inspect.signature(Client.__init__).parameters)
    assert sync_init <= set(inspect.signature(AsyncClient.__init__).parameters)


def test_every_operation_is_a_method_of_both_clients_with_its_parameters() -> None:
    operations = {name: member for name, member in inspect.getmembers(Operations, inspect.isfunction)
                  if not name.startswith("_")}
    clients = _public(Client)
    assert set(operations) <= set(clients)
    for name, operation in operations.items():
        parameters = list(inspect.signature(operation).parameters.values())
        mine = list(clients[name].parameters.values())
        assert [(p.name, p.kind, p.default, p.annotation) for p in parameters] == \
            [(p.name, p.kind, p.default, p.annotation) for p in mine], name


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
