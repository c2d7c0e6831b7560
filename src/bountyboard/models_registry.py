"""Imports every domain's tables so that Alembic and tests see the whole schema."""

from __future__ import annotations

from bountyboard import idempotency  # noqa: F401
from bountyboard.accounts import models as accounts_models  # noqa: F401
from bountyboard.benchhub import models as benchhub_models  # noqa: F401
from bountyboard.checks import models as checks_models  # noqa: F401
from bountyboard.events import models as events_models  # noqa: F401
from bountyboard.ledger import models as ledger_models  # noqa: F401
from bountyboard.market import models as market_models  # noqa: F401
from bountyboard.market.files import models as files_models  # noqa: F401
from bountyboard.oauth import models as oauth_models  # noqa: F401
from bountyboard.site import models as site_models  # noqa: F401
from bountyboard.storage.base import Base

metadata = Base.metadata
