"""X. Host-device transfers: one module per catalog item."""
