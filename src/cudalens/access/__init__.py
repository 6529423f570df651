"""cudalens.access"""
