"""D. Control flow: one module per catalog item."""
