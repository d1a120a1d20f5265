"""Benchmarks behind `make bench`: they measure and print, they assert nothing."""
