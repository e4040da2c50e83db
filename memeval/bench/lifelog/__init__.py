"""memeval.bench.lifelog"""
