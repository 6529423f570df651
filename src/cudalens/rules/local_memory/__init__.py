"""L. Local memory and registers: one module per catalog item."""
