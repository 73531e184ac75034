"""The generated bindings against the header and the library: drift fails here."""
import ctypes as C
import os
import re
import subprocess
import sys

import mvnmf
from mvnmf import bindings as B

from conftest import REPO


def test_generated_files_match_the_header():
    # python/mvnmf/_bindings.py and julia/MVNMF/src/bindings.jl, regenerated from
    # include/mvnmf.h, must equal the committed files.
    r = subprocess.run([sys.executable, os.path.join(REPO, "python", "gen_bindings.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_function_of_the_header_is_declared_and_exported():
    header = open(os.path.join(REPO, "include", "mvnmf.h")).read()
    declared = set(re.findall(r"^\S.*?\b(mvnmf_\w+)\(", header, flags=re.M)) - {
        n for n in re.findall(r"\(\*(mvnmf_\w+)\)", header)}
    assert declared == set(B.SIGNATURES), declared ^ set(B.SIGNATURES)
    for name in declared:
        assert getattr(mvnmf.lib, name).argtypes is not None or not B.SIGNATURES[name][1]


def test_abi_version_and_struct_sizes_agree_with_the_library():
    assert mvnmf.lib.mvnmf_abi_version() == B.MVNMF_ABI_VERSION
    for code, cls in B.STRUCT_CODES.items():
        assert mvnmf.lib.mvnmf_struct_size(code) == C.sizeof(cls), cls.__name__
    # An unknown code is 0, not a guess.
    assert mvnmf.lib.mvnmf_struct_size(10_000) == 0


def test_status_messages_come_from_the_library():
    for code, name in B.STATUS_NAMES.items():
        assert mvnmf.lib.mvnmf_status_message(code).decode(), name
