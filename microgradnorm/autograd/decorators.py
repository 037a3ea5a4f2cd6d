"""Grad modes as decorators: the function runs inside a fresh mode each call; a generator
function inside one at each resumption, with the caller's mode back between them (as
torch's ``_wrap_generator``)."""

import functools
import inspect
import warnings


def _grad_mode_decorator(fn, make):
    # fn runs inside a fresh make() each call; a generator function inside one at each
    # resumption, with the caller's mode back between them (torch's _wrap_generator)
    if not callable(fn):
        raise TypeError(f"expected a function to decorate, got {type(fn).__name__}")
    if inspect.isclass(fn):         # torch's deprecated form: its construction in the mode
        warnings.warn("Decorating classes is deprecated and will be disabled in future "
                      "versions. You should only decorate functions or methods. To preserve "
                      "the current behavior of class decoration, you can directly decorate "
                      "the `__init__` method and nothing else.", FutureWarning, stacklevel=3)
        cls = fn

        def fn(*args, **kwargs):
            return cls(*args, **kwargs)
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args, **kwargs):
            return (yield from _each_resumption_in(make, fn(*args, **kwargs)))
        return generator

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with make():
            return fn(*args, **kwargs)
    return wrapper


def _each_resumption_in(make, gen):
    # drives ``gen`` as ``yield from`` would, each step of it inside a fresh make()
    try:
        with make():
            response = gen.send(None)
        while True:
            try:
                request = yield response
            except GeneratorExit:
                with make():
                    gen.close()
                raise
            except BaseException as error:
                with make():
                    response = gen.throw(error)
            else:
                with make():
                    response = gen.send(request)
    except StopIteration as stop:
        return stop.value
