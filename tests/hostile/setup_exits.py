"""A --kernel-setup callable that ends its process with status 0."""
import os


def install() -> None:
    os._exit(0)
