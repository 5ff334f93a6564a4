"""The proxy's HTTP routes, one module per family of endpoints."""
