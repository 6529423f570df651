"""cudalens.occupancy"""
