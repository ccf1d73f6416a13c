"""(being written)"""


def register(server) -> None:
    return None
