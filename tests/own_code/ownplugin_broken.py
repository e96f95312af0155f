"""A plugin that fails while it loads."""


def setup():
    raise RuntimeError("this plugin is broken")
