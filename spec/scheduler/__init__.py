"""The reference model of one scheduling cycle (`ScheduleOne`) over a cache's snapshot."""
