"""cudalens.hardware"""
