"""Copies the built libgenie.so into the package, so that an installed
`genie` finds its library next to itself, and libgenie_cuda.so (the CUDA
backend, loaded by libgenie.so from beside itself) when the build made it.

The library comes from $GENIE_BUILD_DIR, else ../build (where scripts/setup
builds).  Everything else is in pyproject.toml."""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class build_py_with_library(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        build_dir = os.environ.get("GENIE_BUILD_DIR", os.path.join(here, "..", "build"))
        src = os.path.join(build_dir, "libgenie.so")
        if not os.path.exists(src):
            raise SystemExit(f"genie: {src} not found: build the library first (scripts/setup), "
                             "or set GENIE_BUILD_DIR to the CMake build folder")
        dst_dir = os.path.join(self.build_lib, "genie")
        os.makedirs(dst_dir, exist_ok=True)
        shutil.copyfile(os.path.realpath(src), os.path.join(dst_dir, "libgenie.so"))
        cuda = os.path.join(build_dir, "libgenie_cuda.so")
        if os.path.exists(cuda):
            shutil.copyfile(os.path.realpath(cuda), os.path.join(dst_dir, "libgenie_cuda.so"))


setup(cmdclass={"build_py": build_py_with_library})
