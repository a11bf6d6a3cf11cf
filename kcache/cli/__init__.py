"""The subcommands of `kcache`, one module each, registered in `kcache.cli.main.SUBCOMMANDS`."""
