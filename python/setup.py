"""Builds the wheel of mvnmf: the Python package plus the C library of the
Rust crate (`libmvnmf.so`, the `mvnmf-capi` cdylib) compiled by cargo at
build time and placed next to the package, where `mvnmf/_lib.py` loads it
with ctypes.

Why plain setuptools with one cargo step, not setuptools-rust, maturin or
scikit-build-core: see README.md ("How the wheel is built"). In short, the
package calls the library through ctypes only, so the wheel is tagged
py3-none-<platform> (one wheel for every Python 3, PyPy included) and the
library keeps its own name; the other backends either name it after the
interpreter's extension suffix (setuptools-rust), ship no bare cdylib for
ctypes (maturin) or run the whole C install with CMake (scikit-build-core).

Where the Rust sources are:
* in a clone (`pip install ./python`): the workspace is the parent
  directory; cargo builds into its target/ (or $CARGO_TARGET_DIR), the
  directory `cargo build --release -p mvnmf-capi` uses, so an earlier build
  is reused;
* in the sdist (`python -m build python`): `rust/`, the crate sources copied
  there when the sdist was made (make_release_tree below). Only crates from
  crates.io are fetched at build time, by cargo, at the versions Cargo.lock
  pins (`--locked`).

Environment: $CARGO (default: cargo on the PATH, then ~/.cargo/bin/cargo),
$CARGO_TARGET_DIR as cargo reads it, $MVNMF_CARGO_PROFILE (default release).
"""
import json
import os
import shutil
import subprocess
import sys

from setuptools import Command, setup
from setuptools.command.build import build
from setuptools.command.sdist import sdist
from setuptools.dist import Distribution

try:  # setuptools >= 70.1 has its own; before, the `wheel` package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - depends on the build environment
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))

# What the sdist carries of the Rust workspace (paths relative to its root):
# the manifests and the lock, the core crate's sources, the C library's crate
# (capi/), and what cargo needs to load the workspace without building it:
# the manifest, build script and library root of the test crate ffi-tests
# (a workspace member) and tests/nalgebra.rs (a [[test]] the root manifest
# names). The header is generated from the sources, not read by the build.
RUST_FILES = ["Cargo.toml", "Cargo.lock", "README.md", "tests/nalgebra.rs",
              "capi/Cargo.toml", "capi/build.rs",
              "ffi-tests/Cargo.toml", "ffi-tests/build.rs", "ffi-tests/src/lib.rs"]
RUST_DIRS = ["src", "capi/src"]


def rust_root():
    """The Rust workspace: rust/ inside an sdist, else the clone's top level."""
    bundled = os.path.join(HERE, "rust")
    if os.path.isfile(os.path.join(bundled, "Cargo.toml")):
        return bundled
    parent = os.path.dirname(HERE)
    if os.path.isfile(os.path.join(parent, "capi", "Cargo.toml")):
        return parent
    raise RuntimeError("mvnmf: the Rust sources are neither in %s (an sdist) nor in %s (a clone)"
                       % (bundled, parent))


def library_name():
    if sys.platform == "win32":
        return "mvnmf.dll"
    if sys.platform == "darwin":
        return "libmvnmf.dylib"
    return "libmvnmf.so"


def find_cargo():
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if not cargo:
        home = os.environ.get("CARGO_HOME") or os.path.join(os.path.expanduser("~"), ".cargo")
        cand = os.path.join(home, "bin", "cargo")
        cargo = cand if os.path.isfile(cand) else None
    if not cargo:
        raise RuntimeError("mvnmf: building the wheel compiles the Rust library, and no cargo was "
                           "found (Rust >= 1.89: https://rustup.rs, or set $CARGO)")
    return cargo


class build_mvnmf_library(Command):
    """cargo build -p mvnmf-capi, then the cdylib into build_lib/mvnmf/."""

    description = "compile libmvnmf (the Rust crate's C ABI) with cargo"
    user_options = []

    def initialize_options(self):
        self.build_lib = None

    def finalize_options(self):
        self.set_undefined_options("build_py", ("build_lib", "build_lib"))

    def run(self):
        root = rust_root()
        cargo = find_cargo()
        profile = os.environ.get("MVNMF_CARGO_PROFILE", "release")
        manifest = os.path.join(root, "Cargo.toml")
        # --locked in an sdist (Cargo.lock is the one the sources were made
        # with); in a clone, cargo keeps the lock as `cargo build` does.
        locked = ["--locked"] if os.path.basename(root) == "rust" else []
        cmd = [cargo, "build", *locked, "--manifest-path", manifest, "-p", "mvnmf-capi",
               "--profile", profile]
        self.announce("running " + " ".join(cmd), level=2)
        subprocess.check_call(cmd)
        meta = subprocess.check_output([cargo, "metadata", "--format-version", "1", "--no-deps",
                                        *locked, "--manifest-path", manifest])
        target = json.loads(meta)["target_directory"]
        out = os.path.join(target, "debug" if profile in ("dev", "test") else profile, library_name())
        dest = os.path.join(self.build_lib, "mvnmf", library_name())
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        self.copy_file(out, dest)


class build_with_library(build):
    sub_commands = build.sub_commands + [("build_mvnmf_library", None)]


class sdist_with_rust(sdist):
    """The sdist with the Rust sources it builds from, under rust/."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        root = rust_root()
        dest = os.path.join(base_dir, "rust")
        for rel in RUST_FILES:
            src = os.path.join(root, rel)
            if not os.path.isfile(src):
                raise RuntimeError("mvnmf sdist: %s is missing" % src)
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy2(src, os.path.join(dest, rel))
        for rel in RUST_DIRS:
            shutil.copytree(os.path.join(root, rel), os.path.join(dest, rel),
                            ignore=shutil.ignore_patterns("target", "*.orig", "*.rej"))


class bdist_wheel_py3_platform(bdist_wheel):
    """A platform wheel (it carries a native library) for any Python 3: the
    library is loaded with ctypes and does not use the Python C API."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, plat = super().get_tag()
        return "py3", "none", plat


class BinaryDistribution(Distribution):
    def has_ext_modules(self):  # platlib, and a platform tag
        return True


setup(
    distclass=BinaryDistribution,
    cmdclass={
        "build": build_with_library,
        "build_mvnmf_library": build_mvnmf_library,
        "sdist": sdist_with_rust,
        "bdist_wheel": bdist_wheel_py3_platform,
    },
)
