"""The tablescout application: the command line that chains catalog, search and workers."""
