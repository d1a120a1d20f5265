"""The service: HTTP API, MCP server, and the browser inspector (service.inspector)."""
