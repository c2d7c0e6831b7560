"""Routes for test deployments only (``BOUNTYBOARD_ENABLE_TEST_CLOCK=true``).

The application mounts ``testing.router`` only when that setting is on; otherwise these paths do
not exist (404). None of them is in the OpenAPI document.
"""
