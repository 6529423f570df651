"""cudalens.source"""
