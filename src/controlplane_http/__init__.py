"""HTTP entrypoint: Litestar app factory, controllers, wire types, error mapping."""

API_VERSION = "v0.3.0"
OPENAPI_VERSION = "1.0.0"
API_TITLE = "Agent Control Plane API"
