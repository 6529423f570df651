"""I. Instructions: one module per catalog item."""
