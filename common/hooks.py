"""`module:name` flags (--relabel, --exploration): import the module and return the named callable."""

import importlib

from common.guards import UserError


def load_hook(spec, flag, example):
    """`module:name` -> module.name, which must be callable; a clear error names the flag otherwise."""
    module, _, name = spec.partition(":")
    try:
        obj = getattr(importlib.import_module(module), name, None) if module and name else None
    except ImportError as e:
        raise UserError(f"{flag} {spec!r}: cannot import {module!r} ({e})") from None
    if not callable(obj):
        raise UserError(f"{flag} {spec!r} must name a function as `module:function`, e.g. {example}")
    return obj
