#!/usr/bin/env python3
"""Checks the objects of dimtensor::runtime's instruction-set levels
(src/cpu/kernels_<level>.cpp, dimtensor/backends/cpu/dispatch.hpp).

A level's kernels are compiled for a wider instruction set in a namespace of
their own (isa_avx2, isa_avx512).  Any other function such an object
defines as a weak symbol (an inline function, a template instance) may be
picked by the linker for every caller in the program, on any CPU: it must
hold no instruction beyond the baseline (no VEX or EVEX encoding, no ymm,
zmm or mask register).  A strong symbol is unique (the linker refuses a
second definition), so only weak ones are read.

    check_isa_objects.py --nm NM --objdump OBJDUMP OBJECT...

The other way round, each family of the level's kernels (the reductions'
reduce_chunk, the softmax's softmax_chunk, the interpreter's dense_pass,
attention_*) must have a function in the level's namespace that does hold
wider instructions: a kernel header included before the level's pragmas
would be baseline code under the level's name.

Objects whose file name has no kernels_avx2 or kernels_avx512 are skipped.
Prints what it read; exits 1 naming each offending function.
"""
import argparse
import re
import subprocess
import sys

LEVELS = {"kernels_avx2": "isa_avx2", "kernels_avx512": "isa_avx512"}
WIDE = re.compile(r"%[yz]mm\d|%k[0-7]\b")
FAMILIES = ("reduce_chunk", "softmax_chunk", "dense_pass", "attention_")


def weak_functions(nm, obj):
    out = subprocess.run([nm, "--defined-only", obj], check=True, capture_output=True, text=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("W", "V", "u", "i"):
            names.add(parts[2])
    return names


def disassembly(objdump, obj):
    """{symbol: [instruction mnemonics with operands]} of every function in obj."""
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "-w", obj], check=True, capture_output=True,
                         text=True).stdout
    funcs, current = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            current = funcs.setdefault(m.group(1), [])
            continue
        if current is not None and re.match(r"^\s+[0-9a-f]+:\s", line):
            current.append(line.split(":", 1)[1].strip())
    return funcs


def wide(instruction):
    mnemonic = instruction.split()[0] if instruction.split() else ""
    return mnemonic.startswith("v") or WIDE.search(instruction) is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--objdump", default="objdump")
    ap.add_argument("objects", nargs="+")
    args = ap.parse_args()
    bad, read = [], 0
    for obj in args.objects:
        level = next((ns for key, ns in LEVELS.items() if key in obj.rsplit("/", 1)[-1]), None)
        if level is None:
            continue
        read += 1
        weak = weak_functions(args.nm, obj)
        funcs = disassembly(args.objdump, obj)
        shared = sorted(name for name in weak if level not in name and name in funcs)
        wide_ones = [name for name in shared if any(wide(i) for i in funcs[name])]
        in_level = sum(1 for name in funcs if level in name)
        print(f"{obj}: {in_level} functions in {level}, {len(shared)} shared weak functions, "
              f"{len(wide_ones)} of them with wider instructions")
        bad += [(obj, name) for name in wide_ones]
        in_level_names = [n for n in funcs if level in n]
        demangled = subprocess.run(["c++filt"], input="\n".join(in_level_names), capture_output=True,
                                   text=True).stdout.splitlines()
        for family in FAMILIES:
            own = [n for n, d in zip(in_level_names, demangled) if family in d]
            if not any(any(wide(i) for i in funcs[n]) for n in own):
                bad.append((obj, f"(no function of the family {family} in {level} holds wider instructions)"))
        if in_level == 0:
            bad.append((obj, f"(no function in namespace {level}: the level's kernels are missing)"))
    if read == 0:
        print("no kernels_avx2 or kernels_avx512 object among the arguments")
        return 1
    for obj, name in bad:
        demangled = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip() or name
        print(f"FAIL {obj}: {demangled}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
