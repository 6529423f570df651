"""cudalens.compiled"""
