"""memeval.bench.loaders"""
