"""The tablescout application: the command line that chains catalog, search and workers.

Importing it (the first thing `tablescout` and `python -m tablescout` do) holds the first garbage collection back
until START_UP_ALLOCATIONS objects have been allocated (less those freed). A light command (`source list`, `note
list`, `card`) allocates about 61,000, nearly every one a module, class or function its imports make that lives
as long as the process; with the default threshold Python ran about 120 collections (15 to 18 ms) that only walked
them. A longer command passes the mark early on, and the usual thresholds apply from that first collection.
"""

import gc

START_UP_ALLOCATIONS = 200_000


def _collect_after_start_up() -> None:
    usual = gc.get_threshold()
    restored = False

    def restore(phase: str, info: dict[str, int]) -> None:
        nonlocal restored
        if phase == "start" and not restored:  # stays registered (removing it here would skip the next callback)
            restored = True
            gc.set_threshold(*usual)

    gc.callbacks.append(restore)
    gc.set_threshold(START_UP_ALLOCATIONS, *usual[1:])


_collect_after_start_up()
