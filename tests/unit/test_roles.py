"""The one rule of roles: an account acts in its own role, and an admin in every role."""

from __future__ import annotations

from itertools import product

from bountyboard.accounts.models import User
from bountyboard.accounts.scopes import Role
from bountyboard.market.models import Task
from bountyboard.market.permissions import may_review


def test_an_account_acts_in_its_own_role_and_an_admin_in_every_role() -> None:
    for role, wanted in product(Role, Role):
        assert role.acts_as(wanted) is (role is wanted or role is Role.ADMIN), (role, wanted)
    assert Role.PUBLISHER.acts_as(Role.REVIEWER, Role.PUBLISHER)
    assert not Role.OPERATOR.acts_as()
    assert Role.ADMIN.acts_as()


def test_the_marketplace_asks_the_rule() -> None:
    task = Task(id="task_1", publisher_id="usr_publisher")
    for role in Role:
        user = User(id="usr_other", email="x@example.com", display_name="x", role=role, disabled=False)
        assert may_review(user, task) is role.acts_as(Role.REVIEWER), role
