"""The scheduling cycle over impl's incremental snapshot, engineered like upstream's framework."""
