"""Traces: the trace format read and written, expectations, replay and explanation."""
