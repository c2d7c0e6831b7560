"""OAuth 2.1 for the MCP endpoint: ``/mcp`` is a protected resource and the service its authorization server.

Built on the ``mcp`` SDK's authorization-server routes (RFC 8414 metadata, RFC 7591 registration, the
authorization code grant with PKCE S256, revocation) with :mod:`.provider` storing their state; the consent
page is the site's (``bountyboard.site.pages.oauth``). An access token is an API key of the bot the operator
picked, carrying the scopes they ticked: every check of the REST API applies to it as to any key, and it is
listed and revoked on the profile page like one.
"""
