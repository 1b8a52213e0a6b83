"""The service's settings: `model` (what they are), `values` (one value read and checked), `loading` (the YAML file
and the environment, which wins)."""
