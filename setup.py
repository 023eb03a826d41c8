"""Build the native runtime (native/ -> lazytorch._C) and map the top-level packages.

Everything else about the package is declared in pyproject.toml. Two things need code:

* extension modules are still described through setup();
* scheduler/ and codegen/ live at the top of the repository but install as
  ``lazytorch.scheduler`` / ``lazytorch.codegen`` (so nothing generic like ``codegen`` lands
  in site-packages). Package discovery does not follow a package-dir mapping, so the
  package list is derived from the mapping here, including any future subpackages.
"""

import compileall
import glob
import os

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import find_packages, setup

MAPPED = {"lazytorch.scheduler": "scheduler", "lazytorch.codegen": "codegen"}

packages = find_packages(include=["lazytorch", "lazytorch.*"])
for name, folder in MAPPED.items():
    packages.append(name)
    packages += [f"{name}.{sub}" for sub in find_packages(folder)]

ext_modules = [
    Pybind11Extension(
        "lazytorch._C",
        sorted(glob.glob("native/*.cpp")),
        cxx_std=17,
        extra_compile_args=["-O2"],
    ),
]


class build_ext_and_bytecode(build_ext):
    """Build the extension; in an editable install, also byte-compile the sources in place.

    A wheel install gets ``.pyc`` files from pip; an editable one does not, and where
    PYTHONDONTWRITEBYTECODE is set (common in containers and CI) every process then
    compiles each module it imports from source again: about 0.3 s of CPU per process for
    the modules a first materialization loads. Python still reads a valid ``.pyc`` under
    that flag, and ignores one whose source changed since (it checks the source's mtime),
    so an edit is never shadowed by stale bytecode.
    """

    def run(self) -> None:
        super().run()
        if self.inplace:
            here = os.path.dirname(os.path.abspath(__file__))
            for folder in ("lazytorch", *MAPPED.values()):
                compileall.compile_dir(os.path.join(here, folder), quiet=1)


setup(
    packages=packages,
    package_dir={"lazytorch": "lazytorch", **MAPPED},
    # the runtime headers every generated kernel includes
    package_data={"lazytorch.codegen": ["include/*.h"]},
    ext_modules=ext_modules,
    cmdclass={"build_ext": build_ext_and_bytecode},
)
