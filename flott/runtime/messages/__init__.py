"""Wire types of the RPC protocol between flott's components (data only, no logic)."""
