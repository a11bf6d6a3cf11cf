"""The subcommands of `kcache`, one module each, registered in `kcache.cli.SUBCOMMANDS`."""
