"""cudalens.report"""
