"""The service layer: the library's calls over HTTP and MCP (``_mcp``, ``_mcp_http``)."""
