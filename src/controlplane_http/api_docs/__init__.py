"""The API's browsable documentation at /api/docs: Swagger UI from assets the package ships (no CDN)."""
