"""Validation: cudalens checking its own predictions against the hardware (not a guide chapter)."""
