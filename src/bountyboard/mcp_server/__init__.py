"""The agent loop over the Model Context Protocol (official ``mcp`` SDK).

- :mod:`.tools`: the table of tools, each one REST operation through the SDK;
- :mod:`.server`: the MCP server (tools, resources, the loop prompt), independent of transport;
- :mod:`.http`: the streamable-HTTP endpoint at ``/mcp`` inside the application;
- :mod:`.stdio`: ``bountyboard mcp``, the same server over stdio against a remote service;
- :mod:`.files`: which local files its ``submit_result`` may upload (those under ``--files-root``).
"""
