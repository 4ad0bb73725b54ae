"""The C path, ``urn8141._speedups``: optional. Where no C compiler is (or it fails),
the package installs without it and ``urn8141.check`` takes its Python path, which
gives the same answers (the tests hold the two equal)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "urn8141._speedups",
    sources=["src/urn8141/_speedups.c"],
    extra_compile_args=["-Wall", "-Wextra", "-Wno-unused-parameter",
                        "-fno-strict-overflow"],
    optional=True,  # a failed build leaves the pure-Python path, never a failed install
)])
