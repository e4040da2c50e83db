"""memeval.systems"""
