"""Use cases: async functions named after verbs, taking the ports and a command."""
