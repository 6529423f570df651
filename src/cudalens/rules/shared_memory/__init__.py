"""SH. Shared memory: one module per catalog item."""
