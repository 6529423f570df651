"""T. Measuring: one module per catalog item."""
