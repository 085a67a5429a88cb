"""Flink 2.3's /applications routes: an application per submitted program."""
